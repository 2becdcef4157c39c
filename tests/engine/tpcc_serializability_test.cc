// TPC-C under every scheme: a contended run (one warehouse, more workers than
// cores, inserts on), of NewOrder and Payment or of the full mix with its
// scans and removals, must leave a serializable history and a database that
// meets the consistency conditions of clause 3.3.2; `none` must fail both.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "cc/schemes.h"
#include "check/history.h"
#include "check/tpcc.h"
#include "common/config.h"
#include "engine/engine.h"
#include "support/growing_window.h"
#include "workload/tpcc/tpcc_config.h"

namespace abyss {
namespace {

namespace fs = std::filesystem;

struct Outcome {
  check::Report history;
  check::TpccReport consistency;
};

// Runs TPC-C on one warehouse and checks both the history and the dump. As in
// the YCSB suite, a run too short to commit enough (a sanitizer build on an
// oversubscribed machine) and free of anomalies is repeated with a window
// four times longer, up to three times; a failed check is decisive at any
// length.
// `before_tale`: every Tale §5 switch off (chained index, small pages,
// packed rows, malloc, ITEM read under the scheme, no prefetching).
// `full_mix`: the five transactions, 45/43/4/4/4, instead of NewOrder and
// Payment half and half.
Outcome run_one_warehouse(const std::string& s, bool before_tale = false, bool full_mix = false) {
  const std::string stem = testing::TempDir() + "abyss_tpcc_ser_" + std::to_string(::getpid()) + "_" + s +
                           (before_tale ? "_before_tale" : "") + (full_mix ? "_full_mix" : "");
  Config c;
  c.settings<TpccConfig>().mix = full_mix ? TpccMix{45, 43, 4, 4, 4} : TpccMix{50, 50, 0, 0, 0};
  if (before_tale) {
    c.storage = StorageOptions{IndexKind::Chained, false, RowAlign::Packed};
    c.alloc = AllocKind::Malloc;
    c.read_only_tables = ReadOnlyTables::Cc;
    c.prefetch = false;
  }
  c.cc = s;
  c.workload = "tpcc";
  c.settings<TpccConfig>().warehouses = 1;
  c.settings<TpccConfig>().schema = TpccSchema::Small;
  c.threads = 8;
  c.duration_s = 0.15;
  c.warmup_s = 0.02;
  c.history_path = stem + ".jsonl";
  c.dump_dir = stem + "_dump";
  struct Checked {
    Outcome out;
    uint64_t new_orders = 0;
    uint64_t payments = 0;
  };
  const Checked got = test::grow_window(
      c.duration_s,
      [&](double duration_s) {
        c.duration_s = duration_s;
        fs::remove_all(c.dump_dir);
        const RunResult r = run(c);
        Checked k{{check::check_history_file(c.history_path), check::check_tpcc_dir(c.dump_dir)},
                  r.total.types[0][Counter::Commits],
                  r.total.types[1][Counter::Commits]};
        fs::remove(c.history_path);
        fs::remove_all(c.dump_dir);
        EXPECT_GE(k.out.history.transactions, r.count(Counter::Commits));
        return k;
      },
      [](const Checked& k) {
        const bool enough = k.out.history.transactions > 100 && k.new_orders > 0 && k.payments > 0;
        return enough || !k.out.history.serializable() || !k.out.consistency.all_pass();
      });
  EXPECT_GT(got.out.history.transactions, 100u) << "too few transactions to say anything";
  EXPECT_GT(got.new_orders, 0u) << "no NewOrder committed";
  EXPECT_GT(got.payments, 0u) << "no Payment committed";
  return got.out;
}

class TpccSerializable : public testing::TestWithParam<std::string> {};

TEST_P(TpccSerializable, OneWarehouseEightWorkersSerializableAndConsistent) {
  const Outcome out = run_one_warehouse(GetParam());
  EXPECT_TRUE(out.history.serializable()) << out.history.summary();
  EXPECT_TRUE(out.consistency.all_pass()) << out.consistency.summary();
}

TEST_P(TpccSerializable, SoWithEveryTaleOptimisationOff) {
  const Outcome out = run_one_warehouse(GetParam(), true);
  EXPECT_TRUE(out.history.serializable()) << out.history.summary();
  EXPECT_TRUE(out.consistency.all_pass()) << out.consistency.summary();
}

TEST_P(TpccSerializable, SoWithTheFullMix) {
  const Outcome out = run_one_warehouse(GetParam(), false, true);
  EXPECT_TRUE(out.history.serializable()) << out.history.summary();
  EXPECT_TRUE(out.consistency.all_pass()) << out.consistency.summary();
}

// Every registered scheme but the negative control, which TpccCatchesNone runs.
std::vector<std::string> every_scheme() {
  std::vector<std::string> names;
  for (const cc::SchemeTraits& t : cc::schemes()) {
    if (t.family != cc::Family::None) names.emplace_back(t.name);
  }
  return names;
}

INSTANTIATE_TEST_SUITE_P(EveryScheme, TpccSerializable, testing::ValuesIn(every_scheme()),
                         [](const testing::TestParamInfo<std::string>& info) { return info.param; });

#if defined(__SANITIZE_THREAD__)
constexpr bool kThreadSanitizer = true;
#else
constexpr bool kThreadSanitizer = false;
#endif

// The TPC-C counterpart of CheckerCatchesNone: both checkers must be able to fail.
TEST(TpccCatchesNone, ContendedRunWithoutConcurrencyControlFailsBothCheckers) {
  if (kThreadSanitizer)
    GTEST_SKIP() << "`none` races by design; ThreadSanitizer would report the races it exists to show";
  for (const bool full_mix : {false, true}) {
    const Outcome out = run_one_warehouse("none", false, full_mix);
    EXPECT_FALSE(out.history.serializable()) << out.history.summary();
    EXPECT_FALSE(out.consistency.all_pass()) << out.consistency.summary();
  }
}

}  // namespace
}  // namespace abyss
