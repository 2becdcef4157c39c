// The clock functions of platform/clock.h on the simulated machine: on a
// virtual core, time is the core's virtual clock; elsewhere (loading, the
// report) it is the host's.
#include <chrono>
#include <thread>

#include "platform/clock.h"
#include "platform/sim/machine.h"

namespace abyss::platform {

uint64_t host_ns() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

uint64_t wall_ns() { return sim::active() ? sim::now_ps() / 1000 : host_ns(); }

double cycles_per_ns() { return sim::topology().ghz; }

void sleep_ms(uint64_t ms) {
  if (sim::active()) {
    sim::wait_ps(ms * 1'000'000'000);
  } else {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  }
}

void sleep_ns(uint64_t ns) {
  if (sim::active()) {
    sim::wait_ps(ns * 1000);
  } else {
    std::this_thread::sleep_for(std::chrono::nanoseconds(ns));
  }
}

void yield_thread() {
  if (sim::active()) sim::wait_ps(static_cast<uint64_t>(sim::topology().compute.yield_ns * 1000));
}

void nap_us(uint32_t us) {
  if (sim::active()) sim::wait_ps(uint64_t{us} * 1'000'000);
}

}  // namespace abyss::platform
