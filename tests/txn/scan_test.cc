// Txn::scan under every registered scheme, on the fixture's table with an
// ordered primary index (keys 0..7, V = 100 + key), driven by one test thread:
// what a scan visits, in which order, with the transaction's own writes; the
// history it logs; and, under the schemes whose conflicts here never make a
// transaction wait, that a scan and an insert into its range cannot both
// commit when each also depends on the other, unless --phantom-protection is
// off.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "../cc/scheme_fixture.h"
#include "check/history.h"
#include "txn/history.h"
#include "txn/txn.h"

namespace abyss {
namespace {

using test::Fixture;

// (key, V) pairs in the order a scan visited them.
using Visits = std::vector<std::pair<uint64_t, int64_t>>;

// Table "s"'s columns K and V, the first two int64 fields of its data.
int64_t field(const char* data, int i) {
  int64_t v = 0;
  std::memcpy(&v, data + 8 * i, 8);
  return v;
}
void set_field(char* data, int i, int64_t v) { std::memcpy(data + 8 * i, &v, 8); }

template <class CC>
struct ScanFixture : Fixture<CC> {
  // Table "s" beside the fixture's: primary index on K (hash), secondary
  // ordered index "by_v" on V; rows K = 0..7 with V = 1000 - 10 * K.
  Table* by_v = nullptr;
  uint32_t by_v_index = 0;

  explicit ScanFixture(uint32_t participants = 2, const Config& config = Config{})
      : Fixture<CC>(config, participants, IndexType::Ordered) {
    Schema schema;
    schema.add_int64("K");
    schema.add_int64("V");
    by_v = &this->db.create_table("s", std::move(schema), 64);
    for (auto& w : this->workers) w->cursors.resize(this->db.tables().size());  // a cursor per table for inserts
    by_v->set_primary_key_of([](const char* data) { return static_cast<uint64_t>(field(data, 0)); });
    by_v_index = by_v->add_index("by_v", IndexType::Ordered, 64,
                                 [](const char* data) { return static_cast<uint64_t>(field(data, 1)); });
    RowCursor cursor;
    for (int64_t k = 0; k < 8; k++) {
      by_v->load_row(
          cursor, this->nodes, 64, static_cast<uint64_t>(k), [](void* m) { new (m) typename CC::RowMeta(); },
          [&](char* data) {
            set_field(data, 0, k);
            set_field(data, 1, 1000 - 10 * k);
          });
    }
  }

  // (V, K) pairs in the order a scan of by_v visited them.
  Rc scan_by_v(Txn<CC>& t, uint64_t lo, uint64_t hi, Visits& out, ScanOrder order = ScanOrder::Ascending) {
    out.clear();
    return t.scan(*by_v, by_v_index, lo, hi, 1000, order, [&](uint64_t key, const char* data) {
      EXPECT_EQ(static_cast<int64_t>(key), field(data, 1));
      out.emplace_back(key, field(data, 0));
      return true;
    });
  }
  Rc insert_s(Txn<CC>& t, int64_t k, int64_t v) {
    char* d = nullptr;
    const Rc rc = t.insert(*by_v, static_cast<uint64_t>(k), d);
    if (rc == Rc::Ok) {
      set_field(d, 0, k);
      set_field(d, 1, v);
    }
    return rc;
  }

