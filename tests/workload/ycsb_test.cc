// YCSB's generator with YCSB-E's scans and inserts: the shares of each kind
// of access, the scan lengths, and inserts left out of read-only
// transactions.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <set>
#include <string>

#include "common/config.h"
#include "common/zipf.h"
#include "engine/engine.h"
#include "storage/database.h"
#include "support/growing_window.h"
#include "workload/ycsb/ycsb.h"

namespace abyss {
namespace {

TEST(YcsbGenerate, ScansAndInsertsFollowTheirRatios) {
  Config cfg;
  cfg.threads = 2;
  YcsbConfig& y = cfg.settings<YcsbConfig>();
  y.rows = 10'000;
  y.req_per_txn = 4;
  y.primary_index = IndexType::Ordered;
  y.scan_ratio = 0.5;
  y.insert_ratio = 0.2;
  y.write_ratio = 0.5;
  y.max_scan_length = 100;
  y.read_only_txn_ratio = 0.25;
  const Ycsb ycsb(cfg);
  Rng rng(11);
  const auto qs = ycsb.generate(1, 10'000, rng);
  uint64_t scans = 0, inserts = 0, updates = 0, reads = 0, length_sum = 0, read_only_inserts = 0;
  uint32_t shortest = 1000, longest = 0;
  for (const auto& q : qs.queries) {
    for (uint32_t r = q.begin; r < q.begin + q.count; r++) {
      const Ycsb::Request& req = qs.requests[r];
      switch (req.op) {
        case Ycsb::Op::Scan:
          scans++;
          length_sum += req.length;
          shortest = std::min<uint32_t>(shortest, req.length);
          longest = std::max<uint32_t>(longest, req.length);
          EXPECT_LT(req.key, y.rows);
          break;
        case Ycsb::Op::Insert:
          inserts++;
          read_only_inserts += q.type == 1;
          break;
        case Ycsb::Op::Update:
          updates++;
          EXPECT_EQ(q.type, 0) << "a read-only transaction updates nothing";
          break;
        case Ycsb::Op::Read:
          reads++;
          break;
        case Ycsb::Op::LongRead:
          ADD_FAILURE() << "a long reader, though --long-reader-ratio is 0";
          break;
      }
    }
  }
  const auto total = static_cast<double>(scans + inserts + updates + reads);
  EXPECT_NEAR(static_cast<double>(scans) / total, 0.5, 0.02);
  // Inserts are drawn in read-write transactions only (three quarters).
  EXPECT_NEAR(static_cast<double>(inserts) / total, 0.2 * 0.75, 0.02);
  EXPECT_EQ(read_only_inserts, 0u);
  EXPECT_EQ(shortest, 1u);
  EXPECT_EQ(longest, 100u);
  EXPECT_NEAR(static_cast<double>(length_sum) / static_cast<double>(scans), 50.5, 2.5);
}

TEST(YcsbGenerate, WithoutScansOrInsertsEveryAccessReadsOrUpdates) {
  Config cfg;
  cfg.settings<YcsbConfig>().rows = 1000;
  const Ycsb ycsb(cfg);
  Rng rng(5);
  const auto qs = ycsb.generate(0, 1000, rng);
  for (const Ycsb::Request& req : qs.requests) {
    EXPECT_TRUE(req.op == Ycsb::Op::Read || req.op == Ycsb::Op::Update);
  }
}

// --materialize queried: the load makes no row, and each worker's queries
// load the rows they read or update, once each, with the contents a full
// load gives them; a key no query names has no row.
// A long reader is one request naming its first key, drawn in the share
// asked for; the other transactions are as without them.
TEST(YcsbGenerate, LongReadersFollowTheirRatio) {
  Config cfg;
  YcsbConfig& y = cfg.settings<YcsbConfig>();
  y.rows = 10'000;
  y.req_per_txn = 4;
  y.long_reader_ratio = 0.1;
  y.long_reader_rows = 5000;
  const Ycsb ycsb(cfg);
  Rng rng(3);
  constexpr uint32_t kQueries = 20'000;
  const auto qs = ycsb.generate(0, kQueries, rng);
  uint32_t long_readers = 0;
  for (const auto& q : qs.queries) {
    const Ycsb::Request& first = qs.requests[q.begin];
    if (q.type != Ycsb::kLongRead) {
      EXPECT_EQ(q.count, y.req_per_txn);
      EXPECT_NE(first.op, Ycsb::Op::LongRead);
      continue;
    }
    long_readers++;
    ASSERT_EQ(q.count, 1u);
    EXPECT_EQ(first.op, Ycsb::Op::LongRead);
    EXPECT_LT(first.key, y.rows);
  }
  EXPECT_NEAR(static_cast<double>(long_readers) / kQueries, 0.1, 0.01);
  EXPECT_EQ(Ycsb::max_accesses(cfg), 5000u) << "a long reader's rows, each an access";
}

TEST(YcsbValidate, ALongReaderLongerThanTheTableOrAcrossPartitionsIsRefused) {
  Config cfg;
  YcsbConfig& y = cfg.settings<YcsbConfig>();
  y.rows = 1000;
  y.long_reader_ratio = 0.1;
  y.long_reader_rows = 1000;
  EXPECT_EQ(Ycsb::validate(cfg), "");
  y.long_reader_rows = 1001;
  EXPECT_NE(Ycsb::validate(cfg).find("--long-reader-rows 1001: must be at most --rows (1000)"), std::string::npos);
  y.long_reader_rows = 10;
  y.partitions = 2;
  EXPECT_NE(Ycsb::validate(cfg).find("every partition"), std::string::npos);
  y.partitions = 1;
  y.materialize = Materialize::Queried;
  EXPECT_NE(Ycsb::validate(cfg).find("--materialize all"), std::string::npos);
  y.long_reader_ratio = 0;
  EXPECT_EQ(Ycsb::validate(cfg), "") << "without long readers their rows are not checked";
}

TEST(YcsbMaterialize, QueriedLoadsExactlyTheRowsTheQueriesName) {
  Config cfg;
  cfg.threads = 2;
  cfg.queries_per_worker = 64;
  cfg.settings<YcsbConfig>().rows = uint64_t{1} << 24;
  cfg.settings<YcsbConfig>().theta = 0.9;
  cfg.settings<YcsbConfig>().materialize = Materialize::Queried;
  Database db(RowLayout::for_meta(8, 8), cfg.storage);
  Ycsb ycsb(cfg);
  ycsb.load(db, 2, [](void*) {});
  std::set<uint64_t> named;
  for (uint32_t w = 0; w < 2; w++) {
    Rng rng(w + 1);
    for (const Ycsb::Request& r : ycsb.generate(w, cfg.queries_per_worker, rng).requests) named.insert(r.key);
  }
  uint64_t rows = 0;
  db.tables()[0]->index().for_each([&](uint64_t key, Row*) {
    rows++;
    EXPECT_TRUE(named.count(key)) << "key " << key << " was loaded but no query names it";
  });
  EXPECT_EQ(rows, named.size());
  EXPECT_LT(named.size(), 2u * 64 * 16 + 1);
  // The contents are a full load's: the key in the first column.
  const uint64_t key = *named.begin();
  const Row* row = db.tables()[0]->index().find(key);
  ASSERT_NE(row, nullptr);
  int64_t stored = 0;
  std::memcpy(&stored, db.tables()[0]->layout().data(row), sizeof stored);
  EXPECT_EQ(static_cast<uint64_t>(stored), key);
  cfg.settings<YcsbConfig>().insert_ratio = 0.1;
  EXPECT_NE(Ycsb::validate(cfg).find("--materialize"), std::string::npos);
}

// Long readers beside short writers at high skew: MVCC's read the versions
// as of their timestamps and never abort; Silo's validate every row they
// read at commit, and abort when a writer changed one meanwhile.
RunResult long_readers_run(const std::string& scheme, double duration_s) {
  Config cfg;
  cfg.cc = scheme;
  cfg.threads = 4;
  cfg.duration_s = duration_s;
  cfg.warmup_s = 0.01;
  YcsbConfig& y = cfg.settings<YcsbConfig>();
  y.rows = 2000;
  y.theta = 0.9;
  y.req_per_txn = 4;
  y.long_reader_ratio = 0.05;
  y.long_reader_rows = 1000;
  return run(cfg);
}

TEST(YcsbLongReaders, MvccsCommitWithoutAbortingWhileWritersRun) {
  // A window with no long reader (a twentieth of the mix, each a thousand
  // reads) says nothing: it grows until one committed.
  const RunResult r = test::grow_window(
      0.1, [](double duration_s) { return long_readers_run("mvcc", duration_s); },
      [](const RunResult& got) { return got.total.types[Ycsb::kLongRead][Counter::Commits] > 0; });
  const TypeStats& readers = r.total.types[Ycsb::kLongRead];
  EXPECT_GT(readers[Counter::Commits], 0u);
  EXPECT_EQ(readers[Counter::CcAborts], 0u);
  EXPECT_GT(r.total.types[Ycsb::kReadWrite][Counter::Commits], 0u) << "writers ran beside them";
}

TEST(YcsbLongReaders, SilosAbortWhenAWriterChangedARowTheyRead) {
  // An abort needs a writer to commit during a reader's thousand reads: a
  // run without one is repeated with a window four times longer.
  const RunResult r = test::grow_window(
      0.1, [](double duration_s) { return long_readers_run("silo", duration_s); },
      [](const RunResult& got) { return got.total.types[Ycsb::kLongRead][Counter::CcAborts] > 0; });
  EXPECT_GT(r.total.types[Ycsb::kLongRead][Counter::CcAborts], 0u);
}

}  // namespace
}  // namespace abyss
