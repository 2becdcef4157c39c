// A worker's time breakdown under --time-sample: the attempts that did not
// time their sections have their span split in the proportions the timed
// attempts measured, once per finish, and interval differences (the samples
// of the window) split their own spans.
#include <gtest/gtest.h>

#include <cstdint>

#include "stats/stats.h"

namespace abyss {
namespace {

// A worker that timed one attempt of 100 cycles (60 useful, 30 index, 10
// cc_manager) and waited 5 more cycles in it, and left `untimed` cycles of
// other attempts untimed.
WorkerStats worker(uint64_t untimed) {
  WorkerStats s;
  s[TimeCat::Useful] = 60;
  s[TimeCat::Index] = 30;
  s[TimeCat::CcManager] = 10;
  s[TimeCat::Wait] = 5;
  s.timed[static_cast<std::size_t>(TimeCat::Useful)] = 60;
  s.timed[static_cast<std::size_t>(TimeCat::Index)] = 30;
  s.timed[static_cast<std::size_t>(TimeCat::CcManager)] = 10;
  s.timed_span = 100;
  s.untimed_span = untimed;
  s.total_cycles = 105 + untimed + 7;  // 7 cycles between attempts
  return s;
}

TEST(WorkerStats, UntimedAttemptsSplitAsTheTimedOnesDid) {
  WorkerStats s = worker(300);
  s.finish();
  EXPECT_EQ(s[TimeCat::Useful], 60u + 180u);
  EXPECT_EQ(s[TimeCat::Index], 30u + 90u);
  EXPECT_EQ(s[TimeCat::CcManager], 10u + 30u);
  EXPECT_EQ(s[TimeCat::Wait], 5u) << "waits are timed in every attempt, never estimated";
  EXPECT_EQ(s[TimeCat::Other], 7u);
}

TEST(WorkerStats, FinishingTwiceEstimatesOnce) {
  WorkerStats s = worker(300);
  s.finish();
  s.finish();
  EXPECT_EQ(s[TimeCat::Index], 120u);
  EXPECT_EQ(s[TimeCat::Other], 7u);
}

TEST(WorkerStats, AWorkerThatTimedNothingSplitsAsThePoolDidOrLeavesItToOther) {
  WorkerStats idle;
  idle.untimed_span = 50;
  idle.total_cycles = 50;
  idle.finish();
  EXPECT_EQ(idle[TimeCat::Useful], 0u);
  EXPECT_EQ(idle[TimeCat::Other], 50u) << "no proportions of its own and no pool: unattributed";
  const WorkerStats pooled = worker(0);
  idle.finish(&pooled);
  EXPECT_EQ(idle[TimeCat::Useful], 30u);
  EXPECT_EQ(idle[TimeCat::Index], 15u);
  EXPECT_EQ(idle[TimeCat::CcManager], 5u);
  EXPECT_EQ(idle[TimeCat::Other], 0u);
}

TEST(WorkerStats, AnIntervalSplitsItsOwnSpan) {
  // Snapshot at a boundary (unfinished), then the worker's finished totals:
  // the interval between them timed nothing new, so its 200 untimed cycles
  // split as the 100 cycles timed before it did.
  const WorkerStats at_boundary = worker(100);
  WorkerStats final_stats = worker(300);
  final_stats.finish();
  WorkerStats interval = final_stats;
  interval.subtract(at_boundary);
  EXPECT_EQ(interval[TimeCat::Useful], 0u) << "the difference of what was measured, before any estimate";
  EXPECT_EQ(interval.untimed_span, 200u);
  interval[TimeCat::Other] = 0;
  interval.finish();
  EXPECT_EQ(interval[TimeCat::Useful], 0u) << "the interval timed nothing, so it has no proportions of its own";
  EXPECT_EQ(interval[TimeCat::Other], 200u);
}

TEST(WorkerStats, MergedWorkersKeepTheirEstimates) {
  WorkerStats a = worker(300);
  WorkerStats b = worker(100);
  a.finish();
  b.finish();
  WorkerStats total;
  total.merge(a);
  total.merge(b);
  EXPECT_EQ(total[TimeCat::Index], 120u + 60u);
  EXPECT_EQ(total[TimeCat::Other], 14u);
}

}  // namespace
}  // namespace abyss