  Rc scan(Txn<CC>& t, uint64_t lo, uint64_t hi, Visits& out, std::size_t limit = 1000,
          ScanOrder order = ScanOrder::Ascending) {
    out.clear();
    return t.scan(*this->table, lo, hi, limit, order, [&](uint64_t key, const char* data) {
      out.emplace_back(key, get_int64(data, this->value));
      return true;
    });
  }
};

template <class CC>
class Scan : public ::testing::Test {};
TYPED_TEST_SUITE(Scan, test::GtestTypes<test::AllSchemes>, test::SchemeName);

TYPED_TEST(Scan, VisitsTheRangeInEitherOrderUpToTheLimit) {
  ScanFixture<TypeParam> f;
  Visits v;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.scan(*f.t0, 2, 5, v), Rc::Ok);
  EXPECT_EQ(v, (Visits{{2, 102}, {3, 103}, {4, 104}, {5, 105}}));
  ASSERT_EQ(f.scan(*f.t0, 2, 5, v, 1000, ScanOrder::Descending), Rc::Ok);
  EXPECT_EQ(v, (Visits{{5, 105}, {4, 104}, {3, 103}, {2, 102}}));
  ASSERT_EQ(f.scan(*f.t0, 1, 100, v, 2), Rc::Ok);
  EXPECT_EQ(v, (Visits{{1, 101}, {2, 102}}));
  ASSERT_EQ(f.scan(*f.t0, 0, ~uint64_t{0}, v, 3, ScanOrder::Descending), Rc::Ok);  // to the end: the end row is no row
  EXPECT_EQ(v, (Visits{{7, 107}, {6, 106}, {5, 105}}));
  ASSERT_EQ(f.scan(*f.t0, 20, 30, v), Rc::Ok);
  EXPECT_TRUE(v.empty());
  ASSERT_EQ(f.scan(*f.t0, 5, 4, v), Rc::Ok);  // an empty range
  EXPECT_TRUE(v.empty());
  // The visitor stops it.
  std::vector<uint64_t> keys;
  ASSERT_EQ(f.t0->scan(*f.table, 0, 7, 100, ScanOrder::Ascending,
                       [&](uint64_t key, const char*) {
                         keys.push_back(key);
                         return key < 3;
                       }),
            Rc::Ok);
  EXPECT_EQ(keys, (std::vector<uint64_t>{0, 1, 2, 3}));
  EXPECT_EQ(f.t0->commit(), Rc::Ok);
}

TYPED_TEST(Scan, SeesTheTransactionsOwnInsertsUpdatesAndRemovals) {
  ScanFixture<TypeParam> f;
  Visits v;
  int64_t seen = 0;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.insert(*f.t0, 20, 120), Rc::Ok);
  ASSERT_EQ(f.insert(*f.t0, 10, 110), Rc::Ok);
  ASSERT_EQ(f.write(*f.t0, 3, 7, seen), Rc::Ok);
  ASSERT_EQ(f.t0->remove(*f.table, 4), Rc::Ok);
  ASSERT_EQ(f.scan(*f.t0, 2, 30, v), Rc::Ok);
  EXPECT_EQ(v, (Visits{{2, 102}, {3, 7}, {5, 105}, {6, 106}, {7, 107}, {10, 110}, {20, 120}}));
  ASSERT_EQ(f.scan(*f.t0, 2, 30, v, 1000, ScanOrder::Descending), Rc::Ok);
  EXPECT_EQ(v, (Visits{{20, 120}, {10, 110}, {7, 107}, {6, 106}, {5, 105}, {3, 7}, {2, 102}}));
  ASSERT_EQ(f.scan(*f.t0, 8, 15, v, 1000, ScanOrder::Descending), Rc::Ok);
  EXPECT_EQ(v, (Visits{{10, 110}}));
  ASSERT_EQ(f.t0->commit(), Rc::Ok);

  // Committed, they are what the next transaction sees.
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.scan(*f.t1, 2, 30, v), Rc::Ok);
  EXPECT_EQ(v, (Visits{{2, 102}, {3, 7}, {5, 105}, {6, 106}, {7, 107}, {10, 110}, {20, 120}}));
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
}

