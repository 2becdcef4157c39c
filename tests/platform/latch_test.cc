#include "platform/latch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "platform/thread.h"
#include "platform/ts_source.h"

namespace abyss::platform {
namespace {

// A plain counter incremented under the latch by several threads ends exact
// only if the latch excludes.
template <class Lock, class Unlock>
uint64_t count_under(Lock lock, Unlock unlock) {
  uint64_t counter = 0;
  run_threads(4, false, [&](uint32_t) {
    for (int i = 0; i < 20000; i++) {
      McsLatch::Node node;
      lock(node);
      counter = counter + 1;
      unlock(node);
    }
  });
  return counter;
}

TEST(Latch, SpinLatchExcludes) {
  SpinLatch l;
  EXPECT_EQ(count_under([&](McsLatch::Node&) { l.lock(); }, [&](McsLatch::Node&) { l.unlock(); }), 80000u);
}

TEST(Latch, McsLatchExcludes) {
  McsLatch l;
  EXPECT_EQ(count_under([&](McsLatch::Node& n) { l.lock(n); }, [&](McsLatch::Node& n) { l.unlock(n); }), 80000u);
}

TEST(Latch, RunTimeKindExcludesForBoth) {
  for (LatchKind k : {LatchKind::Spin, LatchKind::Queue}) {
    Latch l;
    EXPECT_EQ(count_under([&](McsLatch::Node& n) { l.lock(k, n); }, [&](McsLatch::Node& n) { l.unlock(k, n); }),
              80000u);
  }
}

TEST(Latch, SpinTryLockFailsWhileHeld) {
  SpinLatch l;
  ASSERT_TRUE(l.try_lock());
  EXPECT_FALSE(l.try_lock());
  l.unlock();
  EXPECT_TRUE(l.try_lock());
  l.unlock();
}

TEST(TsAlloc, ParsesEveryMethodAndRejectsOthers) {
  TsAllocConfig c;
  EXPECT_EQ(TsAllocConfig::parse("mutex", c), "");
  EXPECT_EQ(c.method, TsMethod::Mutex);
  EXPECT_EQ(TsAllocConfig::parse("batch:16", c), "");
  EXPECT_EQ(c.method, TsMethod::Batch);
  EXPECT_EQ(c.batch, 16u);
  EXPECT_EQ(c.to_string(), "batch:16");
  EXPECT_EQ(TsAllocConfig::parse("clock", c), "");
  EXPECT_EQ(c.method, TsMethod::Clock);
  for (const char* bad : {"", "batch", "batch:", "batch:0", "batch:x", "batch:2000000", "atomics", "Mutex"}) {
    EXPECT_NE(TsAllocConfig::parse(bad, c), "") << bad;
  }
}

class TsAllocUnique : public ::testing::TestWithParam<const char*> {};

TEST_P(TsAllocUnique, TimestampsAreUniquePositiveAndIncreasingPerWorker) {
  TsAllocConfig cfg;
  ASSERT_EQ(TsAllocConfig::parse(GetParam(), cfg), "");
  TsSource src(cfg);
  constexpr uint32_t kWorkers = 4;
  std::vector<std::vector<uint64_t>> got(kWorkers);
  run_threads(kWorkers, false, [&](uint32_t w) {
    TsLocal local;
    for (int i = 0; i < 5000; i++) got[w].push_back(src.allocate(w, local));
  });
  std::set<uint64_t> all;
  for (const auto& v : got) {
    EXPECT_TRUE(std::is_sorted(v.begin(), v.end()));
    for (uint64_t t : v) {
      EXPECT_GT(t, 0u);
      all.insert(t);
    }
  }
  EXPECT_EQ(all.size(), kWorkers * 5000u);
}

INSTANTIATE_TEST_SUITE_P(EveryMethod, TsAllocUnique, ::testing::Values("mutex", "atomic", "batch:8", "clock"));

// Abyss §4.3: with batching, a worker's next timestamp can be older than one
// another worker already holds, so a restart need not get a newer timestamp.
TEST(TsAlloc, BatchHandsOutTimestampsOlderThanOthersAlreadyHold) {
  TsAllocConfig cfg;
  ASSERT_EQ(TsAllocConfig::parse("batch:10", cfg), "");
  TsSource src(cfg);
  TsLocal a;
  TsLocal b;
  const uint64_t a1 = src.allocate(0, a);  // worker 0 takes [1, 10]
  const uint64_t b1 = src.allocate(1, b);  // worker 1 takes [11, 20]
  const uint64_t a2 = src.allocate(0, a);  // worker 0 "restarts" with 2
  EXPECT_LT(a1, b1);
  EXPECT_LT(a2, b1);
}

}  // namespace
}  // namespace abyss::platform
