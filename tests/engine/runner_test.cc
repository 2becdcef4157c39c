// The runner's measurement window: every worker is measured from the moment
// the window opens, including one that is in the middle of restarting a
// transaction at that moment.
#include <gtest/gtest.h>

#include <cstdint>

#include "common/config.h"
#include "engine/engine.h"
#include "platform/clock.h"
#include "txn/ts_source.h"
#include "workload/workloads.h"
#include "workload/ycsb/ycsb_config.h"

namespace abyss {
namespace {

TEST(Runner, AWorkerRestartingWhenTheWindowOpensIsMeasuredFromThen) {
  // OCC with huge timestamp batches: the worker whose batch is behind aborts
  // every read of a row the other worker wrote, up to hundreds of thousands of
  // times in a row, so it is almost always restarting when the window opens.
  Config c;
  c.cc = "occ";
  c.threads = 2;
  c.warmup_s = 0.05;
  c.duration_s = 0.5;
  c.backoff = BackoffKind::None;
  c.settings<YcsbConfig>().rows = 100'000;
  c.settings<YcsbConfig>().theta = 0;
  ASSERT_EQ(TsAllocConfig::parse("batch:1000000", c.ts_alloc), "");
  ASSERT_EQ(validate_workload(c), "");

  const RunResult r = run(c);
  ASSERT_GT(r.seconds, 0);
  ASSERT_EQ(r.workers.size(), 2u);
  EXPECT_GT(r.count(Counter::CcAborts), 0u) << "the restarts this test is about did not happen";
  for (const WorkerStats& w : r.workers) {
    const double measured_s = static_cast<double>(w.total_cycles) / platform::cycles_per_ns() / 1e9;
    // A worker enters the window at its next attempt, microseconds after it
    // opens; the slack is for a descheduled thread on a loaded machine.
    EXPECT_GT(measured_s, 0.9 * r.seconds) << "window " << r.seconds << " s";
  }
}

}  // namespace
}  // namespace abyss