TYPED_TEST(Scan, ASecondaryIndexIsScannedInItsOrderAndKeptByInserts) {
  ScanFixture<TypeParam> f;
  Visits v;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.scan_by_v(*f.t0, 940, 975, v), Rc::Ok);
  EXPECT_EQ(v, (Visits{{940, 6}, {950, 5}, {960, 4}, {970, 3}}));
  ASSERT_EQ(f.insert_s(*f.t0, 20, 955), Rc::Ok);  // its own insert, in the secondary order
  ASSERT_EQ(f.scan_by_v(*f.t0, 940, 975, v, ScanOrder::Descending), Rc::Ok);
  EXPECT_EQ(v, (Visits{{970, 3}, {960, 4}, {955, 20}, {950, 5}, {940, 6}}));
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
  // Committed, the row is in both indexes.
  EXPECT_NE(f.by_v->index().find(20), nullptr);
  EXPECT_EQ(f.by_v->index(f.by_v_index).find(955), f.by_v->index().find(20));
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.scan_by_v(*f.t1, 950, 965, v), Rc::Ok);
  EXPECT_EQ(v, (Visits{{950, 5}, {955, 20}, {960, 4}}));
  // The rows it read are named by their primary keys.
  std::vector<uint64_t> keys;
  for (const auto& a : f.t1->accesses()) keys.push_back(a.key);
  std::vector<uint64_t> expected{5, 20, 4};
  if (!TypeParam::kTraits.declares_partitions) expected.push_back(3);  // 3 (V 970): the next key
  EXPECT_EQ(keys, expected);
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
}

TYPED_TEST(Scan, ACommittedRemovalTakesTheRowOutOfTheOrderedIndexes) {
  ScanFixture<TypeParam> f;
  Visits v;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t0->remove(*f.table, 3), Rc::Ok);
  ASSERT_EQ(f.t0->remove(*f.by_v, 5), Rc::Ok);  // V 950
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
  // MVCC keeps the entries: an older transaction may still read the rows.
  const bool kept = TypeParam::kTraits.keeps_versions;
  EXPECT_EQ(f.table->index().find(3) != nullptr, kept);
  EXPECT_EQ(f.by_v->index(f.by_v_index).find(950) != nullptr, kept);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.scan(*f.t1, 2, 4, v), Rc::Ok);
  EXPECT_EQ(v, (Visits{{2, 102}, {4, 104}}));
  ASSERT_EQ(f.scan_by_v(*f.t1, 940, 960, v), Rc::Ok);
  EXPECT_EQ(v, (Visits{{940, 6}, {960, 4}}));
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
}

TYPED_TEST(Scan, AnUpdateThatWouldMoveARowInASecondaryIndexIsRefused) {
  ScanFixture<TypeParam> f;
  char* d = nullptr;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t0->update(*f.by_v, 2, d), Rc::Ok);
  set_field(d, 1, 1);
  EXPECT_THROW((void)f.t0->commit(), std::logic_error);
}

TYPED_TEST(Scan, OfAHashIndexOrOfTheEndKeyIsRefused) {
  Fixture<TypeParam> hashed;
  ASSERT_EQ(hashed.t0->begin(false), Rc::Ok);
  EXPECT_THROW(
      (void)hashed.t0->scan(*hashed.table, 0, 7, 10, ScanOrder::Ascending, [](uint64_t, const char*) { return true; }),
      std::logic_error);
  hashed.t0->abort();
  ScanFixture<TypeParam> f;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  EXPECT_THROW((void)f.insert(*f.t0, ~uint64_t{0}, 1), std::logic_error);
  f.t0->abort();
}

