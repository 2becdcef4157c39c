// The transaction API under every registered scheme, on a small table with
// one worker per transaction, driven by one test thread so every interleaving
// is explicit. Where a scheme's traits change what the API promises, the test
// branches on them, never on the scheme's name.
#include "txn/txn.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "../cc/scheme_fixture.h"
#include "check/history.h"
#include "common/config.h"
#include "log/logger.h"
#include "log/record.h"
#include "platform/atomic.h"
#include "platform/thread.h"
#include "storage/database.h"

namespace abyss {
namespace {

using test::Fixture;
using test::kFixtureRows;

template <class CC>
class TxnApi : public ::testing::Test {};
TYPED_TEST_SUITE(TxnApi, test::GtestTypes<test::AllSchemes>, test::SchemeName);

// The suite covers the registry: a scheme registered in cc/registry.h is in
// this suite without an edit here.
TEST(TxnApiCoverage, EveryRegisteredSchemeIsInTheSuite) {
  std::vector<std::string> typed;
  [&]<class... S>(test::TypeList<S...>) { (typed.emplace_back(S::kTraits.name), ...); }(test::AllSchemes{});
  std::vector<std::string> registered;
  for (const cc::SchemeTraits& t : cc::Registry::kTraits) registered.emplace_back(t.name);
  EXPECT_EQ(typed, registered);
}

TYPED_TEST(TxnApi, UpdateIsPrivateOrHeldInPlaceUntilCommit) {
  Fixture<TypeParam> f;
  char* d = nullptr;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t0->update(*f.table, 1, d), Rc::Ok);
  EXPECT_EQ(get_int64(d, f.value), 101);
  set_int64(d, f.value, 7);
  if constexpr (TypeParam::kTraits.writes_in_place) {
    EXPECT_EQ(f.committed_value(1), 7);  // in the row already; no other transaction may reach it
  } else {
    EXPECT_EQ(f.committed_value(1), 101);  // not installed yet
  }
  const char* again = nullptr;
  ASSERT_EQ(f.t0->read(*f.table, 1, again), Rc::Ok);  // reads its own write
  EXPECT_EQ(get_int64(again, f.value), 7);
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
  EXPECT_EQ(f.committed_value(1), 7);
  EXPECT_EQ(RowLayout::header(f.row(1)).writer, f.t0->commit_id());
}

// Past a few dozen accesses Txn::find() looks rows up in an index: a
// transaction of hundreds still finds its own read of a row when it writes
// it, and its own write when it reads it again.
TYPED_TEST(TxnApi, ALongTransactionFindsItsOwnAccesses) {
  constexpr uint64_t kRows = 200;
  Fixture<TypeParam> f(Config{}, 2, IndexType::Hash, kRows);
  int64_t v = 0;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  for (uint64_t k = 0; k < kRows; k++) {
    ASSERT_EQ(f.read(*f.t0, k, v), Rc::Ok);
    ASSERT_EQ(v, static_cast<int64_t>(100 + k));
  }
  for (uint64_t k : {uint64_t{0}, uint64_t{100}, kRows - 1}) ASSERT_EQ(f.write(*f.t0, k, 7), Rc::Ok);
  EXPECT_EQ(f.t0->accesses().size(), kRows) << "each write found the row's read";
  ASSERT_EQ(f.read(*f.t0, 100, v), Rc::Ok);
  EXPECT_EQ(v, 7) << "reads its own write";
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
  EXPECT_EQ(f.committed_value(0), 7);
  EXPECT_EQ(f.committed_value(100), 7);
  EXPECT_EQ(f.committed_value(kRows - 1), 7);
  EXPECT_EQ(f.committed_value(1), 101);
}

// A transaction's accesses stop at the capacity its Txn was built with.
TEST(TxnCapacity, AnAccessPastTheCapacityIsRefused) {
  Fixture<cc::Silo> f(Config{}, 2, IndexType::Hash, 100);
  Txn<cc::Silo> t(f.cc, *f.workers[0], f.db.layout(), 64);
  int64_t v = 0;
  ASSERT_EQ(t.begin(false), Rc::Ok);
  for (uint64_t k = 0; k < 64; k++) ASSERT_EQ(f.read(t, k, v), Rc::Ok);
  try {
    (void)f.read(t, 64, v);
    ADD_FAILURE() << "a 65th access was taken";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "a transaction touched more than 64 rows");
  }
  t.abort();
}

