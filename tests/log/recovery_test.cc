// Recovery rebuilds exactly the state a logging run ended in, under every
// scheme and both journal layouts; damaged journals stop it with a message.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "cc/schemes.h"
#include "check/tpcc.h"
#include "common/config.h"
#include "engine/engine.h"
#include "engine/recover.h"
#include "log/logger.h"
#include "log/record.h"
#include "storage/database.h"
#include "support/growing_window.h"
#include "support/run_abyss.h"
#include "workload/scan/scan.h"
#include "workload/tpcc/tpcc_config.h"

namespace abyss {
namespace {

namespace fs = std::filesystem;
using test::run_abyss;

// A dump's table as its sorted lines: the order rows are dumped in is the
// order of their slots, which loads and replays fill differently.
std::vector<std::string> sorted_lines(const fs::path& csv) {
  std::ifstream in(csv);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::sort(lines.begin(), lines.end());
  return lines;
}

void expect_same_dumps(const fs::path& a, const fs::path& b) {
  std::size_t tables = 0;
  for (const auto& e : fs::directory_iterator(a)) {
    tables++;
    const fs::path other = b / e.path().filename();
    ASSERT_TRUE(fs::exists(other)) << other;
    EXPECT_TRUE(sorted_lines(e.path()) == sorted_lines(other)) << e.path().filename() << " differs";
  }
  EXPECT_GT(tables, 0u);
}

struct Case {
  std::string scheme;
  JournalLayout journal;
};

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

std::vector<Case> cases() {
  std::vector<Case> out;
  // `none` is left out: two of its commits may install one row at once, and
  // the row in memory then mixes both while the journals hold each whole.
  // A sanitizer build runs three schemes of different families: its runs
  // are many times slower, and what it looks for is in the shared path.
  bool shared = false;
  for (const cc::SchemeTraits& t : cc::schemes()) {
    if (t.family == cc::Family::None) continue;
    if (kSanitized && t.name != "no_wait" && t.name != "mvcc" && t.name != "silo") continue;
    out.push_back({std::string(t.name), shared ? JournalLayout::Shared : JournalLayout::PerWorker});
    shared = !shared;
  }
  return out;
}

class Recovery : public testing::TestWithParam<Case> {
 protected:
  std::string stem_ = testing::TempDir() + "abyss_recovery_" + std::to_string(::getpid()) + "_" + GetParam().scheme;
  void TearDown() override {
    for (const char* part : {"_log", "_run", "_recovered", "_run2", "_recovered2"}) fs::remove_all(stem_ + part);
  }

