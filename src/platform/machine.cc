#include "platform/machine.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <filesystem>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "platform/clock.h"
#include "platform/memory.h"
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

// set_mempolicy(2)'s modes (linux/mempolicy.h), called without libnuma.
constexpr int kPolicyDefault = 0;
constexpr int kPolicyPreferred = 1;

thread_local int placing_node = -1;

void prefer_node(int node) {
  if (node < 0) {
    syscall(SYS_set_mempolicy, kPolicyDefault, nullptr, 0);
    return;
  }
  unsigned long mask[16] = {};  // nodes 0..1023
  const auto n = static_cast<unsigned>(node);
  if (n >= sizeof mask * 8) return;
  mask[n / (sizeof(unsigned long) * 8)] |= 1UL << (n % (sizeof(unsigned long) * 8));
  // A kernel or container that refuses leaves the default policy: the pages
  // land where the thread first touches them.
  syscall(SYS_set_mempolicy, kPolicyPreferred, mask, sizeof mask * 8);
}

}  // namespace

uint32_t memory_nodes() {
  static const uint32_t nodes = [] {
    uint32_t n = 0;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/sys/devices/system/node", ec)) {
      const std::string name = e.path().filename().string();
      if (name.size() > 4 && name.starts_with("node") && name.find_first_not_of("0123456789", 4) == std::string::npos) {
        n++;
      }
    }
    return std::max(1u, n);
  }();
  return nodes;
}

uint32_t current_node() {
  if (memory_nodes() == 1) return 0;
  unsigned cpu = 0;
  unsigned node = 0;
  if (syscall(SYS_getcpu, &cpu, &node, nullptr) != 0) return 0;
  return node;
}

PlaceOnNode::PlaceOnNode(uint32_t node) : previous_(placing_node) {
  placing_node = static_cast<int>(node);
  if (memory_nodes() > 1) prefer_node(placing_node);
}

PlaceOnNode::~PlaceOnNode() {
  placing_node = previous_;
  if (memory_nodes() > 1) prefer_node(placing_node);
}

// Natively the policy places pages as they are touched: nothing to note.
void memory_taken(const void* /*p*/, std::size_t /*bytes*/) {}
void memory_released(const void* /*p*/) {}

