#include "bench/scan_bench.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "platform/atomic.h"
#include "platform/clock.h"
#include "platform/latch.h"
#include "platform/machine.h"
#include "platform/process.h"
#include "platform/thread.h"
#include "storage/block_list.h"
#include "storage/footprint.h"

namespace abyss {
namespace {

// One 8-byte column a tuple, as the study's benchmark tables: a tuple is its
// value, so a scan can check what it read by summing.
using Tuple = uint64_t;
constexpr uint32_t kTupleBytes = sizeof(Tuple);
// Tuples a Scan() fills before its caller reads them. The study does not give
// its buffer's size; 8 KiB stays in the core's first-level cache.
constexpr uint32_t kScanBuffer = 1024;

BlockListMode mode_of(const std::string& name) {
  return name == "latched" ? BlockListMode::Latched : BlockListMode::LatchFree;
}

std::string benchmark_name(const std::string& benchmark) {
  if (benchmark == "scan") return "ConcurrentScan";
  if (benchmark == "insert") return "ConcurrentInsert";
  return "ConcurrentIterator";
}

// 0 + 1 + ... + (n - 1), modulo 2^64 as the checks' sums wrap: the sum of
// the values 0 .. n - 1 a full pass over n tuples reads.
uint64_t sum_below(uint64_t n) { return n % 2 == 0 ? n / 2 * (n - 1) : (n - 1) / 2 * n; }

std::string plural(uint32_t n, const char* what) { return std::to_string(n) + " " + what + (n == 1 ? "" : "s"); }

// What one thread did in one run, on a line of its own.
struct alignas(platform::kCacheLine) Lane {
  uint64_t start = 0;  // wall_ns
  uint64_t end = 0;
  uint64_t items = 0;
  uint64_t sum = 0;
};

class Bench {
 public:
  Bench(const ScanBenchOptions& o, std::vector<ScanBenchResult>& out,
        const std::function<void(const std::string&)>& progress)
      : o_(o), out_(out), progress_(progress), threads_(scan_bench_threads(o)) {}

  std::string run() {
    const bool wants = [&] {
      for (const auto& b : o_.benchmarks) {
        if (b == "scan" || b == "iterator") return true;
      }
      return false;
    }();
    for (const std::string& mode : o_.modes) {
      if (wants) {
        progress_("scan bench: loading " + std::to_string(o_.tuples) + " tuples (" + mode + ")");
        // Terrier study, "Benchmarking": one worker inserts the table before
        // the scanners start.
        auto table = std::make_unique<BlockList>(kTupleBytes, mode_of(mode));
        BlockList::Cursor cursor;
        for (Tuple v = 0; v < o_.tuples; v++) table->insert(cursor, &v);
        for (const std::string& b : o_.benchmarks) {
          if (b == "insert") continue;
          for (const uint32_t n : threads_) {
            std::string err = b == "scan" ? measure(b, mode, n, [&](uint64_t& ns) { return scan(*table, n, ns); })
                                          : measure(b, mode, n, [&](uint64_t& ns) { return iterate(*table, n, ns); });
            if (!err.empty()) return err;
          }
        }
      }
      if (std::find(o_.benchmarks.begin(), o_.benchmarks.end(), "insert") != o_.benchmarks.end()) {
        for (const uint32_t n : threads_) {
          bool first = true;
          std::string err = measure("insert", mode, n, [&](uint64_t& ns) {
            std::string e = insert(mode_of(mode), n, first, ns);
            first = false;
            return e;
          });
          if (!err.empty()) return err;
        }
      }
    }
    return "";
  }

 private:
  // Runs `once(ns)` up to o_.reps times (not again once the runs have taken
  // kScanBenchRepeatSeconds) and appends the median run.
  template <class Once>
  std::string measure(const std::string& benchmark, const std::string& mode, uint32_t n, Once&& once) {
    const std::string name = benchmark_name(benchmark) + std::to_string(n);
    progress_("scan bench: " + name + " " + mode);
    std::vector<uint64_t> times;
    uint64_t spent = 0;
    const auto budget = static_cast<uint64_t>(kScanBenchRepeatSeconds * 1e9);
    while (times.size() < o_.reps && (times.empty() || spent < budget)) {
      uint64_t ns = 0;
      if (auto err = once(ns); !err.empty()) {
        std::string why = name;
        why += " (" + mode + "): ";
        return why + err;
      }
      times.push_back(ns);
      spent += ns;
    }
    std::sort(times.begin(), times.end());
    const std::size_t k = times.size();
    const double median = (static_cast<double>(times[(k - 1) / 2]) + static_cast<double>(times[k / 2])) / 2;
    out_.push_back({benchmark_name(benchmark), mode, n, n * o_.tuples, median / 1e6, static_cast<uint32_t>(k)});
    return "";
  }