TYPED_TEST(Scan, HistoryLogsTheRangeObservedAndTheVersionsSeen) {
  ScanFixture<TypeParam> f;
  const std::string part = (std::filesystem::temp_directory_path() /
                            ("abyss-scan-history-" + std::string(TypeParam::kTraits.name) + ".part"))
                               .string();
  f.workers[0]->history = std::make_unique<HistoryWriter>(part);
  Visits v;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.insert(*f.t0, 9, 109), Rc::Ok);
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
  const TxnId inserter = f.t0->commit_id();
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.scan(*f.t0, 6, 100, v), Rc::Ok);                            // the whole range
  ASSERT_EQ(f.scan(*f.t0, 3, 100, v, 2, ScanOrder::Descending), Rc::Ok);  // cut short: observed [7, 100]
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
  const TxnId scanner = f.t0->commit_id();
  f.workers[0]->history->close();

  std::ifstream in(part);
  std::string line;
  std::getline(in, line);
  std::getline(in, line);
  const std::string seen = "[[6,0],[7,0],[9," + std::to_string(inserter.value) + "]]";
  const std::string seen_down = "[[9," + std::to_string(inserter.value) + "],[7,0]]";
  EXPECT_NE(line.find("\"id\":" + std::to_string(scanner.value)), std::string::npos) << line;
  EXPECT_NE(line.find("\"scans\":[[\"t\",6,100," + seen + "],[\"t\",7,100," + seen_down + "]]"), std::string::npos)
      << line;
  in.close();
  const auto report = check::check_history_file(part);
  EXPECT_TRUE(report.serializable()) << report.summary();
  EXPECT_EQ(report.scans, 2u);
  std::filesystem::remove(part);
}

// ---- phantoms ---------------------------------------------------------------

// The schemes under which the interleaving below never makes a transaction
// wait, so one test thread can drive it: timestamp ordering, the optimistic
// schemes (single- and multi-version: HEKATON waits only for a commit in
// progress, and one thread's commits end before the next step), and 2PL
// whose conflicts abort at once.
constexpr bool conflicts_without_waiting(const cc::SchemeTraits& t) {
  return t.family == cc::Family::Optimistic || t.family == cc::Family::TimestampOrdering ||
         t.family == cc::Family::MultiVersionOptimistic || (t.family == cc::Family::Locking && !t.waits);
}

template <class CC>
class Phantom : public ::testing::Test {};

// Ends a transaction whose last step answered `rc`: commits it if that was
// Ok, aborts it otherwise. Answers 1 if it committed, else 0.
template <class CC>
int finish(Txn<CC>& t, Rc rc) {
  if (rc == Rc::Ok) rc = t.commit();
  if (rc == Rc::Ok) return 1;
  t.abort();
  return 0;
}
TYPED_TEST_SUITE(Phantom, test::GtestTypes<test::SchemesWhere<conflicts_without_waiting>>, test::SchemeName);

// t1 reads key 0 and inserts `insert_key`; t0, begun after it, scans [lo, hi]
// and writes key 0. t0 then precedes t1 (it missed t1's insert) and follows
// it (it overwrote what t1 read): not both may commit. Answers how many did.
template <class CC>
int both_commit(bool protection, uint64_t insert_key, uint64_t lo, uint64_t hi, ScanOrder order,
                uint64_t preloaded = 0) {
  ScanFixture<CC> f;
  for (auto& w : f.workers) w->phantom_protection = protection;
  Visits v;
  if (preloaded != 0) {  // a committed key above the range, the scan's next key
    EXPECT_EQ(f.t0->begin(false), Rc::Ok);
    EXPECT_EQ(f.insert(*f.t0, preloaded, 1), Rc::Ok);
    EXPECT_EQ(f.t0->commit(), Rc::Ok);
  }
  int64_t value = 0;
  EXPECT_EQ(f.t1->begin(false), Rc::Ok);
  EXPECT_EQ(f.read(*f.t1, 0, value), Rc::Ok);
  EXPECT_EQ(f.t0->begin(false), Rc::Ok);
  EXPECT_EQ(f.scan(*f.t0, lo, hi, v, 1000, order), Rc::Ok);
  EXPECT_EQ(f.insert(*f.t1, insert_key, 1), Rc::Ok);
  const int committed = finish(*f.t1, Rc::Ok);
  return committed + finish(*f.t0, f.write(*f.t0, 0, 5));
}