TYPED_TEST(TxnApi, AbortDiscardsWrites) {
  Fixture<TypeParam> f;
  char* d = nullptr;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t0->update(*f.table, 2, d), Rc::Ok);
  set_int64(d, f.value, 55);
  f.t0->abort();
  EXPECT_EQ(f.committed_value(2), 102);
  // and whatever guarded the row is gone: another transaction may write it
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.t1->update(*f.table, 2, d), Rc::Ok);
  set_int64(d, f.value, 56);
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
  EXPECT_EQ(f.committed_value(2), 56);
}

TYPED_TEST(TxnApi, MissingKeyIsNotFound) {
  Fixture<TypeParam> f;
  const char* d = nullptr;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  EXPECT_EQ(f.t0->read(*f.table, 99, d), Rc::NotFound);
  f.t0->abort();
}

TYPED_TEST(TxnApi, InsertBecomesVisibleAtCommit) {
  Fixture<TypeParam> f;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.insert(*f.t0, 10, 1010), Rc::Ok);
  EXPECT_EQ(f.row(10), nullptr);
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
  ASSERT_NE(f.row(10), nullptr);
  EXPECT_EQ(f.committed_value(10), 1010);
  EXPECT_EQ(f.live_rows(), static_cast<int>(kFixtureRows) + 1);
}

TYPED_TEST(TxnApi, AbortedInsertLeavesNoRow) {
  Fixture<TypeParam> f;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.insert(*f.t0, 11, 1011), Rc::Ok);
  f.t0->abort();
  EXPECT_EQ(f.row(11), nullptr);
  EXPECT_EQ(f.live_rows(), static_cast<int>(kFixtureRows));
}

TYPED_TEST(TxnApi, RemovedRowReadsAsAbsent) {
  Fixture<TypeParam> f;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t0->remove(*f.table, 3), Rc::Ok);
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
  const char* d = nullptr;
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  EXPECT_EQ(f.t1->read(*f.table, 3, d), Rc::NotFound);
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
  EXPECT_EQ(f.live_rows(), static_cast<int>(kFixtureRows) - 1);
}

// read_with() passes the row to its function; a later read or update of the
// row sees the whole row (the copy is taken then, under an optimistic
// scheme, which read the row in place), and the update installs it whole.
TYPED_TEST(TxnApi, ReadWithPassesTheRowAndALaterReadOrUpdateSeesAllOfIt) {
  Fixture<TypeParam> f;
  const Column key = f.table->schema().column("K");
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  int64_t v1 = 0;
  int64_t v2 = 0;
  ASSERT_EQ(f.t0->read_with(*f.table, 1, [&](const SharedRow& r) { v1 = r.int64(f.value); }), Rc::Ok);
  ASSERT_EQ(f.t0->read_with(*f.table, 2, [&](const SharedRow& r) { v2 = r.int64(f.value); }), Rc::Ok);
  EXPECT_EQ(v1, 101);
  EXPECT_EQ(v2, 102);
  if constexpr (test::optimistic(TypeParam::kTraits)) {
    EXPECT_EQ(f.t0->accesses().back().local, nullptr) << "an optimistic scheme copied a row read_with() read";
  }
  bool called = false;
  EXPECT_EQ(f.t0->read_with(*f.table, 99, [&](const SharedRow&) { called = true; }), Rc::NotFound);
  EXPECT_FALSE(called);
  const char* again = nullptr;
  ASSERT_EQ(f.t0->read(*f.table, 1, again), Rc::Ok);
  EXPECT_EQ(get_int64(again, key), 1);
  EXPECT_EQ(get_int64(again, f.value), 101);
  char* d = nullptr;
  ASSERT_EQ(f.t0->update(*f.table, 2, d), Rc::Ok);
  EXPECT_EQ(get_int64(d, key), 2);
  set_int64(d, f.value, 7);
  int64_t own = 0;
  ASSERT_EQ(f.t0->read_with(*f.table, 2, [&](const SharedRow& r) { own = r.int64(f.value); }), Rc::Ok);
  EXPECT_EQ(own, 7) << "read_with() of a row the transaction wrote reads its write";
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
  EXPECT_EQ(f.committed_value(2), 7);
  EXPECT_EQ(get_int64(f.db.layout().data(f.row(2)), key), 2);
}

