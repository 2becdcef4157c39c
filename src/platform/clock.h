#pragma once
// Cycle counter for the time breakdown (cheap enough for the hot path) and a
// wall clock for the run's phases.
#include <cstdint>

#if defined(ABYSS_SIM)
#include "platform/sim/machine.h"
#endif

namespace abyss::platform {

uint64_t wall_ns();

// The host's monotonic clock in nanoseconds, on either build: how long the
// host took for something, never part of a result (wall_ns is a simulated
// core's virtual time in the simulated build).
uint64_t host_ns();

#if defined(ABYSS_SIM)
// The running simulated core's clock, in its cycles.
inline uint64_t cycles() { return sim::now_cycles(); }
#else
inline uint64_t cycles() {
#if defined(__x86_64__) || defined(__i386__)
  return __builtin_ia32_rdtsc();
#else
  return wall_ns();
#endif
}
#endif

// Cycles per nanosecond, measured once against the wall clock.
double cycles_per_ns();

inline double cycles_to_seconds(uint64_t c) { return static_cast<double>(c) / (cycles_per_ns() * 1e9); }

// Blocks the calling thread (the coordinator, never a worker on the hot path).
void sleep_ms(uint64_t ms);
void sleep_ns(uint64_t ns);

// Lets another thread run: waiting workers call this so an oversubscribed
// machine (more workers than cores) still makes progress.
void yield_thread();

// Blocks the calling thread for about `us` microseconds (the kernel's timer
// slack adds tens): for a worker whose wait has outlasted spinning and yielding.
void nap_us(uint32_t us);

}  // namespace abyss::platform