TYPED_TEST(Phantom, AScanAndAnInsertIntoItsRangeDoNotBothCommit) {
  // Past the last key (the next key is the end row), and below a committed
  // key (the next key is a row), in either order.
  EXPECT_LE(both_commit<TypeParam>(true, 20, 4, 50, ScanOrder::Ascending), 1);
  EXPECT_LE(both_commit<TypeParam>(true, 20, 4, 50, ScanOrder::Descending), 1);
  EXPECT_LE(both_commit<TypeParam>(true, 20, 4, 50, ScanOrder::Ascending, 30), 1);
  EXPECT_LE(both_commit<TypeParam>(true, 20, 4, 50, ScanOrder::Descending, 60), 1);
}

// An insert whose next key the scan did not read does not conflict with it.
TYPED_TEST(Phantom, AnInsertOutsideTheScannedGapsCommitsBesideTheScan) {
  EXPECT_EQ(both_commit<TypeParam>(true, 20, 31, 50, ScanOrder::Ascending, 30), 2);
}

// The same through a secondary index: the insert's next key there is
// written, whatever its primary key.
// With the history on, the checker sees the phantom when both commit: the
// scan's entry names the index and its range, the insert its key there.
TYPED_TEST(Phantom, AScanOfASecondaryIndexAndAnInsertIntoItsRangeDoNotBothCommit) {
  for (const bool protection : {true, false}) {
    ScanFixture<TypeParam> f;
    std::vector<std::string> parts;
    for (auto& w : f.workers) {
      w->phantom_protection = protection;
      parts.push_back(
          (std::filesystem::temp_directory_path() /
           ("abyss-phantom-" + std::string(TypeParam::kTraits.name) + ".part" + std::to_string(w->id.value)))
              .string());
      w->history = std::make_unique<HistoryWriter>(parts.back());
    }
    Visits v;
    int64_t value = 0;
    ASSERT_EQ(f.t1->begin(false), Rc::Ok);
    ASSERT_EQ(f.read(*f.t1, 0, value), Rc::Ok);
    ASSERT_EQ(f.t0->begin(false), Rc::Ok);
    ASSERT_EQ(f.scan_by_v(*f.t0, 940, 975, v), Rc::Ok);
    ASSERT_EQ(f.insert_s(*f.t1, 20, 945), Rc::Ok);
    int committed = finish(*f.t1, Rc::Ok);
    committed += finish(*f.t0, f.write(*f.t0, 0, 5));
    EXPECT_EQ(committed, protection ? 1 : 2) << (protection ? "protected" : "unprotected");
    for (auto& w : f.workers) w->history->close();
    const std::string merged = parts[0] + ".merged";
    ASSERT_EQ(HistoryWriter::merge(merged, parts), "");
    const auto report = check::check_history_file(merged);
    EXPECT_EQ(report.serializable(), protection) << report.summary();
    std::filesystem::remove(merged);
  }
}

// A removal joins the gap below the removed entry to the next one: the next
// entry inherits what the removed one stood for. t2 removes the entry a scan
// by t0 read as its next key, then t1 inserts into the scanned range, whose
// next key is now the one after: t0 and t1 still do not both commit.
TYPED_TEST(Phantom, ARemovedNextKeyStillOrdersTheScanAndALaterInsert) {
  ScanFixture<TypeParam> f(3);
  Visits v;
  int64_t value = 0;
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.read(*f.t1, 0, value), Rc::Ok);
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.scan_by_v(*f.t0, 935, 945, v), Rc::Ok);  // 940; next key 950
  EXPECT_EQ(v, (Visits{{940, 6}}));
  ASSERT_EQ(f.t2->begin(false), Rc::Ok);
  const int removed = finish(*f.t2, f.t2->remove(*f.by_v, 5));  // V 950
  int committed = finish(*f.t1, f.insert_s(*f.t1, 20, 943));
  committed += finish(*f.t0, f.write(*f.t0, 0, 5));
  EXPECT_LE(committed, 1) << "the removal " << (removed == 1 ? "committed" : "aborted");
}

