#include "platform/clock.h"

#include <chrono>
#include <thread>

namespace abyss::platform {

uint64_t wall_ns() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

uint64_t host_ns() { return wall_ns(); }

namespace {
double measure_cycles_per_ns() {
  const uint64_t w0 = wall_ns();
  const uint64_t c0 = cycles();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const uint64_t w1 = wall_ns();
  const uint64_t c1 = cycles();
  return static_cast<double>(c1 - c0) / static_cast<double>(w1 - w0);
}
}  // namespace

double cycles_per_ns() {
  // Thread-safe one-time initialisation of a constant of the machine.
  static const double value = measure_cycles_per_ns();
  return value;
}

void sleep_ms(uint64_t ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

void sleep_ns(uint64_t ns) { std::this_thread::sleep_for(std::chrono::nanoseconds(ns)); }

void yield_thread() { std::this_thread::yield(); }

void nap_us(uint32_t us) { std::this_thread::sleep_for(std::chrono::microseconds(us)); }

}  // namespace abyss::platform
