#include "platform/machine.h"

#include <algorithm>
#include <cstddef>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

#include "platform/clock.h"
#include "platform/thread.h"

namespace abyss::platform {

std::string use_machine(uint32_t cores, const std::string& /*topology*/) {
  if (cores == 0) return {};
  return "--sim-cores runs on the simulated build; this binary runs on this machine's cores "
         "(./abyss run --sim-cores N builds and uses the simulated one)";
}

bool has_hardware_counter() { return false; }

uint64_t hardware_counter_next() {
  throw std::logic_error("this machine has no hardware timestamp counter (--ts-alloc hw is checked before a run)");
}

MachineInfo machine_info() { return {"native", "", "", hardware_cores(), 0}; }

std::vector<std::pair<std::string, uint64_t>> machine_counters() { return {}; }

namespace {

// An empty instruction the compiler must assume reads and changes `x`, so a
// chain through it can be neither folded nor vectorised.
template <class T>
inline void opaque(T& x) {
  asm volatile("" : "+r"(x));
}

// Core cycles per nanosecond: a chain of dependent adds retires one per
// cycle on every core this runs on, so adds per nanosecond is the clock.
double measure_core_ghz() {
  constexpr uint64_t kAdds = uint64_t{1} << 26;
  double best = 0;
  for (int attempt = 0; attempt < 9; attempt++) {
    uint64_t x = 0;
    const uint64_t t0 = host_ns();
    for (uint64_t i = 0; i < kAdds; i += 8) {
      for (int k = 0; k < 8; k++) {
        x += 1;
        opaque(x);
      }
    }
    const uint64_t t1 = host_ns();
    if (x != kAdds) return 0;
    best = std::max(best, static_cast<double>(kAdds) / static_cast<double>(t1 - t0));
  }
  return best;
}

// Nanoseconds per read of a pointer chase through `bytes` of lines visited
// in a random cyclic order: every read depends on the one before, so none
// overlaps and each pays the latency of the level that holds the set.
double measure_latency_ns(uint64_t bytes) {
  constexpr std::size_t kWordsPerLine = 8;
  const std::size_t lines = std::max<std::size_t>(2, bytes / 64);
  std::vector<uint64_t> words(lines * kWordsPerLine);
  std::vector<std::size_t> order(lines);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::shuffle(order.begin() + 1, order.end(), std::mt19937_64(lines));
  for (std::size_t i = 0; i < lines; i++) words[order[i] * kWordsPerLine] = order[(i + 1) % lines] * kWordsPerLine;
  const uint64_t reads = uint64_t{1} << 22;
  uint64_t at = 0;
  for (uint64_t i = 0; i < std::min<uint64_t>(lines, reads); i++) at = words[at];  // warm the caches and the TLB
  double best = 1e30;
  for (int attempt = 0; attempt < 3; attempt++) {
    const uint64_t t0 = host_ns();
    for (uint64_t i = 0; i < reads; i++) at = words[at];
    const uint64_t t1 = host_ns();
    opaque(at);
    best = std::min(best, static_cast<double>(t1 - t0) / static_cast<double>(reads));
  }
  return best;
}

// Nanoseconds per read of independent reads of random lines of `bytes`:
// no read waits for another, so the core overlaps as many misses as it can.
double measure_independent_ns(uint64_t bytes) {
  const std::size_t words = std::max<std::size_t>(8, bytes / sizeof(uint64_t));
  std::vector<uint64_t> data(words, 1);
  const uint64_t mask = (uint64_t{1} << (63 - __builtin_clzll(words / 8))) - 1;  // lines, a power of two
  constexpr uint64_t kReads = uint64_t{1} << 24;
  double best = 1e30;
  for (int attempt = 0; attempt < 3; attempt++) {
    uint64_t sum = 0;
    const uint64_t t0 = host_ns();
    for (uint64_t i = 0; i < kReads; i++) sum += data[((i * 0x9E3779B97F4A7C15ULL >> 20) & mask) * 8];
    const uint64_t t1 = host_ns();
    opaque(sum);
    best = std::min(best, static_cast<double>(t1 - t0) / static_cast<double>(kReads));
  }
  return best;
}

// Nanoseconds per read of the cycle counter (platform::cycles), back to back.
double measure_clock_read_ns() {
  constexpr uint64_t kReads = uint64_t{1} << 22;
  double best = 1e30;
  for (int attempt = 0; attempt < 3; attempt++) {
    uint64_t sum = 0;
    const uint64_t t0 = host_ns();
    for (uint64_t i = 0; i < kReads; i++) sum += cycles();
    const uint64_t t1 = host_ns();
    opaque(sum);
    best = std::min(best, static_cast<double>(t1 - t0) / static_cast<double>(kReads));
  }
  return best;
}

// GB/s of one core summing a 512 MiB buffer: independent sequential reads,
// so the prefetchers and the memory system overlap as much as they can.
double measure_stream_gbps() {
  constexpr std::size_t kWords = (std::size_t{512} << 20) / sizeof(uint64_t);
  std::vector<uint64_t> words(kWords, 1);
  double best = 0;
  for (int attempt = 0; attempt < 3; attempt++) {
    uint64_t sum = 0;
    const uint64_t t0 = host_ns();
    for (std::size_t i = 0; i < kWords; i++) sum += words[i];
    const uint64_t t1 = host_ns();
    opaque(sum);
    best = std::max(best, static_cast<double>(kWords * sizeof(uint64_t)) / static_cast<double>(t1 - t0));
  }
  return best;
}

}  // namespace

std::string probe_host(const std::vector<uint64_t>& working_sets, HostProbe& out) {
  out = {};
  out.core_ghz = measure_core_ghz();
  out.clock_read_ns = measure_clock_read_ns();
  for (const uint64_t bytes : working_sets) out.latency_ns.emplace_back(bytes, measure_latency_ns(bytes));
  if (!working_sets.empty()) out.independent_ns = measure_independent_ns(working_sets.back());
  out.stream_gbps = measure_stream_gbps();
  return {};
}

}  // namespace abyss::platform