  // Runs body(t, lane) on n threads, one a core, that start together once
  // all exist; the run's time is from the first start to the last end
  // (Terrier study, Results: the time to complete the benchmark).
  template <class Body>
  uint64_t timed(uint32_t n, std::vector<Lane>& lanes, Body&& body) {
    lanes.assign(n, Lane{});
    platform::Atomic<uint32_t> arrived{0};
    platform::run_threads(n, true, [&](uint32_t t) {
      arrived.fetch_add(1, platform::memory_order_acq_rel);
      for (platform::SpinWait wait; arrived.load(platform::memory_order_acquire) < n;) wait.once();
      lanes[t].start = platform::wall_ns();
      body(t, lanes[t]);
      lanes[t].end = platform::wall_ns();
    });
    uint64_t start = lanes[0].start;
    uint64_t end = lanes[0].end;
    for (const Lane& l : lanes) {
      start = std::min(start, l.start);
      end = std::max(end, l.end);
    }
    return end - start;
  }

  // ConcurrentScanN: each thread scans the whole table, a buffer at a time.
  std::string scan(const BlockList& table, uint32_t n, uint64_t& ns) {
    std::vector<std::vector<Tuple>> buffers(n, std::vector<Tuple>(kScanBuffer));
    std::vector<Lane> lanes;
    ns = timed(n, lanes, [&](uint32_t t, Lane& lane) {
      Tuple* buffer = buffers[t].data();
      auto it = table.begin();
      for (uint32_t got; (got = table.scan(it, reinterpret_cast<char*>(buffer), kScanBuffer)) > 0;) {
        for (uint32_t i = 0; i < got; i++) lane.sum += buffer[i];
        lane.items += got;
      }
    });
    for (uint32_t t = 0; t < n; t++) {
      if (lanes[t].items != o_.tuples || lanes[t].sum != sum_below(o_.tuples)) {
        return "thread " + std::to_string(t) + " scanned " + std::to_string(lanes[t].items) + " tuples summing to " +
               std::to_string(lanes[t].sum) + ", not the " + std::to_string(o_.tuples) + " loaded";
      }
    }
    return "";
  }

  // ConcurrentIteratorN: each thread steps the iterator over every slot,
  // reading no tuple (only its address, so the walk is not optimized away).
  std::string iterate(const BlockList& table, uint32_t n, uint64_t& ns) {
    std::vector<Lane> lanes;
    ns = timed(n, lanes, [&](uint32_t /*t*/, Lane& lane) {
      for (auto it = table.begin(); it.valid(); it.next()) {
        lane.sum += reinterpret_cast<uintptr_t>(*it);
        lane.items++;
      }
    });
    for (uint32_t t = 0; t < n; t++) {
      if (lanes[t].items != o_.tuples) {
        return "thread " + std::to_string(t) + " stepped over " + std::to_string(lanes[t].items) + " slots, not the " +
               std::to_string(o_.tuples) + " loaded";
      }
      sink_ += lanes[t].sum;
    }
    return "";
  }

  // ConcurrentInsertN: each thread inserts `tuples` tuples of its own values
  // through its own cursor into a table that starts empty. The first run's
  // table is then scanned once: every value in, once.
  std::string insert(BlockListMode mode, uint32_t n, bool check, uint64_t& ns) {
    BlockList table(kTupleBytes, mode);
    std::vector<Lane> lanes;
    ns = timed(n, lanes, [&](uint32_t t, Lane& /*lane*/) {
      BlockList::Cursor cursor;
      const Tuple base = static_cast<Tuple>(t) * o_.tuples;
      for (uint64_t i = 0; i < o_.tuples; i++) {
        const Tuple v = base + i;
        table.insert(cursor, &v);
      }
    });
    if (!check) return "";
    uint64_t items = 0;
    uint64_t sum = 0;
    std::vector<Tuple> buffer(kScanBuffer);
    auto it = table.begin();
    for (uint32_t got; (got = table.scan(it, reinterpret_cast<char*>(buffer.data()), kScanBuffer)) > 0;) {
      for (uint32_t i = 0; i < got; i++) sum += buffer[i];
      items += got;
    }
    const uint64_t want = n * o_.tuples;
    if (items != want || sum != sum_below(want)) {
      return "a scan after the inserts found " + std::to_string(items) + " tuples summing to " + std::to_string(sum) +
             ", not the " + std::to_string(want) + " inserted";
    }
    return "";
  }