// Under an optimistic scheme read_with() read the row in place, uncopied: if
// a committer installs the row before the transaction reads or updates it
// again, the copy taken then is of another version, and the transaction
// aborts rather than see two versions of one row.
TYPED_TEST(TxnApi, AnInstallBetweenReadWithAndTheNextAccessOfTheRowAborts) {
  if constexpr (!test::optimistic(TypeParam::kTraits)) {
    GTEST_SKIP() << "only an optimistic scheme lets another transaction install a row this one read";
  } else {
    Fixture<TypeParam> f;
    for (const bool update_next : {false, true}) {
      const uint64_t k = update_next ? 4 : 3;
      ASSERT_EQ(f.t0->begin(false), Rc::Ok);
      int64_t seen = 0;
      ASSERT_EQ(f.t0->read_with(*f.table, k, [&](const SharedRow& r) { seen = r.int64(f.value); }), Rc::Ok);
      EXPECT_EQ(seen, static_cast<int64_t>(100 + k));
      char* d = nullptr;
      ASSERT_EQ(f.t1->begin(false), Rc::Ok);
      ASSERT_EQ(f.t1->update(*f.table, k, d), Rc::Ok);
      set_int64(d, f.value, 9);
      ASSERT_EQ(f.t1->commit(), Rc::Ok);
      const char* r = nullptr;
      EXPECT_EQ(update_next ? f.t0->update(*f.table, k, d) : f.t0->read(*f.table, k, r), Rc::Abort)
          << (update_next ? "update" : "read") << " of a row installed since read_with()";
      f.t0->abort();
    }
  }
}

// changes() counts the rows a transaction changes, each once, whatever
// order its accesses come in: the optimistic schemes' commits skip their
// lock, install and publish passes when it is zero.
TYPED_TEST(TxnApi, ChangesCountsEachRowChangedOnce) {
  Fixture<TypeParam> f;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  const char* r = nullptr;
  char* d = nullptr;
  ASSERT_EQ(f.t0->read_with(*f.table, 1, [](const SharedRow&) {}), Rc::Ok);
  ASSERT_EQ(f.t0->read(*f.table, 2, r), Rc::Ok);
  EXPECT_EQ(f.t0->changes(), 0U) << "reads";
  ASSERT_EQ(f.t0->update(*f.table, 2, d), Rc::Ok);
  EXPECT_EQ(f.t0->changes(), 1U) << "a read row updated";
  ASSERT_EQ(f.t0->update(*f.table, 3, d), Rc::Ok);
  ASSERT_EQ(f.t0->update(*f.table, 3, d), Rc::Ok);
  EXPECT_EQ(f.t0->changes(), 2U) << "a row updated twice";
  ASSERT_EQ(f.insert(*f.t0, 10, 1010), Rc::Ok);
  EXPECT_EQ(f.t0->changes(), 3U) << "an insert";
  ASSERT_EQ(f.t0->remove(*f.table, 3), Rc::Ok);
  EXPECT_EQ(f.t0->changes(), 3U) << "an updated row removed";
  ASSERT_EQ(f.t0->remove(*f.table, 1), Rc::Ok);
  EXPECT_EQ(f.t0->changes(), 4U) << "a read row removed";
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
  EXPECT_EQ(f.live_rows(), static_cast<int>(kFixtureRows) - 1) << "one insert and two removals committed";
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  EXPECT_EQ(f.t1->changes(), 0U) << "a new transaction";
  f.t1->abort();
}

// A transaction that changes nothing still validates what it read: one
// that read a row before another transaction overwrote it, and a second
// row that transaction wrote after it committed, saw half of its writes,
// and aborts under every optimistic scheme (a reader that saw only the old
// versions may instead be ordered before the writer, as TICTOC does).
TYPED_TEST(TxnApi, AReadOnlyTransactionThatSawHalfOfAnotherOnesWritesAborts) {
  if constexpr (!test::optimistic(TypeParam::kTraits)) {
    GTEST_SKIP() << "only an optimistic scheme lets another transaction install a row this one read";
  } else {
    Fixture<TypeParam> f;
    for (const bool in_place : {false, true}) {
      const uint64_t k = in_place ? 4 : 3;
      const uint64_t j = k + 2;
      ASSERT_EQ(f.t0->begin(false), Rc::Ok);
      const char* r = nullptr;
      if (in_place) {
        ASSERT_EQ(f.t0->read_with(*f.table, k, [](const SharedRow&) {}), Rc::Ok);
      } else {
        ASSERT_EQ(f.t0->read(*f.table, k, r), Rc::Ok);
      }
      char* d = nullptr;
      ASSERT_EQ(f.t1->begin(false), Rc::Ok);
      for (const uint64_t key : {k, j}) {
        ASSERT_EQ(f.t1->update(*f.table, key, d), Rc::Ok);
        set_int64(d, f.value, 9);
      }
      ASSERT_EQ(f.t1->commit(), Rc::Ok);
      int64_t seen = 0;
      const Rc rc = f.t0->read_with(*f.table, j, [&](const SharedRow& row) { seen = row.int64(f.value); });
      ASSERT_TRUE(rc == Rc::Ok || rc == Rc::Abort) << "the second read answered " << static_cast<int>(rc);
      if (rc == Rc::Ok) {
        EXPECT_EQ(seen, 9) << "the second row's new version";
        EXPECT_EQ(f.t0->commit(), Rc::Abort) << (in_place ? "read_with" : "read") << " of a row installed since";
      }
      f.t0->abort();
    }
  }
}

