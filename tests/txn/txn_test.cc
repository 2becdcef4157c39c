// The transaction API on a small table, one worker per transaction, driven by
// one test thread so every interleaving is explicit.
#include "txn/txn.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>

#include "cc/no_wait/no_wait.h"
#include "cc/wait_die/wait_die.h"
#include "check/history.h"
#include "common/config.h"
#include "platform/ts_source.h"
#include "storage/database.h"

namespace abyss {
namespace {

template <class CC>
struct Fixture {
  using RowMeta = typename CC::RowMeta;
  Config cfg;
  Database db{RowLayout::for_meta(sizeof(RowMeta), alignof(RowMeta))};
  Table* table;
  Column value;
  platform::TsSource ts{TsAllocConfig{}};
  CC cc{cfg, 2};
  std::unique_ptr<Worker> w0;
  std::unique_ptr<Worker> w1;
  std::unique_ptr<Txn<CC>> t0;
  std::unique_ptr<Txn<CC>> t1;
  Arena nodes;
  RowCursor cursor;

  explicit Fixture(uint64_t rows = 4) {
    Schema s;
    s.add_int64("K");
    s.add_int64("V");
    table = &db.create_table("t", std::move(s), rows);
    value = table->schema().column("V");
    for (uint64_t k = 0; k < rows; k++) {
      Row* r = table->allocate(cursor);
      new (db.layout().meta(r)) RowMeta();
      set_int64(db.layout().data(r), table->schema().column("K"), static_cast<int64_t>(k));
      set_int64(db.layout().data(r), value, static_cast<int64_t>(100 + k));
      RowLayout::header(r).flags = RowHeader::kLive;
      table->index().insert(k, r, static_cast<HashIndex::Node*>(nodes.allocate(sizeof(HashIndex::Node))));
    }
    w0 = std::make_unique<Worker>(0, 2, 1, 1);
    w1 = std::make_unique<Worker>(1, 2, 1, 1);
    w0->ts = &ts;
    w1->ts = &ts;
    t0 = std::make_unique<Txn<CC>>(cc, *w0, db.layout());
    t1 = std::make_unique<Txn<CC>>(cc, *w1, db.layout());
  }

  int64_t committed_value(uint64_t key) {
    Row* r = table->index().find(key);
    return get_int64(db.layout().data(r), value);
  }
};

TEST(Txn, UpdateIsPrivateUntilCommit) {
  Fixture<cc::NoWait> f;
  char* d = nullptr;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t0->update(*f.table, 1, d), Rc::Ok);
  EXPECT_EQ(get_int64(d, f.value), 101);
  set_int64(d, f.value, 7);
  EXPECT_EQ(f.committed_value(1), 101);  // not installed yet
  const char* again = nullptr;
  ASSERT_EQ(f.t0->read(*f.table, 1, again), Rc::Ok);  // reads its own write
  EXPECT_EQ(get_int64(again, f.value), 7);
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
  EXPECT_EQ(f.committed_value(1), 7);
  EXPECT_EQ(RowLayout::header(f.table->index().find(1)).writer, f.t0->commit_id());
}

TEST(Txn, AbortDiscardsWrites) {
  Fixture<cc::NoWait> f;
  char* d = nullptr;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t0->update(*f.table, 2, d), Rc::Ok);
  set_int64(d, f.value, 55);
  f.t0->abort();
  EXPECT_EQ(f.committed_value(2), 102);
  // and the lock is gone: another transaction may write the row
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  EXPECT_EQ(f.t1->update(*f.table, 2, d), Rc::Ok);
  f.t1->abort();
}

TEST(Txn, MissingKeyIsNotFound) {
  Fixture<cc::NoWait> f;
  const char* d = nullptr;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  EXPECT_EQ(f.t0->read(*f.table, 99, d), Rc::NotFound);
  f.t0->abort();
}

TEST(Txn, InsertBecomesVisibleAtCommit) {
  Fixture<cc::NoWait> f;
  char* d = nullptr;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t0->insert(*f.table, 10, d), Rc::Ok);
  set_int64(d, f.value, 1010);
  EXPECT_EQ(f.table->index().find(10), nullptr);
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
  ASSERT_NE(f.table->index().find(10), nullptr);
  EXPECT_EQ(f.committed_value(10), 1010);
}

TEST(Txn, AbortedInsertLeavesNoRow) {
  Fixture<cc::NoWait> f;
  char* d = nullptr;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t0->insert(*f.table, 11, d), Rc::Ok);
  f.t0->abort();
  EXPECT_EQ(f.table->index().find(11), nullptr);
  int live = 0;
  f.table->for_each_live([&](const Row*) { live++; });
  EXPECT_EQ(live, 4);
}

TEST(Txn, RemovedRowReadsAsAbsent) {
  Fixture<cc::NoWait> f;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t0->remove(*f.table, 3), Rc::Ok);
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
  const char* d = nullptr;
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  EXPECT_EQ(f.t1->read(*f.table, 3, d), Rc::NotFound);
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
  int live = 0;
  f.table->for_each_live([&](const Row*) { live++; });
  EXPECT_EQ(live, 3);
}

