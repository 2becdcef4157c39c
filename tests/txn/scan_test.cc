// Txn::scan under every registered scheme, on the fixture's table with an
// ordered primary index (keys 0..7, V = 100 + key), driven by one test thread:
// what a scan visits, in which order, with the transaction's own writes; the
// history it logs; and, under the schemes whose conflicts here never make a
// transaction wait, that a scan and an insert into its range cannot both
// commit when each also depends on the other, unless --phantom-protection is
// off.
#include <gtest/gtest.h>

#include <cstdint>
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

template <class CC>
struct ScanFixture : Fixture<CC> {
  ScanFixture() : Fixture<CC>(Config{}, 2, IndexType::Ordered) {}

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
// wait, so one test thread can drive it: timestamp ordering and the
// optimistic schemes, and 2PL whose conflicts abort at once.
constexpr bool conflicts_without_waiting(const cc::SchemeTraits& t) {
  return t.family == cc::Family::Optimistic || t.family == cc::Family::TimestampOrdering ||
         (t.family == cc::Family::Locking && !t.waits);
}

template <class CC>
class Phantom : public ::testing::Test {};
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
  int committed = 0;
  if (f.t1->commit() == Rc::Ok) {
    committed++;
  } else {
    f.t1->abort();
  }
  Rc rc = f.write(*f.t0, 0, 5);
  if (rc == Rc::Ok) rc = f.t0->commit();
  if (rc == Rc::Ok) {
    committed++;
  } else {
    f.t0->abort();
  }
  return committed;
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

// The negative control: with next keys off, the insert slips past the scan.
TYPED_TEST(Phantom, WithoutProtectionBothCommit) {
  EXPECT_EQ(both_commit<TypeParam>(false, 20, 4, 50, ScanOrder::Ascending), 2);
  EXPECT_EQ(both_commit<TypeParam>(false, 20, 4, 50, ScanOrder::Descending, 60), 2);
}

}  // namespace
}  // namespace abyss
