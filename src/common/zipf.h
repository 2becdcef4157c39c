#pragma once
// Random numbers for workload generation: a fast per-worker PRNG and the Zipfian
// generator of Gray et al., "Quickly Generating Billion-Record Synthetic
// Databases" (SIGMOD 1994), as YCSB and Abyss §3.3 use it.
#include <cstdint>

namespace abyss {

// xoshiro256** — small state, good quality, one per worker (no shared state).
class Rng final {
  __extension__ using U128 = unsigned __int128;  // Lemire's multiply-shift range reduction

 public:
  explicit Rng(uint64_t seed);
  uint64_t next();
  // Uniform in [0, n).
  uint64_t uniform(uint64_t n) { return static_cast<uint64_t>((static_cast<U128>(next()) * n) >> 64); }
  // Uniform in [lo, hi].
  uint64_t range(uint64_t lo, uint64_t hi) { return lo + uniform(hi - lo + 1); }
  // Uniform double in [0, 1).
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  uint64_t s_[4];
};

// Zipfian over [0, n) with skew theta in [0, 1). theta = 0 is uniform. Item 0
// is the hottest; callers that want hot keys spread out scramble the result.
class Zipf final {
 public:
  Zipf(uint64_t n, double theta);
  uint64_t next(Rng& rng) const;
  uint64_t n() const { return n_; }
  double theta() const { return theta_; }

  // zeta(n, theta) = sum_{i=1..n} 1 / i^theta. Exposed for tests. The first
  // kExactTerms terms are summed one by one; beyond them the tail comes from
  // the Euler-Maclaurin formula, so set-up costs the same for any n.
  static double zeta(uint64_t n, double theta);
  // 2^20: YCSB's default table (--rows 1048576) keeps the exact sum, and so the
  // same key sequence for a seed as before the tail formula; about 20 ms.
  static constexpr uint64_t kExactTerms = uint64_t{1} << 20;

 private:
  uint64_t n_;
  double theta_;
  double alpha_;
  double zetan_;
  double eta_;
  double half_pow_theta_;  // 1 + 0.5^theta, Gray et al.'s second threshold
};

}  // namespace abyss