//    T0     | T1     |
//    -----------------
//    BEGIN  |        |
//    W(1)   |        |
//           | BEGIN  |
//           | R(1)   |   <- NO_WAIT: conflict, T1 aborts at once
//    COMMIT |        |
//           | BEGIN  |   (restart)
//           | R(1)   |   <- sees T0's write
TEST(NoWait, ConflictingReadAbortsThenSeesTheCommittedWrite) {
  Fixture<cc::NoWait> f;
  char* w = nullptr;
  const char* r = nullptr;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t0->update(*f.table, 1, w), Rc::Ok);
  set_int64(w, f.value, 42);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  EXPECT_EQ(f.t1->read(*f.table, 1, r), Rc::Abort);
  f.t1->abort();
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
  ASSERT_EQ(f.t1->begin(true), Rc::Ok);
  ASSERT_EQ(f.t1->read(*f.table, 1, r), Rc::Ok);
  EXPECT_EQ(get_int64(r, f.value), 42);
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
}

// A read-only table is read in place: no lock is taken, so a writer's lock on
// an ordinary row (the conflict above) has no counterpart, and writes throw.
TEST(Txn, ReadOnlyTableIsReadWithoutConcurrencyControlAndRefusesWrites) {
  Fixture<cc::NoWait> f;
  f.table->set_read_only();
  const char* r0 = nullptr;
  const char* r1 = nullptr;
  char* w = nullptr;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.t0->read(*f.table, 1, r0), Rc::Ok);
  ASSERT_EQ(f.t1->read(*f.table, 1, r1), Rc::Ok);
  EXPECT_EQ(r0, r1) << "both read the row in place";
  EXPECT_EQ(get_int64(r0, f.value), 101);
  EXPECT_THROW((void)f.t0->update(*f.table, 1, w), std::logic_error);
  EXPECT_THROW((void)f.t0->remove(*f.table, 1), std::logic_error);
  EXPECT_THROW((void)f.t0->insert(*f.table, 9, w), std::logic_error);
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
}

TEST(NoWait, SharedReadersThenUpgradeOnlyWhenAlone) {
  Fixture<cc::NoWait> f;
  const char* r = nullptr;
  char* w = nullptr;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.t0->read(*f.table, 0, r), Rc::Ok);
  ASSERT_EQ(f.t1->read(*f.table, 0, r), Rc::Ok);
  EXPECT_EQ(f.t0->update(*f.table, 0, w), Rc::Abort);  // T1 also reads it
  f.t0->abort();
  ASSERT_EQ(f.t1->update(*f.table, 0, w), Rc::Ok);  // T1 is now the only reader
  set_int64(w, f.value, 9);
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
  EXPECT_EQ(f.committed_value(0), 9);
}

//    T0 (older) | T1 (younger) |
//    ---------------------------
//    W(0)       |              |
//               | W(0)         |   <- younger than the holder: dies
TEST(WaitDie, YoungerRequesterDies) {
  Fixture<cc::WaitDie> f;
  char* w = nullptr;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);  // takes the older timestamp
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.t0->update(*f.table, 0, w), Rc::Ok);
  EXPECT_EQ(f.t1->update(*f.table, 0, w), Rc::Abort);
  f.t1->abort();
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
}

TEST(WaitDie, RestartKeepsTheTimestamp) {
  Fixture<cc::WaitDie> f;
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  const uint64_t first = f.t1->meta().ts;
  f.t1->abort();
  ASSERT_EQ(f.t1->begin(true), Rc::Ok);
  EXPECT_EQ(f.t1->meta().ts, first);
  f.t1->abort();
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  EXPECT_GT(f.t1->meta().ts, first);
  f.t1->abort();
}

TEST(HistoryLog, LogsReadsAndWritesWithVersions) {
  Fixture<cc::NoWait> f;
  const std::string part = (std::filesystem::temp_directory_path() / "abyss-txn-history.part").string();
  f.w0->history = std::make_unique<HistoryWriter>(part);
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
  f.w0->history->close();

  std::ifstream in(part);
  std::string l1;
  std::string l2;
  std::getline(in, l1);
  std::getline(in, l2);
  EXPECT_EQ(
      l1, "{\"id\":" + std::to_string(first.value) + ",\"reads\":[[\"t\",0,0]],\"writes\":[[\"t\",1,0],[\"t\",9,0]]}");
  EXPECT_EQ(l2, "{\"id\":" + std::to_string(second.value) + ",\"reads\":[[\"t\",1," + std::to_string(first.value) +
                    "]],\"writes\":[[\"t\",1," + std::to_string(first.value) + "]]}");
  in.close();
  const auto report = check::check_history_file(part);
  EXPECT_TRUE(report.serializable()) << report.summary();
  std::filesystem::remove(part);
}

TEST(Dump, WritesOneCsvPerTableWithLiveRows) {
  Fixture<cc::NoWait> f(3);
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t0->remove(*f.table, 1), Rc::Ok);
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
  const auto dir = std::filesystem::temp_directory_path() / "abyss-dump-test";
  std::filesystem::remove_all(dir);
  ASSERT_EQ(f.db.dump(dir.string()), "");
  std::ifstream in(dir / "t.csv");
  std::stringstream s;
  s << in.rdbuf();
  EXPECT_EQ(s.str(), "K,V\n0,100\n2,102\n");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace abyss