// A row this transaction read, then another removed, is not missing to this
// one: its removal of the row either aborts or commits at most one of the two.
TYPED_TEST(Phantom, ARowRemovedByAnotherAfterThisOneReadItIsNotMissing) {
  ScanFixture<TypeParam> f;
  Visits v;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.scan(*f.t0, 3, 3, v), Rc::Ok);
  ASSERT_EQ(v, (Visits{{3, 103}}));
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  int committed = finish(*f.t1, f.t1->remove(*f.table, 3));
  const Rc rc = f.t0->remove(*f.table, 3);
  EXPECT_NE(rc, Rc::NotFound);
  committed += finish(*f.t0, rc);
  EXPECT_LE(committed, 1);
}

// The negative control: with next keys off, the insert slips past the scan.
TYPED_TEST(Phantom, WithoutProtectionBothCommit) {
  EXPECT_EQ(both_commit<TypeParam>(false, 20, 4, 50, ScanOrder::Ascending), 2);
  EXPECT_EQ(both_commit<TypeParam>(false, 20, 4, 50, ScanOrder::Descending, 60), 2);
}

// MVCC keeps a removed row's entries while a transaction older than the
// removal runs, which still reads the row through them; they go at a later
// begin of the remover once every worker's latest transaction is younger
// than the removal.
TEST(ScanMvcc, RemovedEntriesStayWhileAnOlderTransactionRunsThenGo) {
  Config config;
  config.settings<cc::MvccConfig>().refresh_every = 0;  // the low-water mark is recomputed at every begin
  ScanFixture<cc::Mvcc> f(2, config);
  int64_t value = 0;
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);  // older than the removal
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t0->remove(*f.table, 3), Rc::Ok);
  ASSERT_EQ(f.t0->remove(*f.by_v, 5), Rc::Ok);  // V 950
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
  EXPECT_NE(f.table->index().find(3), nullptr);
  EXPECT_NE(f.by_v->index(f.by_v_index).find(950), nullptr);
  ASSERT_EQ(f.read(*f.t1, 3, value), Rc::Ok);
  EXPECT_EQ(value, 103) << "the older transaction reads the row as it was";
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);  // a worker's mark is its latest transaction's timestamp
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
  EXPECT_EQ(f.table->index().find(3), nullptr);
  EXPECT_EQ(f.by_v->index(f.by_v_index).find(950), nullptr);
  EXPECT_NE(f.by_v->index(f.by_v_index).find(960), nullptr);
}

// A removed entry that a running scan read as its next key goes; the entry
// after it takes over its gap, so an older insert into the scanned range is
// still refused. Without that (the next row's read timestamp left as it
// was), the insert and the scan would both commit, the scan having missed
// the insert it follows.
TEST(ScanMvcc, AReclaimedNextKeyStillOrdersTheScanAndAnOlderInsert) {
  Config config;
  config.settings<cc::MvccConfig>().refresh_every = 0;
  ScanFixture<cc::Mvcc> f(3, config);
  Visits v;
  int64_t value = 0;
  ASSERT_EQ(f.t2->begin(false), Rc::Ok);
  ASSERT_EQ(f.t2->remove(*f.by_v, 5), Rc::Ok);  // V 950
  ASSERT_EQ(f.t2->commit(), Rc::Ok);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.read(*f.t1, 0, value), Rc::Ok);
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.scan_by_v(*f.t0, 935, 945, v), Rc::Ok);  // 940; next key the removed 950
  EXPECT_EQ(v, (Visits{{940, 6}}));
  ASSERT_EQ(f.t2->begin(false), Rc::Ok);  // every running transaction is younger than the removal
  ASSERT_EQ(f.t2->commit(), Rc::Ok);
  ASSERT_EQ(f.by_v->index(f.by_v_index).find(950), nullptr) << "the removed entry is gone";
  int committed = finish(*f.t1, f.insert_s(*f.t1, 20, 943));
  committed += finish(*f.t0, f.write(*f.t0, 0, 5));
  EXPECT_EQ(committed, 1);
}

}  // namespace
}  // namespace abyss
