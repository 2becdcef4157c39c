#pragma once
// HDR-style latency histogram: log-linear buckets (32 sub-buckets per power of
// two, so any recorded value is reported within ~3%), fixed memory, O(1)
// record, mergeable across workers.
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>

namespace abyss {

class Histogram final {
 public:
  static constexpr uint32_t kSubBits = 5;
  static constexpr uint32_t kSub = 1u << kSubBits;
  static constexpr uint32_t kBuckets = (64 - kSubBits + 1) * kSub;

  void record(uint64_t v) {
    counts_[bucket_of(v)]++;
    total_++;
    sum_ += v;
    if (v > max_) max_ = v;
  }

  void merge(const Histogram& o) {
    for (uint32_t i = 0; i < kBuckets; i++) counts_[i] += o.counts_[i];
    total_ += o.total_;
    sum_ += o.sum_;
    if (o.max_ > max_) max_ = o.max_;
  }

  // What was recorded since `earlier`, a copy of this histogram taken then.
  // The largest value stays this one's: a bound, not the window's own.
  void subtract(const Histogram& earlier) {
    for (uint32_t i = 0; i < kBuckets; i++) counts_[i] -= earlier.counts_[i];
    total_ -= earlier.total_;
    sum_ -= earlier.sum_;
  }

  uint64_t count() const { return total_; }
  uint64_t max() const { return max_; }
  double mean() const { return total_ > 0 ? static_cast<double>(sum_) / static_cast<double>(total_) : 0; }
  // The count in bucket i (0 <= i < kBuckets), whose values run up to upper_edge(i).
  uint64_t bucket_count(uint32_t i) const { return counts_[i]; }

  // The value at quantile q in [0, 1]: the upper edge of the bucket holding
  // it, capped at the largest recorded value. 0 when empty.
  uint64_t quantile(double q) const {
    if (total_ == 0) return 0;
    auto rank = static_cast<uint64_t>(std::llround(q * static_cast<double>(total_)));
    if (rank < 1) rank = 1;
    if (rank > total_) rank = total_;
    uint64_t seen = 0;
    for (uint32_t i = 0; i < kBuckets; i++) {
      seen += counts_[i];
      if (seen >= rank) {
        const uint64_t hi = upper_edge(i);
        return hi < max_ ? hi : max_;
      }
    }
    return max_;
  }

  static uint32_t bucket_of(uint64_t v) {
    if (v < kSub) return static_cast<uint32_t>(v);
    const uint32_t msb = 63 - static_cast<uint32_t>(std::countl_zero(v));
    const uint32_t shift = msb - kSubBits;  // keep kSubBits bits below the msb
    const uint32_t sub = static_cast<uint32_t>(v >> shift) & (kSub - 1);
    return (shift + 1) * kSub + sub;
  }

  // Largest value that falls in bucket i.
  static uint64_t upper_edge(uint32_t i) {
    if (i < kSub) return i;
    const uint32_t shift = i / kSub - 1;
    const uint64_t sub = i % kSub;
    const uint64_t lo = (kSub + sub) << shift;
    return lo + ((uint64_t{1} << shift) - 1);
  }

 private:
  std::array<uint64_t, kBuckets> counts_{};
  uint64_t total_ = 0;
  uint64_t sum_ = 0;  // of the recorded values, for the mean
  uint64_t max_ = 0;
};

}  // namespace abyss
