#include "common/zipf.h"

#include <gtest/gtest.h>

#include <vector>

namespace abyss {
namespace {

TEST(Rng, UniformStaysInRangeAndCoversIt) {
  Rng rng(1);
  std::vector<int> hits(10, 0);
  for (int i = 0; i < 100000; i++) {
    const uint64_t v = rng.uniform(10);
    ASSERT_LT(v, 10u);
    hits[v]++;
  }
  for (int h : hits) EXPECT_NEAR(h, 10000, 600);
}

TEST(Zipf, ThetaZeroIsUniform) {
  Rng rng(2);
  Zipf z(100, 0.0);
  std::vector<int> hits(100, 0);
  for (int i = 0; i < 200000; i++) hits[z.next(rng)]++;
  for (int h : hits) EXPECT_NEAR(h, 2000, 300);
}

TEST(Zipf, HighThetaConcentratesOnHotItems) {
  // With theta = 0.9 over 1000 items, item 0 has probability 1/zeta(1000,0.9).
  Rng rng(3);
  Zipf z(1000, 0.9);
  const double p0 = 1.0 / Zipf::zeta(1000, 0.9);
  int zero = 0;
  int top10 = 0;
  const int n = 200000;
  for (int i = 0; i < n; i++) {
    const uint64_t v = z.next(rng);
    ASSERT_LT(v, 1000u);
    zero += v == 0;
    top10 += v < 10;
  }
  EXPECT_NEAR(static_cast<double>(zero) / n, p0, 0.01);
  EXPECT_GT(top10, n / 4);  // far above the uniform 1%
}

}  // namespace
}  // namespace abyss