  const ScanBenchOptions& o_;
  std::vector<ScanBenchResult>& out_;
  const std::function<void(const std::string&)>& progress_;
  const std::vector<uint32_t> threads_;
  uint64_t sink_ = 0;  // the addresses the iterator benchmark stepped over
};

}  // namespace

std::vector<uint32_t> scan_bench_threads(const ScanBenchOptions& options) {
  // Terrier study, Results: N = 1, 2, and up to the machine's cores.
  std::vector<uint32_t> t = options.threads;
  if (t.empty()) t = {1, 2, platform::hardware_cores()};
  std::sort(t.begin(), t.end());
  t.erase(std::unique(t.begin(), t.end()), t.end());
  return t;
}

uint64_t scan_bench_bytes(const ScanBenchOptions& options) {
  const auto has = [&](const char* b) {
    return std::find(options.benchmarks.begin(), options.benchmarks.end(), b) != options.benchmarks.end();
  };
  const std::vector<uint32_t> threads = scan_bench_threads(options);
  const uint64_t most = threads.empty() ? 1 : threads.back();
  uint64_t bytes = 0;
  // The loaded table and the insert benchmark's tables are never mapped at
  // once: the loaded one is gone before the inserts start.
  if (has("scan") || has("iterator")) bytes = BlockList::bytes_for(options.tuples, 1, kTupleBytes);
  if (has("insert")) bytes = std::max(bytes, BlockList::bytes_for(most * options.tuples, most, kTupleBytes));
  // Each scanning thread's buffer.
  return bytes + most * kScanBuffer * kTupleBytes;
}

std::string scan_bench_refusal(const ScanBenchOptions& options) {
  if (platform::kSimulated) return "the scan bench measures this machine; the simulated build has none";
  if (options.tuples == 0) return "--tuples 0: at least one tuple";
  if (options.tuples > kScanBenchMaxTuples) {
    return "--tuples " + std::to_string(options.tuples) + ": at most " + std::to_string(kScanBenchMaxTuples);
  }
  if (options.reps == 0 || options.reps > kScanBenchMaxReps) {
    return "--reps " + std::to_string(options.reps) + ": from 1 to " + std::to_string(kScanBenchMaxReps);
  }
  const uint32_t cores = platform::hardware_cores();
  const uint32_t most = kScanBenchThreadsPerCore * cores;
  for (const uint32_t t : options.threads) {
    if (t == 0) return "--threads 0: at least one thread";
    if (t > most) {
      return "--threads " + std::to_string(t) + ": at most " + std::to_string(most) + " on this machine (" +
             std::to_string(kScanBenchThreadsPerCore) + " a core of its " + std::to_string(cores) + ")";
    }
  }
  if (options.benchmarks.empty()) return "--benchmarks: at least one of scan, insert, iterator";
  for (const std::string& b : options.benchmarks) {
    if (std::find(kScanBenchBenchmarks.begin(), kScanBenchBenchmarks.end(), b) == kScanBenchBenchmarks.end()) {
      return "no scan benchmark " + b + " (one of scan, insert, iterator)";
    }
  }
  if (options.modes.empty()) return "--modes: at least one of latch-free, latched";
  for (const std::string& m : options.modes) {
    if (std::find(kScanBenchModes.begin(), kScanBenchModes.end(), m) == kScanBenchModes.end()) {
      return "no block list mode " + m + " (one of latch-free, latched)";
    }
  }
  if (auto why = footprint::shortfall(scan_bench_bytes(options), platform::available_memory_bytes()); !why.empty()) {
    return "the scan bench with " + std::to_string(options.tuples) + " tuples " + why + " (a smaller --tuples fits)";
  }
  return "";
}

std::string run_scan_bench(const ScanBenchOptions& options, std::vector<ScanBenchResult>& out,
                           const std::function<void(const std::string&)>& progress) {
  if (auto why = scan_bench_refusal(options); !why.empty()) return why;
  Bench bench(options, out, progress);
  return bench.run();
}

std::string scan_bench_table(const ScanBenchOptions& options, const std::vector<ScanBenchResult>& results) {
  std::string text;
  char line[256];
  std::snprintf(line, sizeof(line),
                "a block list alone, the Terrier study's benchmarks: %llu tuples of %u bytes, %zu MiB blocks, "
                "%s, median of up to %s\n",
                static_cast<unsigned long long>(options.tuples), kTupleBytes, BlockList::kDefaultBlockBytes >> 20,
                plural(platform::hardware_cores(), "core").c_str(), plural(options.reps, "run").c_str());
  text += line;
  std::snprintf(line, sizeof(line), "%-22s %-10s %11s %8s %11s %8s\n", "benchmark", "mode", "elapsed ms", "vs N=1",
                "M items/s", "speedup");
  text += line;
  for (const std::string& b : kScanBenchBenchmarks) {
    for (const std::string& mode : kScanBenchModes) {
      const ScanBenchResult* one = nullptr;
      for (const auto& r : results) {
        if (r.benchmark == benchmark_name(b) && r.mode == mode && r.threads == 1) one = &r;
      }
      for (const auto& r : results) {
        if (r.benchmark != benchmark_name(b) || r.mode != mode) continue;
        const std::string name = r.benchmark + std::to_string(r.threads);
        char time_ratio[32] = "-";
        char speedup[32] = "-";
        if (one != nullptr && r.ms > 0 && one->mitems_per_s() > 0) {
          std::snprintf(time_ratio, sizeof(time_ratio), "%.2fx", one->ms / r.ms);
          std::snprintf(speedup, sizeof(speedup), "%.2fx", r.mitems_per_s() / one->mitems_per_s());
        }
        std::snprintf(line, sizeof(line), "%-22s %-10s %11.1f %8s %11.2f %8s\n", name.c_str(), mode.c_str(), r.ms,
                      time_ratio, r.mitems_per_s(), speedup);
        text += line;
      }
    }
  }
  return text;
}

}  // namespace abyss
