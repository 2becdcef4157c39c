#include "cc/dl_detect/waits_for.h"

#include <gtest/gtest.h>

#include "cc/dl_detect/dl_detect.h"
#include "common/types.h"

namespace abyss::cc {
namespace {

using Edge = WaitsForGraph::Edge;
const uint32_t kEdges = DlDetectConfig{}.max_edges;

constexpr WorkerId w(uint32_t i) { return WorkerId{i}; }
constexpr Timestamp ts(uint64_t v) { return Timestamp{v}; }

TEST(WaitsForGraph, NoCycleNoVictim) {
  WaitsForGraph g(3, kEdges);
  const Edge e01[] = {{w(1), ts(20)}};
  g.publish(w(0), ts(10), 1, e01, 1);  // 0 waits for 1; 1 runs
  EXPECT_FALSE(g.detect(w(0), ts(10)));
  EXPECT_FALSE(g.abort_requested(w(1), ts(20)));
}

//    W0 (id 10) waits for W1 (id 20); W1 waits for W0: a deadlock. Both
//    hold one lock, so the later id on the cycle, W1, is the victim.
TEST(WaitsForGraph, TwoCycleAbortsTheLaterAmongEquals) {
  WaitsForGraph g(2, kEdges);
  const Edge e01[] = {{w(1), ts(20)}};
  const Edge e10[] = {{w(0), ts(10)}};
  g.publish(w(0), ts(10), 1, e01, 1);
  g.publish(w(1), ts(20), 1, e10, 1);
  EXPECT_FALSE(g.detect(w(0), ts(10)));          // 0 is not the victim...
  EXPECT_TRUE(g.abort_requested(w(1), ts(20)));  // ...1 is asked to abort
  EXPECT_TRUE(g.detect(w(1), ts(20)));           // and 1, detecting itself, aborts itself
}

//    The same cycle with W0 holding one lock and W1 three: W0, which has
//    done the least work, is the victim (DBx1000's choice), though earlier.
TEST(WaitsForGraph, TwoCycleAbortsTheOneHoldingFewestLocks) {
  WaitsForGraph g(2, kEdges);
  const Edge e01[] = {{w(1), ts(20)}};
  const Edge e10[] = {{w(0), ts(10)}};
  g.publish(w(0), ts(10), 1, e01, 1);
  g.publish(w(1), ts(20), 3, e10, 1);
  EXPECT_FALSE(g.detect(w(1), ts(20)));          // 1 is not the victim...
  EXPECT_TRUE(g.abort_requested(w(0), ts(10)));  // ...0 is asked to abort
  EXPECT_FALSE(g.abort_requested(w(1), ts(20)));
  EXPECT_TRUE(g.detect(w(0), ts(10)));  // and 0, detecting itself, aborts itself
}

TEST(WaitsForGraph, ThreeCycleThroughAnotherPath) {
  WaitsForGraph g(4, kEdges);
  const Edge e0[] = {{w(3), ts(40)}, {w(1), ts(20)}};  // 3 is a dead end (not waiting)
  const Edge e1[] = {{w(2), ts(30)}};
  const Edge e2[] = {{w(0), ts(10)}};
  g.publish(w(0), ts(10), 1, e0, 2);
  g.publish(w(1), ts(20), 1, e1, 1);
  g.publish(w(2), ts(30), 1, e2, 1);
  EXPECT_FALSE(g.detect(w(0), ts(10)));
  EXPECT_TRUE(g.abort_requested(w(2), ts(30)));
  EXPECT_FALSE(g.abort_requested(w(3), ts(40)));
}

// An edge names a transaction; once that transaction stops waiting (or the
// worker runs another one), the edge no longer counts.
TEST(WaitsForGraph, StaleEdgesDoNotMakeACycle) {
  WaitsForGraph g(2, kEdges);
  const Edge e01[] = {{w(1), ts(20)}};
  const Edge e10_old[] = {{w(0), ts(5)}};  // 1 waited for an earlier transaction of worker 0
  g.publish(w(0), ts(10), 1, e01, 1);
  g.publish(w(1), ts(20), 1, e10_old, 1);
  EXPECT_FALSE(g.detect(w(0), ts(10)));
  g.clear(w(1));
  const Edge e10[] = {{w(0), ts(10)}};
  g.publish(w(1), ts(21), 1, e10, 1);  // worker 1 now runs transaction 21, not 20
  EXPECT_FALSE(g.detect(w(0), ts(10)));
}

// --dl-max-edges: a waiter publishes its first edges only. W0 waits for W2
// (not waiting) and W1; W1 waits for W0. With one edge the cycle through W1 is
// not published; with two it is found.
TEST(WaitsForGraph, EdgesBeyondTheCapAreDropped) {
  const Edge e0[] = {{w(2), ts(30)}, {w(1), ts(20)}};
  const Edge e10[] = {{w(0), ts(10)}};
  for (const uint32_t cap : {1u, 2u}) {
    WaitsForGraph g(3, cap);
    EXPECT_EQ(g.max_edges(), cap);
    g.publish(w(0), ts(10), 1, e0, 2);
    g.publish(w(1), ts(20), 1, e10, 1);
    EXPECT_FALSE(g.detect(w(0), ts(10)));
    EXPECT_EQ(g.abort_requested(w(1), ts(20)), cap == 2) << "cap " << cap;
  }
}

// A waiter waits for at most one transaction of each other worker, so a cap
// above the worker count keeps no more than that many.
TEST(WaitsForGraph, CapIsAtMostTheWorkerCount) {
  EXPECT_EQ(WaitsForGraph(4, 1024).max_edges(), 4u);
  EXPECT_EQ(WaitsForGraph(4, 3).max_edges(), 3u);
  EXPECT_EQ(WaitsForGraph(1, 32).max_edges(), 1u);
}

}  // namespace
}  // namespace abyss::cc
