// The conformance suite every scheme must pass: under high contention
// (Zipf theta 0.9, 4 accesses per transaction, 8 workers on however many
// cores), the history a run writes must be serializable, and the checker must
// flag the `none` scheme, which proves it can fail.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <ostream>
#include <string>

#include "check/history.h"
#include "common/config.h"
#include "engine/engine.h"

namespace abyss {
namespace {

Config contended(Scheme s, const std::string& history) {
  Config c;
  c.cc = s;
  c.threads = 8;
  c.duration_s = 0.15;
  c.warmup_s = 0.02;
  c.ycsb.rows = 1000;
  c.ycsb.theta = 0.9;
  c.ycsb.req_per_txn = 4;
  c.ycsb.fields = 2;
  c.ycsb.field_size = 16;
  c.history_path = history;
  return c;
}

std::string temp_history(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("abyss-" + name + "-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + ".jsonl"))
      .string();
}

constexpr uint64_t kEnoughTransactions = 100;

// Runs `c` and checks its history. A sanitizer build on an oversubscribed
// machine can commit too little in a short window to say anything, so a run
// with too few transactions and no anomaly is repeated with a window four
// times longer, up to three times; an anomaly is decisive at any length.
check::Report run_and_check(Config c) {
  for (int attempt = 0;; attempt++) {
    const RunResult r = run(c);
    check::Report report = check::check_history_file(c.history_path);
    std::filesystem::remove(c.history_path);
    // Every committed transaction of the whole run (warm-up included) is logged.
    EXPECT_GE(report.transactions, r.count(Counter::Commits));
    if (!report.serializable() || report.transactions > kEnoughTransactions || attempt == 3) {
      EXPECT_GT(report.transactions, kEnoughTransactions) << "too few transactions to say anything";
      return report;
    }
    c.duration_s *= 4;
  }
}

struct Case {
  const char* name;
  Scheme scheme;
  void (*tweak)(Config&);
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class Serializable : public ::testing::TestWithParam<Case> {};

TEST_P(Serializable, HighContentionHistoryHasNoAnomaly) {
  Config c = contended(GetParam().scheme, temp_history(GetParam().name));
  GetParam().tweak(c);
  const check::Report report = run_and_check(c);
  EXPECT_TRUE(report.serializable()) << report.summary();
}

void as_is(Config&) {}
void read_heavy(Config& c) { c.ycsb.write_ratio = 0.1; }
void queue_latch(Config& c) { c.latch = platform::LatchKind::Queue; }
void no_backoff(Config& c) { c.backoff = BackoffKind::None; }
void sorted_no_detect(Config& c) {
  c.dl_detect = false;
  c.ycsb.key_order = KeyOrder::Sorted;
}
void zero_timeout(Config& c) { c.dl_timeout_us = 0; }
void long_timeout(Config& c) { c.dl_timeout_us = 100'000; }
void batch_ts(Config& c) { (void)platform::TsAllocConfig::parse("batch:16", c.ts_alloc); }
void clock_ts(Config& c) { (void)platform::TsAllocConfig::parse("clock", c.ts_alloc); }
void mutex_ts(Config& c) { (void)platform::TsAllocConfig::parse("mutex", c.ts_alloc); }
void partitioned(Config& c) {
  c.ycsb.partitions = 4;
  c.ycsb.multi_part_ratio = 0.5;
  c.ycsb.parts_per_txn = 2;
}
void partitioned_read_heavy(Config& c) {
  partitioned(c);
  read_heavy(c);
}

INSTANTIATE_TEST_SUITE_P(
    EveryScheme, Serializable,
    ::testing::Values(
        Case{"no_wait", Scheme::NoWait, as_is}, Case{"no_wait_read_heavy", Scheme::NoWait, read_heavy},
        Case{"no_wait_no_backoff", Scheme::NoWait, no_backoff}, Case{"wait_die", Scheme::WaitDie, as_is},
        Case{"wait_die_read_heavy", Scheme::WaitDie, read_heavy},
        Case{"wait_die_queue_latch", Scheme::WaitDie, queue_latch},
        Case{"wait_die_batch_ts", Scheme::WaitDie, batch_ts}, Case{"wait_die_clock_ts", Scheme::WaitDie, clock_ts},
        Case{"dl_detect", Scheme::DlDetect, as_is}, Case{"dl_detect_read_heavy", Scheme::DlDetect, read_heavy},
        Case{"dl_detect_queue_latch", Scheme::DlDetect, queue_latch},
        Case{"dl_detect_long_timeout", Scheme::DlDetect, long_timeout},
        Case{"dl_detect_zero_timeout", Scheme::DlDetect, zero_timeout},
        Case{"dl_detect_sorted_no_detect", Scheme::DlDetect, sorted_no_detect},
        Case{"wound_wait", Scheme::WoundWait, as_is}, Case{"wound_wait_read_heavy", Scheme::WoundWait, read_heavy},
        Case{"wound_wait_queue_latch", Scheme::WoundWait, queue_latch},
        Case{"wound_wait_no_backoff", Scheme::WoundWait, no_backoff}, Case{"timestamp", Scheme::Timestamp, as_is},
        Case{"timestamp_read_heavy", Scheme::Timestamp, read_heavy},
        Case{"timestamp_batch_ts", Scheme::Timestamp, batch_ts},
        Case{"timestamp_clock_ts", Scheme::Timestamp, clock_ts},
        Case{"timestamp_queue_latch", Scheme::Timestamp, queue_latch}, Case{"mvcc", Scheme::Mvcc, as_is},
        Case{"mvcc_read_heavy", Scheme::Mvcc, read_heavy}, Case{"mvcc_batch_ts", Scheme::Mvcc, batch_ts},
        Case{"mvcc_clock_ts", Scheme::Mvcc, clock_ts}, Case{"mvcc_mutex_ts", Scheme::Mvcc, mutex_ts},
        Case{"occ", Scheme::Occ, as_is}, Case{"occ_read_heavy", Scheme::Occ, read_heavy},
        Case{"occ_batch_ts", Scheme::Occ, batch_ts}, Case{"occ_clock_ts", Scheme::Occ, clock_ts},
        Case{"silo", Scheme::Silo, as_is}, Case{"silo_read_heavy", Scheme::Silo, read_heavy},
        Case{"silo_no_backoff", Scheme::Silo, no_backoff}, Case{"tictoc", Scheme::Tictoc, as_is},
        Case{"tictoc_read_heavy", Scheme::Tictoc, read_heavy}, Case{"tictoc_no_backoff", Scheme::Tictoc, no_backoff},
        Case{"hstore", Scheme::Hstore, as_is}, Case{"hstore_partitioned", Scheme::Hstore, partitioned},
        Case{"hstore_partitioned_read_heavy", Scheme::Hstore, partitioned_read_heavy}),
    [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

#if defined(__SANITIZE_THREAD__)
constexpr bool kThreadSanitizer = true;
#else
constexpr bool kThreadSanitizer = false;
#endif

// Keep this test: it is the evidence that the checker can fail.
TEST(CheckerCatchesNone, ContendedRunWithoutConcurrencyControlIsNotSerializable) {
  if (kThreadSanitizer)
    GTEST_SKIP() << "`none` races by design; ThreadSanitizer would report the races it exists to show";
  Config c = contended(Scheme::None, temp_history("none"));
  const check::Report report = run_and_check(c);
  EXPECT_FALSE(report.serializable()) << "the checker found no anomaly in a run without concurrency control: "
                                      << report.summary();
  EXPECT_GT(report.count(check::AnomalyKind::LostUpdate) + report.count(check::AnomalyKind::Cycle), 0u);
}

}  // namespace
}  // namespace abyss
