#include "stats/histogram.h"

#include <gtest/gtest.h>

namespace abyss {
namespace {

TEST(Histogram, EmptyReportsZero) {
  Histogram h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.quantile(0.5), 0u);
}

TEST(Histogram, SmallValuesAreExact) {
  Histogram h;
  for (uint64_t v = 0; v < 32; v++) h.record(v);
  EXPECT_EQ(h.quantile(0.5), 15u);
  EXPECT_EQ(h.quantile(1.0), 31u);
}

TEST(Histogram, QuantilesOfAUniformRangeAreWithinThreePercent) {
  Histogram h;
  for (uint64_t v = 1; v <= 100000; v++) h.record(v);
  EXPECT_NEAR(static_cast<double>(h.quantile(0.5)), 50000, 50000 * 0.03);
  EXPECT_NEAR(static_cast<double>(h.quantile(0.99)), 99000, 99000 * 0.03);
  EXPECT_NEAR(static_cast<double>(h.quantile(0.999)), 99900, 99900 * 0.03);
  EXPECT_EQ(h.quantile(1.0), 100000u);
  EXPECT_EQ(h.max(), 100000u);
}

TEST(Histogram, BucketEdgesContainTheirValues) {
  for (uint64_t v :
       {uint64_t{0}, uint64_t{31}, uint64_t{32}, uint64_t{33}, uint64_t{1000}, uint64_t{123456789}, ~uint64_t{0}}) {
    const uint32_t b = Histogram::bucket_of(v);
    ASSERT_LT(b, Histogram::kBuckets);
    EXPECT_GE(Histogram::upper_edge(b), v);
    if (b > 0) {
      EXPECT_LT(Histogram::upper_edge(b - 1), v);
    }
  }
}

TEST(Histogram, MergeAddsCounts) {
  Histogram a;
  Histogram b;
  for (int i = 0; i < 10; i++) a.record(100);
  for (int i = 0; i < 30; i++) b.record(10000);
  a.merge(b);
  EXPECT_EQ(a.count(), 40u);
  EXPECT_NEAR(static_cast<double>(a.quantile(0.5)), 10000, 300);
  EXPECT_NEAR(static_cast<double>(a.quantile(0.2)), 100, 3);
}

// The mean is exact (a sum, not bucket edges), and subtracting an earlier
// copy leaves what was recorded since, with its own mean and quantiles.
TEST(Histogram, MeanIsExactAndSubtractLeavesWhatCameAfter) {
  Histogram h;
  for (uint64_t v : {100, 200, 300}) h.record(v);
  EXPECT_DOUBLE_EQ(h.mean(), 200.0);
  const Histogram earlier = h;
  for (int i = 0; i < 10; i++) h.record(5000);
  h.subtract(earlier);
  EXPECT_EQ(h.count(), 10u);
  EXPECT_DOUBLE_EQ(h.mean(), 5000.0);
  EXPECT_NEAR(static_cast<double>(h.quantile(0.5)), 5000, 5000 / 32.0);
  uint64_t buckets = 0;
  for (uint32_t i = 0; i < Histogram::kBuckets; i++) buckets += h.bucket_count(i);
  EXPECT_EQ(buckets, 10u);
}

}  // namespace
}  // namespace abyss