// A read-only table is read in place by two transactions at once: no scheme
// sees the read (the access set stays empty), and writes throw. A scheme that
// runs one transaction at a time gets the second reader after the first ends.
TYPED_TEST(TxnApi, ReadOnlyTableIsReadWithoutConcurrencyControlAndRefusesWrites) {
  constexpr bool kOneAtATime = test::runs_one_at_a_time(TypeParam::kTraits);
  Fixture<TypeParam> f;
  f.table->set_read_only();
  const char* r0 = nullptr;
  const char* r1 = nullptr;
  char* w = nullptr;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  if (!kOneAtATime) {
    ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  }
  ASSERT_EQ(f.t0->read(*f.table, 1, r0), Rc::Ok);
  EXPECT_EQ(r0, f.db.layout().data(f.row(1))) << "the row was not read in place";
  EXPECT_TRUE(f.t0->accesses().empty()) << "the read reached the scheme";
  EXPECT_EQ(get_int64(r0, f.value), 101);
  EXPECT_THROW((void)f.t0->update(*f.table, 1, w), std::logic_error);
  EXPECT_THROW((void)f.t0->remove(*f.table, 1), std::logic_error);
  EXPECT_THROW((void)f.t0->insert(*f.table, 9, w), std::logic_error);
  if (kOneAtATime) {
    ASSERT_EQ(f.t0->commit(), Rc::Ok);
    ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  }
  ASSERT_EQ(f.t1->read(*f.table, 1, r1), Rc::Ok);
  EXPECT_EQ(r0, r1) << "both read the row in place";
  EXPECT_TRUE(f.t1->accesses().empty());
  if (!kOneAtATime) {
    ASSERT_EQ(f.t0->commit(), Rc::Ok);
  }
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
}

TYPED_TEST(TxnApi, HistoryLogsReadsAndWritesWithVersions) {
  Fixture<TypeParam> f;
  const std::string part =
      (std::filesystem::temp_directory_path() / ("abyss-txn-history-" + std::string(TypeParam::kTraits.name) + ".part"))
          .string();
  f.workers[0]->history = std::make_unique<HistoryWriter>(part);
  char* w = nullptr;
  const char* r = nullptr;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t0->read(*f.table, 0, r), Rc::Ok);
  ASSERT_EQ(f.t0->update(*f.table, 1, w), Rc::Ok);
  ASSERT_EQ(f.t0->insert(*f.table, 9, w), Rc::Ok);
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
  const TxnId first = f.t0->commit_id();
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t0->read(*f.table, 1, r), Rc::Ok);
  ASSERT_EQ(f.t0->update(*f.table, 1, w), Rc::Ok);  // read, then write: both logged
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
  const TxnId second = f.t0->commit_id();
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t0->remove(*f.table, 9), Rc::Ok);
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
  const TxnId third = f.t0->commit_id();
  f.workers[0]->history->close();

  std::ifstream in(part);
  std::string l1;
  std::string l2;
  std::string l3;
  std::getline(in, l1);
  std::getline(in, l2);
  std::getline(in, l3);
  // An insert and a delete say so: they change what a scan of the range sees.
  EXPECT_EQ(l1, "{\"id\":" + std::to_string(first.value) +
                    ",\"reads\":[[\"t\",0,0]],\"writes\":[[\"t\",1,0],[\"t\",9,0,\"insert\"]]}");
  EXPECT_EQ(l2, "{\"id\":" + std::to_string(second.value) + ",\"reads\":[[\"t\",1," + std::to_string(first.value) +
                    "]],\"writes\":[[\"t\",1," + std::to_string(first.value) + "]]}");
  EXPECT_EQ(l3, "{\"id\":" + std::to_string(third.value) + ",\"reads\":[],\"writes\":[[\"t\",9," +
                    std::to_string(first.value) + ",\"delete\"]]}");
  in.close();
  const auto report = check::check_history_file(part);
  EXPECT_TRUE(report.serializable()) << report.summary();
  std::filesystem::remove(part);
}

