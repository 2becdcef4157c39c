#include "common/zipf.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
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

// The exact sum, compensated (Kahan) so the reference itself is good to a few
// ulps even over 10^7 terms.
double exact_zeta(uint64_t n, double theta) {
  double sum = 0;
  double carry = 0;
  for (uint64_t i = 1; i <= n; i++) {
    const double y = 1.0 / std::pow(static_cast<double>(i), theta) - carry;
    const double t = sum + y;
    carry = (t - sum) - y;
    sum = t;
  }
  return sum;
}

TEST(Zipf, ZetaMatchesTheExactSumBeyondTheExactTerms) {
  constexpr uint64_t k = Zipf::kExactTerms;
  for (const uint64_t n : {k + 1, k + 2, k + 1000, 3 * k, uint64_t{10'000'000}}) {
    for (const double theta : {0.0, 0.5, 0.9, 0.99}) {
      const double exact = exact_zeta(n, theta);
      EXPECT_LT(std::abs(Zipf::zeta(n, theta) - exact) / exact, 1e-9) << "n=" << n << " theta=" << theta;
    }
  }
}

TEST(Zipf, ZetaIsTheSameLoopUpToTheExactTerms) {
  // Tables of at most kExactTerms rows keep their zeta bit for bit, and so
  // their key sequence for a seed.
  for (const uint64_t n : {uint64_t{1}, uint64_t{1000}, Zipf::kExactTerms}) {
    for (const double theta : {0.5, 0.9, 0.99}) {
      double sum = 0;
      for (uint64_t i = 1; i <= n; i++) sum += 1.0 / std::pow(static_cast<double>(i), theta);
      EXPECT_EQ(Zipf::zeta(n, theta), sum) << "n=" << n << " theta=" << theta;
    }
  }
}

TEST(Zipf, ZetaOfThetaZeroIsN) {
  for (const uint64_t n : {uint64_t{1}, uint64_t{1} << 20, uint64_t{1} << 34, uint64_t{1'000'000'000'000}}) {
    EXPECT_EQ(Zipf::zeta(n, 0.0), static_cast<double>(n));
  }
}

TEST(Zipf, HugeTablesDrawInRange) {
  // 2^34 rows (--rows 17179869184): set-up does not loop over n, and draws
  // stay inside the table with item 0 as likely as 1 / zeta(n, theta).
  const uint64_t n = uint64_t{1} << 34;
  for (const double theta : {0.5, 0.9, 0.99}) {
    Zipf z(n, theta);
    Rng rng(4);
    const double p0 = 1.0 / Zipf::zeta(n, theta);
    int zero = 0;
    const int draws = 100000;
    for (int i = 0; i < draws; i++) {
      const uint64_t v = z.next(rng);
      ASSERT_LT(v, n);
      zero += v == 0;
    }
    EXPECT_NEAR(static_cast<double>(zero) / draws, p0, 5 * std::sqrt(p0 / draws) + 1e-4) << "theta=" << theta;
  }
}

}  // namespace
}  // namespace abyss