namespace {

// An empty instruction the compiler must assume reads and changes `x`, so a
// chain through it can be neither folded nor vectorised.
template <class T>
inline void opaque(T& x) {
  asm volatile("" : "+r"(x));
}

// The host nanoseconds of the fastest of `attempts` runs of `body`: the run
// least disturbed by anything else on the machine.
template <class Body>
double fastest_ns(int attempts, Body body) {
  double best = 1e30;
  for (int attempt = 0; attempt < attempts; attempt++) {
    const uint64_t t0 = host_ns();
    body();
    best = std::min(best, static_cast<double>(host_ns() - t0));
  }
  return best;
}

// Core cycles per nanosecond: a chain of dependent adds retires one per
// cycle on every core this runs on, so adds per nanosecond is the clock.
double measure_core_ghz() {
  constexpr uint64_t kAdds = uint64_t{1} << 26;
  bool counted = true;
  const double ns = fastest_ns(9, [&] {
    uint64_t x = 0;
    for (uint64_t i = 0; i < kAdds; i += 8) {
      for (int k = 0; k < 8; k++) {
        x += 1;
        opaque(x);
      }
    }
    counted &= x == kAdds;
  });
  return counted ? static_cast<double>(kAdds) / ns : 0;
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
  return fastest_ns(3,
                    [&] {
                      for (uint64_t i = 0; i < reads; i++) at = words[at];
                      opaque(at);
                    }) /
         static_cast<double>(reads);
}

// The first word of the n-th line of a fixed random sequence of lines among
// `mask + 1` (a power of two): scattered, and computed, not loaded.
inline uint64_t random_line_word(uint64_t n, uint64_t mask) {
  constexpr uint64_t kWordsPerLine = 8;
  return ((n * 0x9E3779B97F4A7C15ULL >> 20) & mask) * kWordsPerLine;
}

// Nanoseconds per read of independent reads of random lines of `bytes`:
// no read waits for another, so the core overlaps as many misses as it can.
double measure_independent_ns(uint64_t bytes) {
  const std::size_t words = std::max<std::size_t>(8, bytes / sizeof(uint64_t));
  std::vector<uint64_t> data(words, 1);
  const uint64_t mask = (uint64_t{1} << (63 - __builtin_clzll(words / 8))) - 1;  // lines, a power of two
  constexpr uint64_t kReads = uint64_t{1} << 24;
  return fastest_ns(3,
                    [&] {
                      uint64_t sum = 0;
                      for (uint64_t i = 0; i < kReads; i++) sum += data[random_line_word(i, mask)];
                      opaque(sum);
                    }) /
         static_cast<double>(kReads);
}

// Nanoseconds per read of the cycle counter (platform::cycles), back to back.
double measure_clock_read_ns() {
  constexpr uint64_t kReads = uint64_t{1} << 22;
  return fastest_ns(3,
                    [&] {
                      uint64_t sum = 0;
                      for (uint64_t i = 0; i < kReads; i++) sum += cycles();
                      opaque(sum);
                    }) /
         static_cast<double>(kReads);
}

// Nanoseconds per atomic read-modify-write of a line this core holds, back
// to back: what a latch or a counter costs when nobody else wants it.
double measure_rmw_ns() {
  constexpr uint64_t kRmws = uint64_t{1} << 22;
  std::atomic<uint64_t> word{0};
  return fastest_ns(3,
                    [&] {
                      for (uint64_t i = 0; i < kRmws; i++) word.fetch_add(1, std::memory_order_acq_rel);
                    }) /
         static_cast<double>(kRmws);
}

// GB/s of one core summing a 512 MiB buffer: independent sequential reads,
// so the prefetchers and the memory system overlap as much as they can.
double measure_stream_gbps() {
  constexpr std::size_t kWords = (std::size_t{512} << 20) / sizeof(uint64_t);
  std::vector<uint64_t> words(kWords, 1);
  return static_cast<double>(kWords * sizeof(uint64_t)) / fastest_ns(3, [&] {
           uint64_t sum = 0;
           for (std::size_t i = 0; i < kWords; i++) sum += words[i];
           opaque(sum);
         });
}

// Chained transactions over `lines` lines whose first words link each to a
// random line (probe_memory's cycle): an access's bucket is a random line,
// and its row the run of `row_lines` lines its bucket's link falls in.
// Between accesses the core does `work_ns` of register-only work (a chain
// of dependent adds, one a cycle). Two schedules: a burst a transaction
// (every bucket, then every row, then the reads: run --prefetch on's), and a
// pipeline that at each access prefetches the bucket two transactions ahead
// and the row one transaction ahead, so no burst is issued and no probe waits.
void measure_chained(const uint64_t* words, uint64_t lines, uint64_t mask, const ChainedShape& shape,
                     MemoryProbe& out) {
  constexpr std::size_t kWordsPerLine = 8;
  const uint64_t accesses = shape.accesses;
  const uint64_t row_lines = shape.row_lines;
  auto bucket = [&](uint64_t n) { return random_line_word(n, mask); };
  auto row_of = [&](uint64_t n) {
    const uint64_t link = words[bucket(n)];
    return std::min(link - link % row_lines, lines - row_lines) * kWordsPerLine;
  };
  const uint64_t adds = shape.work_ns > 0 ? static_cast<uint64_t>(shape.work_ns * measure_core_ghz()) : 0;
  auto work = [adds](uint64_t& x) {
    for (uint64_t i = 0; i < adds; i++) {
      x += 1;
      opaque(x);
    }
  };
  const uint64_t txns = std::max<uint64_t>(1, (uint64_t{1} << 24) / (accesses * (1 + row_lines)));
  std::vector<uint64_t> rows(accesses);
  out.chained_ns = fastest_ns(3,
                              [&] {
                                uint64_t sum = 0;
                                for (uint64_t t = 0, n = 0; t < txns; t++, n += accesses) {
                                  for (uint64_t a = 0; a < accesses; a++) prefetch(&words[bucket(n + a)]);
                                  for (uint64_t a = 0; a < accesses; a++) {
                                    rows[a] = row_of(n + a);
                                    for (uint64_t l = 0; l < row_lines; l++)
                                      prefetch(&words[rows[a] + l * kWordsPerLine]);
                                  }
                                  for (uint64_t a = 0; a < accesses; a++) {
                                    for (uint64_t l = 0; l < row_lines; l++) sum += words[rows[a] + l * kWordsPerLine];
                                    work(sum);
                                  }
                                }
                                opaque(sum);
                              }) /
                   static_cast<double>(txns);
  out.chained_pipeline_ns = fastest_ns(3,
                                       [&] {
                                         uint64_t sum = 0;
                                         for (uint64_t n = 0; n < txns * accesses; n++) {
                                           prefetch(&words[bucket(n + 2 * accesses)]);
                                           const uint64_t ahead = row_of(n + accesses);
                                           for (uint64_t l = 0; l < row_lines; l++) {
                                             prefetch(&words[ahead + l * kWordsPerLine]);
                                           }
                                           const uint64_t row = row_of(n);
                                           for (uint64_t l = 0; l < row_lines; l++)
                                             sum += words[row + l * kWordsPerLine];
                                           work(sum);
                                         }
                                         opaque(sum);
                                       }) /
                            static_cast<double>(txns);
}

}  // namespace