TYPED_TEST(TxnApi, DumpWritesOneCsvPerTableWithLiveRows) {
  Fixture<TypeParam> f;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t0->remove(*f.table, 1), Rc::Ok);
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
  const auto dir = std::filesystem::temp_directory_path() / ("abyss-dump-test-" + std::string(TypeParam::kTraits.name));
  std::filesystem::remove_all(dir);
  ASSERT_EQ(f.db.dump(dir.string()), "");
  std::ifstream in(dir / "t.csv");
  std::stringstream s;
  s << in.rdbuf();
  EXPECT_EQ(s.str(), "K,V\n0,100\n2,102\n3,103\n4,104\n5,105\n6,106\n7,107\n");
  std::filesystem::remove_all(dir);
}

// Several threads: writers add 1 to rows 0 and 1 in one transaction, in either
// order, so committed data always has V(0) - 100 == V(1) - 101; readers read
// both and, when they commit, must have seen that invariant. Aborted attempts
// retry. Checks no lost update, consistent reads, no deadlock left unbroken,
// that a scheme whose traits say it never aborts does not, and (under TSan)
// that readers never race an install. `none` has no concurrency control to
// check: CheckerCatchesNone shows its runs are not serializable.
template <class CC>
class ConcurrentTxns : public ::testing::Test {};
TYPED_TEST_SUITE(ConcurrentTxns, test::GtestTypes<test::SchemesWhere<test::with_cc>>, test::SchemeName);

// One attempt of transaction n of thread i; answers its outcome and, for a
// reader, what it read.
template <class CC>
Rc increment_or_read(Fixture<CC>& f, Txn<CC>& t, uint32_t i, int n, bool restart, int64_t (&seen)[2]) {
  const bool writer = (n + i) % 2 == 0;
  Rc rc = t.begin(restart);
  if (writer) {
    char* d = nullptr;
    const uint64_t first = (n / 2 + i) % 2;
    for (uint64_t key : {first, 1 - first}) {
      if (rc == Rc::Ok) rc = t.update(*f.table, key, d);
      if (rc == Rc::Ok) set_int64(d, f.value, get_int64(d, f.value) + 1);
    }
  } else {
    for (uint64_t key : {uint64_t{0}, uint64_t{1}}) {
      if (rc == Rc::Ok) rc = f.read(t, key, seen[key]);
    }
  }
  return rc == Rc::Ok ? t.commit() : rc;
}

TYPED_TEST(ConcurrentTxns, IncrementsStayConsistent) {
  constexpr uint32_t kThreads = 4;
  constexpr int kTxnsPerThread = 1000;
  Fixture<TypeParam> f(Config{}, kThreads);
  if (TypeParam::kTraits.declares_partitions) {
    // Every transaction declares the partitions of both rows (YCSB's key % partitions).
    for (auto& t : f.txns) t->partitions() = {0, 1};
  }
  platform::Atomic<uint64_t> bad_reads{0};
  platform::Atomic<uint64_t> aborts{0};
  platform::run_threads(kThreads, false, [&](uint32_t i) {
    Txn<TypeParam>& t = *f.txns[i];
    for (int n = 0; n < kTxnsPerThread; n++) {
      int64_t seen[2] = {100, 101};
      bool restart = false;
      while (increment_or_read(f, t, i, n, restart, seen) != Rc::Ok) {
        t.abort();
        aborts.fetch_add(1, platform::memory_order_relaxed);
        restart = true;
      }
      if (seen[0] - 100 != seen[1] - 101) bad_reads.fetch_add(1, platform::memory_order_relaxed);
    }
  });
  EXPECT_EQ(bad_reads.load(platform::memory_order_relaxed), 0U);
  const int64_t writes = static_cast<int64_t>(kThreads) * kTxnsPerThread / 2;
  EXPECT_EQ(f.committed_value(0), 100 + writes);
  EXPECT_EQ(f.committed_value(1), 101 + writes);
  if (!TypeParam::kTraits.aborts) {
    EXPECT_EQ(aborts.load(platform::memory_order_relaxed), 0U) << "a scheme that never aborts aborted";
  }
  // Nothing the threads took is left held: a writer of both rows commits alone.
  ASSERT_EQ(f.add(*f.t0, 0, 1), Rc::Ok) << "row 0 is still held";
  ASSERT_EQ(f.add(*f.t0, 1, 1), Rc::Ok) << "row 1 is still held";
  EXPECT_EQ(f.committed_value(0), 101 + writes);
}