  // Runs `c` with a log and a dump, recovers its log directory, and
  // compares the dumps.
  RecoverResult round_trip(Config c) {
    c.cc = GetParam().scheme;
    c.threads = 4;
    if (c.log.checkpoint_every_ms == 0) c.duration_s = 0.15;
    c.warmup_s = 0.02;
    c.log.policy = LogPolicy::File;
    c.log.journal = GetParam().journal;
    c.log.dir = stem_ + "_log";
    c.dump_dir = stem_ + "_run";
    // A loaded machine may finish no checkpoint in the time, or make no
    // commit durable in it (under ThreadSanitizer, with 4 workers on 2
    // cores): run longer. The same log directory is used again: its earlier
    // segments and checkpoints go (Logger::open).
    const RunResult r = test::grow_window(
        c.duration_s,
        [&](double duration_s) {
          c.duration_s = duration_s;
          fs::remove_all(c.dump_dir);
          return run(c);
        },
        [&](const RunResult& got) {
          return (c.log.checkpoint_every_ms == 0 || got.log.checkpoints > 0) && got.count(Counter::Acknowledged) > 0;
        },
        4, 2);
    EXPECT_GT(r.log.records, 10u);
    EXPECT_GT(r.count(Counter::Acknowledged), 0u);
    EXPECT_LE(r.count(Counter::Acknowledged), r.count(Counter::Commits));
    RecoverOptions o;
    o.dir = c.log.dir;
    o.dump_dir = stem_ + "_recovered";
    const RecoverResult rec = recover(o);
    if (c.log.checkpoint_every_ms == 0) {
      EXPECT_EQ(rec.records, r.log.records) << "a clean end leaves every record durable";
    } else {
      EXPECT_GT(r.log.checkpoints, 0u);
      EXPECT_FALSE(rec.checkpoint.empty());
      EXPECT_GT(rec.checkpoint_rows, 0u);
      // A segment goes once a checkpoint begins after its last record:
      // by the third, the first segments are gone (unless a loaded machine
      // allowed fewer checkpoints).
      EXPECT_LE(rec.records, r.log.records);
      if (r.log.checkpoints >= 3) {
        EXPECT_LT(rec.records, r.log.records) << "no journal segment was removed";
      }
    }
    EXPECT_EQ(rec.records_beyond, 0u);
    EXPECT_EQ(rec.torn_journals, 0u);
    expect_same_dumps(c.dump_dir, o.dump_dir);
    return rec;
  }
};

TEST_P(Recovery, TpccFullMixRecoversTheRunsLastStateAndStaysConsistent) {
  Config c;
  c.workload = "tpcc";
  c.settings<TpccConfig>().warehouses = 1;
  c.settings<TpccConfig>().schema = TpccSchema::Small;
  c.settings<TpccConfig>().mix = TpccMix{45, 43, 4, 4, 4};
  round_trip(c);
  const check::TpccReport report = check::check_tpcc_dir(stem_ + "_recovered");
  EXPECT_TRUE(report.all_pass()) << report.summary();
}

// Checkpoints taken while the workers run, and the journals truncated
// behind them: the checkpoint and what is left of the journals rebuild the
// same state.
TEST_P(Recovery, TpccWithCheckpointsRecoversTheRunsLastState) {
  if (kSanitized)
    GTEST_SKIP() << "a checkpoint of TPC-C's tables outlasts a sanitized run; the scan workload's test checkpoints";
  Config c;
  c.workload = "tpcc";
  c.settings<TpccConfig>().warehouses = 1;
  c.settings<TpccConfig>().schema = TpccSchema::Small;
  c.settings<TpccConfig>().mix = TpccMix{45, 43, 4, 4, 4};
  c.duration_s = 0.4;
  c.log.checkpoint_every_ms = 60;
  round_trip(c);
  const check::TpccReport report = check::check_tpcc_dir(stem_ + "_recovered");
  EXPECT_TRUE(report.all_pass()) << report.summary();
}

// Checkpoints of small tables with inserts and removals, many of them.
TEST_P(Recovery, ScanWithCheckpointsRecoversTheRunsLastState) {
  Config c;
  c.workload = "scan";
  c.settings<ScanConfig>().insert_ratio = 0.3;
  c.settings<ScanConfig>().delete_ratio = 0.3;
  c.duration_s = 0.4;
  c.log.checkpoint_every_ms = 20;
  round_trip(c);
}

// Inserts and removals in ordered indexes: a key's versions across slots.
TEST_P(Recovery, ScanWithInsertsAndRemovalsRecoversTheRunsLastState) {
  Config c;
  c.workload = "scan";
  c.settings<ScanConfig>().insert_ratio = 0.3;
  c.settings<ScanConfig>().delete_ratio = 0.3;
  round_trip(c);
}

// abyss run --recover: a run that starts from the log of the last one goes
// on from where that run's durable commits left the database, logs over
// the same directory, and is recovered in turn.
TEST_P(Recovery, ARecoveredRunGoesOnFromTheLoggedStateAndIsRecoveredInTurn) {
  Config c;
  c.workload = "tpcc";
  c.settings<TpccConfig>().warehouses = 1;
  c.settings<TpccConfig>().schema = TpccSchema::Small;
  c.settings<TpccConfig>().mix = TpccMix{45, 43, 4, 4, 4};
  round_trip(c);
  const std::size_t orders_before = sorted_lines(stem_ + "_run/order.csv").size();

  Config b = c;
  b.cc = GetParam().scheme;
  b.threads = 2;
  b.duration_s = 0.1;
  b.warmup_s = 0.02;
  b.log.policy = LogPolicy::File;
  b.log.journal = GetParam().journal;
  b.log.dir = stem_ + "_log";
  b.log.recover = true;
  b.dump_dir = stem_ + "_run2";
  // A loaded machine may make no commit durable in the short window: the
  // run goes again, longer, from the log the last one left, which holds the
  // first run's base and whatever the last one committed.
  bool first = true;
  const RunResult r = test::grow_window(
      b.duration_s,
      [&](double duration_s) {
        b.duration_s = duration_s;
        fs::remove_all(b.dump_dir);
        RunResult got = run(b);
        if (first) {
          EXPECT_GT(got.recovery.records_applied, 0u) << "the run did not start from the log";
        }
        first = false;
        return got;
      },
      [](const RunResult& got) { return got.count(Counter::Acknowledged) > 0; });
  EXPECT_GT(r.recovery.checkpoint_rows + r.recovery.records_applied, 0u) << "the last run did not start from the log";
  EXPECT_GT(r.count(Counter::Acknowledged), 0u);
  // ORDER only grows: the second run's holds the first run's orders.
  const std::size_t orders_after = sorted_lines(stem_ + "_run2/order.csv").size();
  EXPECT_GE(orders_after, orders_before);

  RecoverOptions o;
  o.dir = b.log.dir;
  o.dump_dir = stem_ + "_recovered2";
  const RecoverResult rec = recover(o);
  EXPECT_FALSE(rec.checkpoint.empty()) << "the recovered database is the second log's base";
  EXPECT_EQ(rec.records, r.log.records) << "the first run's journals went once the base was in place";
  EXPECT_EQ(rec.records_beyond, 0u);
  expect_same_dumps(b.dump_dir, o.dump_dir);
  const check::TpccReport report = check::check_tpcc_dir(o.dump_dir);
  EXPECT_TRUE(report.all_pass()) << report.summary();
}

INSTANTIATE_TEST_SUITE_P(EveryScheme, Recovery, testing::ValuesIn(cases()),
                         [](const testing::TestParamInfo<Case>& info) {
                           return info.param.scheme +
                                  (info.param.journal == JournalLayout::Shared ? "_shared" : "_per_worker");
                         });

// After recovery, the ordered indexes hold live rows only, as a run leaves
// them: a removal's record takes its row out of every index, so a run that
// goes on from the recovered database never meets a removed row there.
TEST(RecoveredDatabase, RemovedRowsAreOutOfTheOrderedIndexes) {
  const std::string dir = test::temp_path("abyss_recovered_db_log");
  Config c;
  c.workload = "scan";
  c.cc = "silo";
  c.threads = 2;
  c.duration_s = 0.15;
  c.warmup_s = 0.02;
  c.settings<ScanConfig>().insert_ratio = 0.3;
  c.settings<ScanConfig>().delete_ratio = 0.3;
  c.log.policy = LogPolicy::File;
  c.log.dir = dir;
  const RunResult r = run(c);
  ASSERT_GT(r.count(Counter::Commits), 0u);

  void (*init_row)(void*) = [](void*) {};
  Database db(RowLayout::for_meta(8, 8), c.storage, init_row);
  Scan workload(c);
  workload.load(db, 1, init_row);
  const Recovered rec = recover_into(db, init_row, dir, 2);
  EXPECT_GT(rec.result.writes_applied, 0u);
  uint64_t entries = 0;
  uint64_t removed = 0;
  for (const auto& table : db.tables()) {
    for (uint32_t i = 0; i < table->index_count(); i++) {
      if (!table->index(i).is_ordered()) continue;
      table->index(i).for_each([&](uint64_t, Row* row) {
        entries++;
        const uint32_t flags = RowLayout::header(row).flags;
        if ((flags & RowHeader::kLive) == 0 || (flags & RowHeader::kDeleted) != 0) removed++;
      });
    }
  }
  EXPECT_GT(entries, 0u);
  EXPECT_EQ(removed, 0u) << "removed rows left in an ordered index";
  fs::remove_all(dir);
}

std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// A log directory written by hand: `journals` as segment 0 of journals 0,
// 1, ..., all of them durable up to `epoch`, and a manifest with no flags.
void write_log(const std::string& dir, const std::vector<std::string>& journals, uint64_t epoch) {
  fs::remove_all(dir);
  fs::create_directories(dir);
  write_bytes(dir + "/manifest.json", R"({"format": 1, "args": []})");
  log::DurablePoint point;
  point.epoch = epoch;
  for (std::size_t j = 0; j < journals.size(); j++) {
    write_bytes(dir + "/" + log::journal_name(static_cast<uint32_t>(j), 0), journals[j]);
    point.journals.push_back({0, journals[j].size()});
  }
  write_bytes(dir + "/epoch", log::epoch_file_bytes(point));
}

// A table whose rows are (id, group), indexed by group too, and a log of
// two journals written by hand: key 7 inserted in group 1, removed, and
// inserted again in group 3; key 9 removed and inserted again in group 2,
// its removal read first. The secondary index ends as a run leaves it:
// each live row under the key its newest version computes, nothing else.
uint64_t id_of(const char* data) {
  uint64_t v = 0;
  std::memcpy(&v, data, 8);
  return v;
}
uint64_t group_key(const char* data) {
  uint64_t group = 0;
  std::memcpy(&group, data + 8, 8);
  return (group << 32) | id_of(data);
}

TEST(RecoveredDatabase, SecondaryIndexesHoldTheKeysOfTheNewestVersions) {
  const std::string dir = test::temp_path("abyss_recovered_secondary");
  auto row = [](uint64_t id, uint64_t group) {
    std::string r(16, '\0');
    std::memcpy(r.data(), &id, 8);
    std::memcpy(r.data() + 8, &group, 8);
    return r;
  };
  std::string journals[2] = {log::journal_header(0), log::journal_header(1)};
  auto record = [&](int j, uint64_t epoch, uint64_t tid, log::WriteKind kind, uint64_t key, const std::string& data) {
    log::RecordBuilder b(journals[j]);
    b.begin(epoch, tid);
    b.write(0, kind, key, data.data(), static_cast<uint32_t>(data.size()));
    b.end();
  };
  record(0, 1, 10, log::WriteKind::Insert, 7, row(7, 1));
  record(0, 1, 15, log::WriteKind::Delete, 9, "");
  record(0, 2, 30, log::WriteKind::Insert, 7, row(7, 3));
  record(1, 1, 20, log::WriteKind::Delete, 7, "");
  record(1, 2, 25, log::WriteKind::Insert, 9, row(9, 2));
  write_log(dir, {journals[0], journals[1]}, 2);

  void (*init_row)(void*) = [](void*) {};
  Database db(RowLayout::for_meta(8, 8), StorageOptions{}, init_row);
  Table& table = db.create_table("t", Schema().add_int64("id").add_int64("group"), 16, IndexType::Ordered);
  table.set_primary_key_of(id_of);
  ASSERT_EQ(table.add_index("by_group", IndexType::Ordered, 16, group_key), 1u);
  // One replay thread reads journal 0, then journal 1: each row starts
  // from the first version replay meets, not the newest.
  const Recovered rec = recover_into(db, init_row, dir, 1);
  EXPECT_EQ(rec.result.records_applied, 5u);
  std::vector<std::pair<uint64_t, uint64_t>> entries;  // secondary key, the row's id
  table.index(1).for_each([&](uint64_t key, Row* r) {
    if (key != Index::kEndKey) entries.emplace_back(key, id_of(db.layout().data(r)));
  });
  std::sort(entries.begin(), entries.end());
  EXPECT_EQ(entries,
            (std::vector<std::pair<uint64_t, uint64_t>>{{(uint64_t{2} << 32) | 9, 9}, {(uint64_t{3} << 32) | 7, 7}}));
  fs::remove_all(dir);
}

// Updates log the columns they change (format 3), and one row's writes
// sit in several journals: whichever journal replay reads first, each
// column ends at its newest version, a row a Columns write starts gets the
// rest from its insert, and a removal stays removed.
class ColumnReplay : public ::testing::TestWithParam<bool> {};

TEST_P(ColumnReplay, EachColumnEndsAtItsNewestVersionInAnyOrder) {
  const bool swapped = GetParam();
  const std::string dir = test::temp_path(swapped ? "abyss_columns_swapped" : "abyss_columns");
  // Columns id (int64), a (int64), b (8 chars).
  auto row = [](uint64_t id, uint64_t a, std::string_view b) {
    std::string r(24, '\0');
    std::memcpy(r.data(), &id, 8);
    std::memcpy(r.data() + 8, &a, 8);
    std::memcpy(r.data() + 16, b.data(), b.size());
    return r;
  };
  std::string journals[2] = {log::journal_header(0), log::journal_header(1)};
  const int x = swapped ? 1 : 0;
  const int y = 1 - x;
  auto whole = [&](int j, uint64_t epoch, uint64_t tid, log::WriteKind kind, uint64_t key, const std::string& data) {
    log::RecordBuilder b(journals[j]);
    b.begin(epoch, tid);
    b.write(0, kind, key, data.data(), static_cast<uint32_t>(data.size()));
    b.end();
  };
  // Column a's value (when `a`), then column b's (when `b`).
  auto columns = [&](int j, uint64_t epoch, uint64_t tid, uint64_t key, const uint64_t* a, std::string_view b) {
    log::RecordBuilder rb(journals[j]);
    rb.begin(epoch, tid);
    const uint64_t mask = (a != nullptr ? 0b010 : 0) | (b.empty() ? 0 : 0b100);
    char* p = rb.reserve_columns(0, key, mask, (a != nullptr ? 8 : 0) + (b.empty() ? 0 : 8));
    if (a != nullptr) std::memcpy(p, a, 8);
    if (!b.empty()) {
      std::string b8(8, '\0');
      b8.replace(0, b.size(), b);
      std::memcpy(p + (a != nullptr ? 8 : 0), b8.data(), 8);
    }
    rb.end();
  };
  const uint64_t a200 = 200;
  const uint64_t a250 = 250;
  const uint64_t a300 = 300;
  const uint64_t a5 = 5;
  const uint64_t a9 = 9;
  whole(x, 1, 10, log::WriteKind::Insert, 1, row(1, 100, "init"));
  columns(x, 1, 20, 1, &a200, "");
  columns(x, 2, 40, 1, nullptr, "bbbb");
  columns(y, 2, 30, 1, &a300, "");
  columns(y, 2, 25, 1, &a250, "late");  // older than both columns' newest
  columns(y, 2, 50, 2, &a5, "");        // before its insert, in the other journal
  whole(x, 2, 45, log::WriteKind::Insert, 2, row(2, 1, "two"));
  whole(x, 2, 60, log::WriteKind::Insert, 3, row(3, 1, "three"));
  whole(y, 2, 70, log::WriteKind::Delete, 3, "");
  columns(x, 2, 65, 3, &a9, "");
  write_log(dir, {journals[0], journals[1]}, 2);

  void (*init_row)(void*) = [](void*) {};
  Database db(RowLayout::for_meta(8, 8), StorageOptions{}, init_row);
  Table& table =
      db.create_table("t", Schema().add_int64("id").add_int64("a").add_chars("b", 8), 16, IndexType::Ordered);
  const Recovered rec = recover_into(db, init_row, dir, 1);
  EXPECT_EQ(rec.result.records_applied, 10u);
  auto contents = [&](uint64_t key) {
    Row* r = table.index().find(key);
    if (r == nullptr || (RowLayout::header(r).flags & RowHeader::kDeleted) != 0) return std::string("removed");
    const std::string data(db.layout().data(r), 24);
    return std::to_string(RowLayout::header(r).writer.value) + " " + data;
  };
  EXPECT_EQ(contents(1), "40 " + row(1, 300, "bbbb"));
  EXPECT_EQ(contents(2), "50 " + row(2, 5, "two"));
  EXPECT_EQ(contents(3), "removed");
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(JournalOrder, ColumnReplay, ::testing::Bool());

// A Columns write that names a column its table lacks, or whose bytes are
// not its columns', stops recovery with a line naming the journal.
TEST(RecoveredDatabase, AColumnsWriteThatDoesNotFitItsTableStopsRecovery) {
  for (const auto& [mask, bytes] : {std::pair<uint64_t, uint32_t>{0b1000, 8}, {0b010, 4}}) {
    const std::string dir = test::temp_path("abyss_columns_bad");
    std::string journal = log::journal_header(0);
    log::RecordBuilder b(journal);
    b.begin(1, 10);
    std::memset(b.reserve_columns(0, 1, mask, bytes), 0, bytes);
    b.end();
    write_log(dir, {journal}, 1);
    void (*init_row)(void*) = [](void*) {};
    Database db(RowLayout::for_meta(8, 8), StorageOptions{}, init_row);
    db.create_table("t", Schema().add_int64("id").add_int64("a").add_chars("b", 8), 16, IndexType::Ordered);
    try {
      (void)recover_into(db, init_row, dir, 1);
      ADD_FAILURE() << "mask " << mask << " of " << bytes << " bytes was replayed";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("journal-0-0.abj"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("columns"), std::string::npos) << e.what();
    }
    fs::remove_all(dir);
  }
}

// A log of format 1 (zlib's CRC-32), as builds before format 2 wrote it,
// is recovered by this one.
TEST(RecoveredDatabase, AFormatOneLogIsRecovered) {
  const std::string dir = test::temp_path("abyss_recovered_format1");
  std::string journal = log::journal_header(0, log::kFormatCrc32);
  log::RecordBuilder b(journal, log::kFormatCrc32);
  for (uint64_t id = 1; id <= 3; id++) {
    std::string row(16, '\0');
    std::memcpy(row.data(), &id, 8);
    b.begin(1, 10 * id);
    b.write(0, log::WriteKind::Insert, id, row.data(), 16);
    b.end();
  }
  write_log(dir, {journal}, 1);

  void (*init_row)(void*) = [](void*) {};
  Database db(RowLayout::for_meta(8, 8), StorageOptions{}, init_row);
  Table& table = db.create_table("t", Schema().add_int64("id").add_int64("group"), 16, IndexType::Ordered);
  const Recovered rec = recover_into(db, init_row, dir, 1);
  EXPECT_EQ(rec.result.records_applied, 3u);
  for (uint64_t id = 1; id <= 3; id++) {
    Row* row = table.index().find(id);
    ASSERT_NE(row, nullptr) << id;
    EXPECT_EQ(RowLayout::header(row).writer.value, 10 * id);
  }
  fs::remove_all(dir);
}

// The lines of `err` that are not notes (a loaded machine adds one about
// sharing its cores).
int error_lines(const std::string& err) {
  std::istringstream in(err);
  int n = 0;
  for (std::string line; std::getline(in, line);) n += line.find("abyss: note:") == std::string::npos ? 1 : 0;
  return n;
}

// A short logging run of the binary, for the damage tests below.
std::string logged_run(const std::string& name) {
  const std::string dir = test::temp_path(name);
  const auto o = run_abyss({"run", "--cc", "silo", "--threads", "2", "--rows", "10000", "--duration", "0.1", "--warmup",
                            "0", "--log", "file", "--log-dir", dir});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  return dir;
}

TEST(RecoveryDamage, AFlippedByteStopsRecoveryWithAMessageNamingTheJournal) {
  const std::string dir = logged_run("flip");
  const std::string journal = dir + "/journal-1-0.abj";
  const auto size = fs::file_size(journal);
  // Records of about 1 KB: the one the middle byte falls in has many after
  // it, so the flip is damage to what was durable, not a torn tail.
  ASSERT_GT(size, 16384u);
  {
    std::fstream f(journal, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(size / 2));
    char c = 0;
    f.read(&c, 1);
    f.seekp(static_cast<std::streamoff>(size / 2));
    c = static_cast<char>(c ^ 0x40);
    f.write(&c, 1);
  }
  const auto o = run_abyss({"recover", dir, "--dump", dir + "_dump"});
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_EQ(o.out, "");
  EXPECT_NE(o.err.find("journal-1-0.abj"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("recovery stopped"), std::string::npos) << o.err;
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
  EXPECT_FALSE(fs::exists(dir + "_dump")) << "nothing may be dumped from a damaged journal";
  fs::remove_all(dir);
}

// run --recover reads the log before it writes anything: a damaged journal
// stops it with the same line, and the log is left as it was.
TEST(RecoveryDamage, AFlippedByteStopsARecoveredRunBeforeItTouchesTheLog) {
  const std::string dir = logged_run("flip_run");
  const std::string journal = dir + "/journal-0-0.abj";
  const auto size = fs::file_size(journal);
  {
    std::fstream f(journal, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size / 2));
    f.put('\x11');
    f.put('\x22');
  }
  const auto o = run_abyss({"run", "--recover", "--log", "file", "--log-dir", dir, "--duration", "0.05"});
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_NE(o.err.find("journal-0-0.abj"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("recovery stopped"), std::string::npos) << o.err;
  EXPECT_EQ(error_lines(o.err), 1) << o.err;
  EXPECT_EQ(fs::file_size(journal), size) << "the damaged log was changed";
  fs::remove_all(dir);
}

// run --recover takes the logged workload: the flags that shape it may be
// left out, and one given with another value is refused before anything runs.
TEST(RecoveredRun, TakesTheLoggedWorkloadAndRefusesAnotherOne) {
  const std::string dir = logged_run("adopt");
  const auto other = run_abyss({"run", "--recover", "--log-dir", dir, "--rows", "5000", "--duration", "0.05"});
  EXPECT_EQ(other.exit_code, 2);
  EXPECT_NE(other.err.find("--rows 5000"), std::string::npos) << other.err;
  EXPECT_NE(other.err.find("--rows 10000"), std::string::npos) << other.err;
  EXPECT_EQ(error_lines(other.err), 1) << other.err;

  const auto none = run_abyss({"run", "--recover", "--duration", "0.05"});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("--log-dir"), std::string::npos) << none.err;
  const auto history =
      run_abyss({"run", "--recover", "--log-dir", dir, "--history", dir + "_h.jsonl", "--duration", "0.05"});
  EXPECT_EQ(history.exit_code, 2);
  EXPECT_NE(history.err.find("--history"), std::string::npos) << history.err;
  const auto missing = run_abyss({"run", "--recover", "--log-dir", dir + "_missing", "--duration", "0.05"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("manifest.json"), std::string::npos) << missing.err;

  // Under another scheme, without the workload's flags, logging again.
  const auto ok = run_abyss({"run", "--recover", "--log-dir", dir, "--log", "file", "--cc", "no_wait", "--threads", "2",
                             "--duration", "0.05", "--warmup", "0"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("recovered"), std::string::npos) << ok.out;
  const auto again = run_abyss({"recover", dir});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("checkpoint"), std::string::npos) << again.out;
  fs::remove_all(dir);
}

void flip_byte(const std::string& path, uint64_t at) {
  std::string bytes = read_bytes(path);
  bytes[at] = static_cast<char>(bytes[at] ^ 0x40);
  write_bytes(path, bytes);
}

// Where each record of a journal starts, and its epoch.
std::vector<std::pair<uint64_t, uint64_t>> records_of(const std::string& journal) {
  const std::string bytes = read_bytes(journal);
  std::vector<std::pair<uint64_t, uint64_t>> out;
  std::size_t pos = log::kJournalHeaderBytes;
  log::RecordView r;
  std::string why;
  for (std::size_t at = pos; log::read_record(bytes, pos, r, why) == log::ReadStatus::Ok; at = pos) {
    out.emplace_back(at, r.epoch);
  }
  return out;
}

// The durable epoch `abyss recover` printed.
uint64_t printed_durable_epoch(const std::string& out) {
  const std::size_t at = out.find("durable epoch");
  return at == std::string::npos ? 0 : std::stoull(out.substr(at + std::strlen("durable epoch")));
}

// The epoch file as written by copies `a` and `b`, each in its own slot.
std::string epoch_file_of(const log::DurablePoint& a, const log::DurablePoint& b) {
  std::string copies[2];
  copies[a.sequence % 2] = log::epoch_copy_bytes(a);
  copies[b.sequence % 2] = log::epoch_copy_bytes(b);
  return copies[0] + copies[1];
}

// A logged run's journal 0 and epoch file, with where the records of the
// journal's last epoch start.
struct LastEpoch {
  std::string dir;
  std::string journal;
  uint64_t epoch = 0;         // the journal's last
  uint64_t first = 0;         // the offset of that epoch's first record
  uint64_t before_first = 0;  // and of the record before it
  log::DurablePoint point;    // the epoch file's
};

void last_epoch_of(const std::string& name, LastEpoch& run) {
  run.dir = logged_run(name);
  run.journal = run.dir + "/journal-0-0.abj";
  const auto records = records_of(run.journal);
  ASSERT_GT(records.size(), 2u);
  run.epoch = records.back().second;
  std::size_t i = 0;
  while (records[i].second != run.epoch) i++;
  ASSERT_NE(i, 0u) << "the journal's records are all of one epoch";
  run.first = records[i].first;
  run.before_first = records[i - 1].first;
  std::string note;
  ASSERT_EQ(log::parse_epoch_file(read_bytes(run.dir + "/epoch"), run.point, note), "");
}

// A copy of the epoch file written beside the syncs of the journal bytes
// it names (--fsync group, per-worker journals) may outlive them in a
// crash: recovery then uses the other copy, and says so. A copy written
// after its journals' syncs, naming bytes that are not there, is damage.
TEST(RecoveryDamage, ACopyWrittenBesideJournalBytesThatDidNotLandGivesWayToTheOther) {
  LastEpoch run;
  ASSERT_NO_FATAL_FAILURE(last_epoch_of("beside", run));
  // The older copy: durable to the epoch before the journal's last.
  log::DurablePoint older = run.point;
  older.sequence = run.point.sequence + 1;
  older.epoch = run.epoch - 1;
  older.journals[0].bytes = run.first;
  older.beside = false;
  // The newer: written beside a sync of bytes the crash cut off.
  log::DurablePoint newer = run.point;
  newer.sequence = run.point.sequence + 2;
  newer.epoch = run.epoch + 1;
  newer.journals[0].bytes = fs::file_size(run.journal) + 300;
  newer.beside = true;
  write_bytes(run.dir + "/epoch", epoch_file_of(older, newer));
  const auto fell_back = run_abyss({"recover", run.dir});
  EXPECT_EQ(fell_back.exit_code, 0) << fell_back.err;
  EXPECT_EQ(printed_durable_epoch(fell_back.out), run.epoch - 1) << fell_back.out;
  EXPECT_NE(fell_back.out.find("not synced before the crash"), std::string::npos) << fell_back.out;
  EXPECT_NE(fell_back.out.find("journal-0-0.abj holds " + std::to_string(fs::file_size(run.journal))),
            std::string::npos)
      << fell_back.out;

  // A record in the bytes only the newer copy names, damaged: the same.
  newer.journals[0].bytes = fs::file_size(run.journal);
  write_bytes(run.dir + "/epoch", epoch_file_of(older, newer));
  const std::string intact = read_bytes(run.journal);
  flip_byte(run.journal, run.first + 20);
  const auto torn = run_abyss({"recover", run.dir});
  EXPECT_EQ(torn.exit_code, 0) << torn.err;
  EXPECT_EQ(printed_durable_epoch(torn.out), run.epoch - 1) << torn.out;
  EXPECT_NE(torn.out.find("journal-0-0.abj, record at byte " + std::to_string(run.first)), std::string::npos)
      << torn.out;

  // Whole, the newer copy holds.
  write_bytes(run.journal, intact);
  const auto whole = run_abyss({"recover", run.dir});
  EXPECT_EQ(whole.exit_code, 0) << whole.err;
  EXPECT_EQ(printed_durable_epoch(whole.out), run.epoch + 1) << whole.out;
  EXPECT_EQ(whole.out.find("not synced before the crash"), std::string::npos) << whole.out;

  // Not written beside: bytes it names that are not there are damage.
  newer.journals[0].bytes = fs::file_size(run.journal) + 300;
  newer.beside = false;
  write_bytes(run.dir + "/epoch", epoch_file_of(older, newer));
  const auto damaged = run_abyss({"recover", run.dir});
  EXPECT_EQ(damaged.exit_code, 2) << damaged.out;
  EXPECT_NE(damaged.err.find("recovery stopped"), std::string::npos) << damaged.err;
  fs::remove_all(run.dir);
}

// A finished run made everything durable: a record cut short at the end of
// a journal was durable, so it is damage, not a crash's torn write.
TEST(RecoveryDamage, ADurableLastRecordCutShortStopsRecovery) {
  const std::string dir = logged_run("cut");
  const std::string journal = dir + "/journal-0-0.abj";
  const auto records = records_of(journal);
  ASSERT_GT(records.size(), 2u);
  fs::resize_file(journal, fs::file_size(journal) - 3);
  const auto o = run_abyss({"recover", dir});
  EXPECT_EQ(o.exit_code, 2) << o.out;
  EXPECT_NE(o.err.find("journal-0-0.abj, record at byte " + std::to_string(records.back().first)), std::string::npos)
      << o.err;
  EXPECT_NE(o.err.find("of epoch " + std::to_string(records.back().second)), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("durable"), std::string::npos) << o.err;
  EXPECT_EQ(error_lines(o.err), 1) << o.err;
  fs::remove_all(dir);
}

// The log of a run cut off as a crash cuts it: its epoch file says journal
// 0 is durable up to the records of its last epoch, which are never
// acknowledged. A byte changed among those is a torn tail; the same byte
// changed before that point is damage.
TEST(RecoveryDamage, OnlyTheRecordsAfterTheDurablePointCanBeATornTail) {
  LastEpoch run;
  ASSERT_NO_FATAL_FAILURE(last_epoch_of("torn", run));
  run.point.epoch = run.epoch - 1;
  run.point.journals[0].bytes = run.first;
  run.point.sequence += 2;
  write_bytes(run.dir + "/epoch", log::epoch_file_bytes(run.point));
  const std::string intact = read_bytes(run.journal);

  flip_byte(run.journal, fs::file_size(run.journal) - 5);
  const auto torn = run_abyss({"recover", run.dir});
  EXPECT_EQ(torn.exit_code, 0) << torn.err;
  EXPECT_NE(torn.out.find("torn"), std::string::npos) << torn.out;
  EXPECT_NE(torn.out.find("journal-0-0.abj"), std::string::npos) << torn.out;

  write_bytes(run.journal, intact);
  flip_byte(run.journal, run.first - 5);
  const auto damaged = run_abyss({"recover", run.dir});
  EXPECT_EQ(damaged.exit_code, 2) << damaged.out;
  EXPECT_NE(damaged.err.find("journal-0-0.abj, record at byte " + std::to_string(run.before_first)), std::string::npos)
      << damaged.err;
  EXPECT_NE(damaged.err.find("to epoch " + std::to_string(run.epoch - 1)), std::string::npos) << damaged.err;

  // --salvage recovers what comes before the damage and says what it dropped.
  const auto salvaged = run_abyss({"recover", run.dir, "--salvage"});
  EXPECT_EQ(salvaged.exit_code, 0) << salvaged.err;
  EXPECT_NE(salvaged.out.find("salvaged"), std::string::npos) << salvaged.out;
  EXPECT_NE(salvaged.out.find("journal-0-0.abj, record at byte " + std::to_string(run.before_first)), std::string::npos)
      << salvaged.out;
  fs::remove_all(run.dir);
}

// A segment begun after the durable point, its header cut by the crash, is
// a torn tail; the same cut in the segment the epoch file names is damage.
TEST(RecoveryDamage, ACutHeaderIsTornOnlyInASegmentNotYetDurable) {
  const std::string dir = logged_run("header");
  write_bytes(dir + "/journal-0-1.abj", "ABYSS");
  const auto torn = run_abyss({"recover", dir});
  EXPECT_EQ(torn.exit_code, 0) << torn.err;
  EXPECT_NE(torn.out.find("journal-0-1.abj, its header"), std::string::npos) << torn.out;
  fs::resize_file(dir + "/journal-0-0.abj", 5);
  const auto damaged = run_abyss({"recover", dir});
  EXPECT_EQ(damaged.exit_code, 2) << damaged.out;
  EXPECT_NE(damaged.err.find("journal-0-0.abj"), std::string::npos) << damaged.err;
  fs::remove_all(dir);
}

// A crash while a new log opens over an older one (Logger::open) may leave
// the new epoch file, naming fewer journals and nothing durable, beside the
// older journals: recovery reads nothing of them.
TEST(RecoveryDamage, AnOlderLogsJournalsBesideANewEpochFileAreNotRead) {
  const std::string dir = logged_run("reopened");
  log::DurablePoint fresh;
  fresh.journals.resize(1);
  write_bytes(dir + "/epoch", log::epoch_file_bytes(fresh));
  const auto o = run_abyss({"recover", dir});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find(" 0 applied"), std::string::npos) << o.out;
  fs::remove_all(dir);
}

TEST(RecoveryDamage, AMissingJournalStopsRecovery) {
  const std::string dir = logged_run("missing");
  fs::remove(dir + "/journal-1-0.abj");
  const auto o = run_abyss({"recover", dir});
  EXPECT_EQ(o.exit_code, 2) << o.out;
  EXPECT_NE(o.err.find("journal-1-0.abj is missing"), std::string::npos) << o.err;
  EXPECT_EQ(error_lines(o.err), 1) << o.err;
  fs::remove_all(dir);
}

TEST(RecoveryDamage, ADamagedCheckpointStopsRecovery) {
  const std::string dir = test::temp_path("checkpoint");
  std::string text;
  // A loaded machine (ThreadSanitizer, tests side by side) may finish no
  // checkpoint in the window: the run is made again, four times longer.
  for (const char* duration : {"0.3", "1.2", "4.8"}) {
    fs::remove_all(dir);
    const auto run = run_abyss({"run", "--cc", "silo", "--threads", "2", "--rows", "10000", "--duration", duration,
                                "--warmup", "0", "--log", "file", "--log-dir", dir, "--checkpoint-every-ms", "50"});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    std::ifstream meta(dir + "/checkpoint");
    text.assign(std::istreambuf_iterator<char>(meta), std::istreambuf_iterator<char>());
    if (text.find("checkpoint-") != std::string::npos) break;
  }
  const std::size_t at = text.find("checkpoint-");
  ASSERT_NE(at, std::string::npos) << text;
  const std::string file = dir + "/" + text.substr(at, text.find(".abc", at) + 4 - at);
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(fs::file_size(file) / 2));
    f.put('\x55');
    f.put('\x2a');
  }
  const auto o = run_abyss({"recover", dir});
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("checkpoint"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("recovery stopped"), std::string::npos) << o.err;
  fs::remove_all(dir);
}

// Each write of the epoch file goes to one of its two copies: a crash that
// cuts one off leaves the other, which recovery uses and names. Both
// damaged stop it.
TEST(RecoveryDamage, ADamagedEpochFileCopyIsNamedAndTwoStopRecovery) {
  const std::string dir = logged_run("epoch");
  const std::string path = dir + "/epoch";
  const auto size = fs::file_size(path);
  flip_byte(path, 20);
  const auto one = run_abyss({"recover", dir});
  EXPECT_EQ(one.exit_code, 0) << one.err;
  EXPECT_NE(one.out.find("checksum"), std::string::npos) << one.out;
  flip_byte(path, size / 2 + 20);
  const auto two = run_abyss({"recover", dir});
  EXPECT_EQ(two.exit_code, 2);
  EXPECT_NE(two.err.find("checksum"), std::string::npos) << two.err;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace abyss
