#include "cc/dl_detect/waits_for.h"

#include <gtest/gtest.h>

namespace abyss::cc {
namespace {

using Edge = WaitsForGraph::Edge;

TEST(WaitsForGraph, NoCycleNoVictim) {
  WaitsForGraph g(3);
  const Edge e01[] = {{1, 20}};
  g.publish(0, 10, e01, 1);  // 0 waits for 1; 1 runs
  EXPECT_FALSE(g.detect(0, 10));
  EXPECT_FALSE(g.abort_requested(1, 20));
}

//    W0 (ts 10) waits for W1 (ts 20); W1 waits for W0: a deadlock.
//    The youngest (largest ts) on the cycle, W1, is the victim.
TEST(WaitsForGraph, TwoCycleAbortsTheYoungest) {
  WaitsForGraph g(2);
  const Edge e01[] = {{1, 20}};
  const Edge e10[] = {{0, 10}};
  g.publish(0, 10, e01, 1);
  g.publish(1, 20, e10, 1);
  EXPECT_FALSE(g.detect(0, 10));          // 0 is not the victim...
  EXPECT_TRUE(g.abort_requested(1, 20));  // ...1 is asked to abort
  EXPECT_TRUE(g.detect(1, 20));           // and 1, detecting itself, aborts itself
}

TEST(WaitsForGraph, ThreeCycleThroughAnotherPath) {
  WaitsForGraph g(4);
  const Edge e0[] = {{3, 40}, {1, 20}};  // 3 is a dead end (not waiting)
  const Edge e1[] = {{2, 30}};
  const Edge e2[] = {{0, 10}};
  g.publish(0, 10, e0, 2);
  g.publish(1, 20, e1, 1);
  g.publish(2, 30, e2, 1);
  EXPECT_FALSE(g.detect(0, 10));
  EXPECT_TRUE(g.abort_requested(2, 30));
  EXPECT_FALSE(g.abort_requested(3, 40));
}

// An edge names a transaction; once that transaction stops waiting (or the
// worker runs another one), the edge no longer counts.
TEST(WaitsForGraph, StaleEdgesDoNotMakeACycle) {
  WaitsForGraph g(2);
  const Edge e01[] = {{1, 20}};
  const Edge e10_old[] = {{0, 5}};  // 1 waited for an earlier transaction of worker 0
  g.publish(0, 10, e01, 1);
  g.publish(1, 20, e10_old, 1);
  EXPECT_FALSE(g.detect(0, 10));
  g.clear(1);
  const Edge e10[] = {{0, 10}};
  g.publish(1, 21, e10, 1);  // worker 1 now runs transaction 21, not 20
  EXPECT_FALSE(g.detect(0, 10));
}

}  // namespace
}  // namespace abyss::cc
