#include "common/zipf.h"

#include <algorithm>
#include <cmath>

namespace abyss {

namespace {
uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

// sum_{i=k+1..n} 1 / i^theta for k < n by the Euler-Maclaurin formula
// (Abramowitz & Stegun 23.1.30) with f(x) = x^-theta on [k, n]:
//   sum_{i=k..n} f(i) = integral_k^n f + (f(k) + f(n)) / 2
//                       + sum_j B_2j / (2j)! (f^(2j-1)(n) - f^(2j-1)(k)) + R,
// less f(k). f^(m)(x) = (-1)^m theta (theta+1)...(theta+m-1) x^(-theta-m), so
// with k = 2^20 the B_6 term is already below 1e-30 and R far below a double's
// precision; three Bernoulli terms are kept regardless of k.
double zeta_tail(uint64_t k, uint64_t n, double theta) {
  const auto kd = static_cast<double>(k);
  const auto nd = static_cast<double>(n);
  const double one_minus = 1.0 - theta;
  // integral_k^n x^-theta dx = (n^(1-theta) - k^(1-theta)) / (1-theta), written
  // with expm1 so it keeps its digits as theta nears 1 (and is ln(n/k) at 1).
  const double log_ratio = std::log(nd / kd);
  const double integral =
      one_minus == 0.0 ? log_ratio : std::pow(kd, one_minus) * std::expm1(one_minus * log_ratio) / one_minus;
  auto f = [theta](double x) { return std::pow(x, -theta); };
  // The m-th derivative of x^-theta.
  auto df = [theta](double x, int m) {
    double c = 1.0;
    for (int j = 0; j < m; j++) c *= -(theta + j);
    return c * std::pow(x, -theta - m);
  };
  constexpr double kB2 = 1.0 / 12;     // B_2 / 2!
  constexpr double kB4 = -1.0 / 720;   // B_4 / 4!
  constexpr double kB6 = 1.0 / 30240;  // B_6 / 6!
  const double corrections =
      kB2 * (df(nd, 1) - df(kd, 1)) + kB4 * (df(nd, 3) - df(kd, 3)) + kB6 * (df(nd, 5) - df(kd, 5));
  return integral + (f(nd) - f(kd)) / 2 + corrections;
}
}  // namespace

Rng::Rng(uint64_t seed) {
  for (auto& s : s_) s = splitmix64(seed);
}

uint64_t Rng::next() {
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Zipf::zeta(uint64_t n, double theta) {
  // Every term is 1: nothing to sum (exact up to n = 2^53).
  if (theta == 0.0) return static_cast<double>(n);
  // The head term by term, in the order the exact sum always used, so a
  // table of at most kExactTerms rows sees the same zeta as it always did.
  const uint64_t k = std::min(n, kExactTerms);
  double sum = 0;
  for (uint64_t i = 1; i <= k; i++) sum += 1.0 / std::pow(static_cast<double>(i), theta);
  return k == n ? sum : sum + zeta_tail(k, n, theta);
}

Zipf::Zipf(uint64_t n, double theta)
    : n_(n),
      theta_(theta),
      alpha_(1.0 / (1.0 - theta)),
      zetan_(zeta(n, theta)),
      eta_((1.0 - std::pow(2.0 / static_cast<double>(n), 1.0 - theta)) / (1.0 - zeta(2, theta) / zetan_)),
      half_pow_theta_(1.0 + std::pow(0.5, theta)) {}

uint64_t Zipf::next(Rng& rng) const {
  if (theta_ == 0.0) return rng.uniform(n_);
  // Gray et al. §4: invert the approximate CDF.
  const double u = rng.unit();
  const double uz = u * zetan_;
  if (uz < 1.0) return 0;
  if (uz < half_pow_theta_) return 1;
  const auto v = static_cast<uint64_t>(static_cast<double>(n_) * std::pow(eta_ * u - eta_ + 1.0, alpha_));
  return v < n_ ? v : n_ - 1;
}

}  // namespace abyss
