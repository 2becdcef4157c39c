#include "txn/ts_source.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "platform/thread.h"

namespace abyss {
namespace {

class TsSourceUnique : public ::testing::TestWithParam<const char*> {};

TEST_P(TsSourceUnique, TimestampsAreUniquePositiveAndIncreasingPerWorker) {
  TsAllocConfig cfg;
  ASSERT_EQ(TsAllocConfig::parse(GetParam(), cfg), "");
  TsSource src(cfg);
  constexpr uint32_t kWorkers = 4;
  std::vector<std::vector<uint64_t>> got(kWorkers);
  platform::run_threads(kWorkers, false, [&](uint32_t w) {
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

INSTANTIATE_TEST_SUITE_P(EveryMethod, TsSourceUnique, ::testing::Values("mutex", "atomic", "batch:8", "clock"));

// Abyss §4.3: with batching, a worker's next timestamp can be older than one
// another worker already holds, so a restart need not get a newer timestamp.
TEST(TsSource, BatchHandsOutTimestampsOlderThanOthersAlreadyHold) {
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
}  // namespace abyss
