#pragma once
// Waiting after an abort before the restart (Tale §5, the "Backoff" category).
#include <cstdint>

#include "platform/atomic.h"
#include "platform/clock.h"

namespace abyss::platform {

// Spins for about `ns` nanoseconds, yielding the core now and then so other
// workers on an oversubscribed machine can run meanwhile.
#if defined(ABYSS_SIM)
// On a simulated core: the core's clock moves on by `ns`.
inline void pause_for_ns(uint64_t ns) { sim::wait_ps(ns * 1000); }
#else
inline void pause_for_ns(uint64_t ns) {
  const uint64_t until = cycles() + static_cast<uint64_t>(static_cast<double>(ns) * cycles_per_ns());
  uint32_t spins = 0;
  while (cycles() < until) {
    if (++spins % 64 == 0) {
      yield_thread();
    } else {
      cpu_relax();
    }
  }
}
#endif

}  // namespace abyss::platform