std::string probe_memory(uint64_t bytes, bool huge_pages, const ChainedShape& shape, MemoryProbe& out) {
  out = {};
  out.bytes = bytes;
  out.huge_pages = huge_pages;
  constexpr std::size_t kWordsPerLine = 8;
  const uint64_t lines = bytes / 64;
  if (lines < 2) return "the memory bench needs at least two cache lines";
  auto* words = static_cast<uint64_t*>(map_zeroed(bytes, huge_pages));
  if (words == nullptr) return "could not map " + std::to_string(bytes >> 20) + " MiB for the memory bench";
  // One random cycle through every line (Sattolo's shuffle), its links in
  // each line's first word.
  for (uint64_t i = 0; i < lines; i++) words[i * kWordsPerLine] = i;
  std::mt19937_64 rng(lines);
  for (uint64_t i = lines - 1; i > 0; i--) {
    const uint64_t j = std::uniform_int_distribution<uint64_t>(0, i - 1)(rng);
    std::swap(words[i * kWordsPerLine], words[j * kWordsPerLine]);
  }
  constexpr uint64_t kReads = uint64_t{1} << 22;
  uint64_t at = 0;
  for (uint64_t i = 0; i < kReads; i++) at = words[at * kWordsPerLine];  // warm what can be warmed
  out.dependent_ns = fastest_ns(3,
                                [&] {
                                  for (uint64_t i = 0; i < kReads; i++) at = words[at * kWordsPerLine];
                                  opaque(at);
                                }) /
                     static_cast<double>(kReads);
  const uint64_t mask = (uint64_t{1} << (63 - __builtin_clzll(lines))) - 1;  // a power of two of lines
  constexpr uint64_t kIndependent = uint64_t{1} << 24;
  out.independent_ns = fastest_ns(3,
                                  [&] {
                                    uint64_t sum = 0;
                                    for (uint64_t i = 0; i < kIndependent; i++) {
                                      sum += words[random_line_word(i, mask)];
                                    }
                                    opaque(sum);
                                  }) /
                       static_cast<double>(kIndependent);
  if (shape.accesses > 0 && shape.row_lines > 0 && shape.row_lines < lines) {
    measure_chained(words, lines, mask, shape, out);
  }
  unmap(words, bytes, huge_pages);
  return {};
}

std::string probe_host(const std::vector<uint64_t>& working_sets, HostProbe& out) {
  out = {};
  out.core_ghz = measure_core_ghz();
  out.clock_read_ns = measure_clock_read_ns();
  out.rmw_ns = measure_rmw_ns();
  for (const uint64_t bytes : working_sets) {
    out.latency_ns.emplace_back(bytes, measure_latency_ns(bytes));
    out.independent_by_set.emplace_back(bytes, measure_independent_ns(bytes));
  }
  if (!working_sets.empty()) out.independent_ns = out.independent_by_set.back().second;
  out.stream_gbps = measure_stream_gbps();
  return {};
}

}  // namespace abyss::platform