// With a log, an update names the columns it may change (Txn::update), and
// only those are compared with the row at commit: a checked build (debug,
// asan, tsan) refuses a change to another, which recovery would lose.
// A Silo fixture whose first worker logs (--log memory).
struct LoggedFixture {
  explicit LoggedFixture(IndexType primary = IndexType::Hash) : logger(settings(), 2, 1.0), f(Config{}, 2, primary) {
    f.workers[0]->log = &logger.worker(0);
  }
  ~LoggedFixture() { f.workers[0]->log = nullptr; }
  LoggedFixture(const LoggedFixture&) = delete;
  LoggedFixture& operator=(const LoggedFixture&) = delete;
  static LogSettings settings() {
    LogSettings s;
    s.policy = LogPolicy::Memory;
    return s;
  }
  log::Logger logger;
  Fixture<cc::Silo> f;
};

TEST(TxnColumns, ALoggedUpdateOfAColumnItDidNotNameIsRefusedInACheckedBuild) {
  if (!Txn<cc::Silo>::kCheckUndeclared) GTEST_SKIP() << "an unchecked (release) build compares the named columns only";
  LoggedFixture logged;
  Fixture<cc::Silo>& f = logged.f;
  char* d = nullptr;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t0->update(*f.table, 1, d, uint64_t{1} << 0), Rc::Ok);  // names K, column 0
  set_int64(d, f.value, 7);                                           // changes V, column 1
  EXPECT_THROW((void)f.t0->commit(), std::logic_error);
}

// The same update naming V commits.
TEST(TxnColumns, ALoggedUpdateOfTheColumnsItNamedCommits) {
  LoggedFixture logged;
  Fixture<cc::Silo>& f = logged.f;
  char* d = nullptr;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t0->update(*f.table, 1, d, uint64_t{1} << 1), Rc::Ok);
  set_int64(d, f.value, 7);
  EXPECT_EQ(f.t0->commit(), Rc::Ok);
  EXPECT_EQ(f.committed_value(1), 7);
  EXPECT_EQ(logged.logger.worker(0).totals().records, 1u);
}

// The (key, kind) of each write of the records worker 0 has not yet written.
std::vector<std::pair<uint64_t, log::WriteKind>> unwritten_writes(log::Logger& logger) {
  const std::string& buf = logger.worker(0).record_buffer();
  std::vector<std::pair<uint64_t, log::WriteKind>> out;
  std::size_t pos = 0;
  log::RecordView r;
  std::string why;
  while (pos < buf.size()) {
    if (log::read_record(buf, pos, r, why) != log::ReadStatus::Ok) {
      ADD_FAILURE() << why;
      break;
    }
    r.for_each_write([&](const log::WriteView& w) { out.emplace_back(w.key, w.kind); });
  }
  return out;
}

// Rows that are also removals' next keys, updated or removed by the same
// transaction, are logged: next keys are written at commit, after the
// body, and one the body wrote already stays a logged write (only a next
// key written for its own sake, its data unchanged, is left out).
TEST(TxnColumns, ANextKeyUpdatedOrRemovedLaterIsLogged) {
  LoggedFixture logged(IndexType::Ordered);
  Fixture<cc::Silo>& f = logged.f;
  char* d = nullptr;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t0->remove(*f.table, 2), Rc::Ok);  // next key 3
  ASSERT_EQ(f.t0->update(*f.table, 3, d), Rc::Ok);
  set_int64(d, f.value, 7);
  ASSERT_EQ(f.t0->remove(*f.table, 5), Rc::Ok);  // next key 6
  ASSERT_EQ(f.t0->remove(*f.table, 6), Rc::Ok);
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
  EXPECT_EQ(f.committed_value(3), 7);
  using Kind = log::WriteKind;
  const std::vector<std::pair<uint64_t, Kind>> expected = {
      {2, Kind::Delete}, {3, Kind::Update}, {5, Kind::Delete}, {6, Kind::Delete}};  // the fixture's row is small: whole
  EXPECT_EQ(unwritten_writes(logged.logger), expected);
}

}  // namespace
}  // namespace abyss
