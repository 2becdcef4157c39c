#include "bench/scan_bench.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "bench/scan_designs.h"
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

// Calls f(table) with a new, empty table of `design`.
template <class F>
void with_table(const std::string& design, F&& f) {
  const std::size_t block = BlockList::kDefaultBlockBytes;
  if (design == "coarse") {
    BlockList t(kTupleBytes, BlockListMode::Latched);
    f(t);
  } else if (design == "fine-grained") {
    scan_designs::FineGrained t(kTupleBytes, block);
    f(t);
  } else if (design == "snapshot") {
    scan_designs::Snapshot t(kTupleBytes, block);
    f(t);
  } else if (design == "ordered-map") {
    scan_designs::OrderedMap t(kTupleBytes, block);
    f(t);
  } else {
    BlockList t(kTupleBytes, BlockListMode::LatchFree);
    f(t);
  }
}

bool is_design(const std::string& name) {
  return std::find(scan_designs::kNames.begin(), scan_designs::kNames.end(), name) != scan_designs::kNames.end();
}

std::string benchmark_name(const std::string& benchmark) {
  if (benchmark == "scan") return "ConcurrentScan";
  if (benchmark == "insert") return "ConcurrentInsert";
  return "ConcurrentIterator";
}

// 0 + 1 + ... + (n - 1), modulo 2^64 as the checks' sums wrap: the sum of
// the values 0 .. n - 1 a full pass over n tuples reads.
uint64_t sum_below(uint64_t n) { return n % 2 == 0 ? n / 2 * (n - 1) : (n - 1) / 2 * n; }

std::string names(const std::vector<std::string>& all) {
  std::string text;
  for (const std::string& n : all) text += (text.empty() ? "" : ", ") + n;
  return text;
}

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
  Bench(const ScanBenchOptions& o, std::vector<ScanBenchCheck>& checks, std::vector<ScanBenchResult>& out,
        const std::function<void(const std::string&)>& progress)
      : o_(o), checks_(checks), out_(out), progress_(progress), threads_(scan_bench_threads(o)) {}

  std::string run() {
    const auto has = [&](const char* b) {
      return std::find(o_.benchmarks.begin(), o_.benchmarks.end(), b) != o_.benchmarks.end();
    };
    for (const std::string& design : o_.designs) {
      if (o_.check_threads > 0) {
        if (auto err = check(design); !err.empty()) return err;
      }
      std::string err;
      if (has("scan") || has("iterator")) {
        progress_("scan bench: loading " + std::to_string(o_.tuples) + " tuples (" + design + ")");
        with_table(design, [&](auto& table) {
          // Terrier study, "Benchmarking": one worker inserts the table
          // before the scanners start.
          typename std::decay_t<decltype(table)>::Cursor cursor;
          for (Tuple v = 0; v < o_.tuples; v++) table.insert(cursor, &v);
          for (const std::string& b : o_.benchmarks) {
            if (b == "insert") continue;
            for (const uint32_t n : threads_) {
              err = b == "scan" ? measure(b, design, n, [&](uint64_t& ns) { return scan(table, n, ns); })
                                : measure(b, design, n, [&](uint64_t& ns) { return iterate(table, n, ns); });
              if (!err.empty()) return;
            }
          }
        });
        if (!err.empty()) return err;
      }
      if (has("insert")) {
        for (const uint32_t n : threads_) {
          bool first = true;
          err = measure("insert", design, n, [&](uint64_t& ns) {
            std::string e;
            with_table(design, [&](auto& table) { e = insert(table, n, first, ns); });
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
  // The study's correctness workload on a new table of `design`.
  std::string check(const std::string& design) {
    const scan_designs::CheckShape shape = scan_bench_check_shape(o_);
    progress_("scan bench: checking " + design + ": " + std::to_string(shape.inserters) + " inserters beside " +
              std::to_string(shape.scanners) + " scanners");
    scan_designs::CheckResult r;
    const uint64_t start = platform::wall_ns();
    with_table(design, [&](auto& table) { r = scan_designs::check_concurrent(table, shape); });
    const uint64_t end = platform::wall_ns();
    if (!r.error.empty()) return "the " + design + " design failed its check: " + r.error;
    checks_.push_back({design, r.scans, static_cast<double>(end - start) / 1e6});
    return "";
  }

  // Runs `once(ns)` up to o_.reps times (not again once the runs have taken
  // kScanBenchRepeatSeconds) and appends the median run.
  template <class Once>
  std::string measure(const std::string& benchmark, const std::string& design, uint32_t n, Once&& once) {
    const std::string name = benchmark_name(benchmark) + std::to_string(n);
    progress_("scan bench: " + name + " " + design);
    std::vector<uint64_t> times;
    uint64_t spent = 0;
    const auto budget = static_cast<uint64_t>(kScanBenchRepeatSeconds * 1e9);
    while (times.size() < o_.reps && (times.empty() || spent < budget)) {
      uint64_t ns = 0;
      if (auto err = once(ns); !err.empty()) {
        std::string why = name;
        why += " (" + design + "): ";
        return why + err;
      }
      times.push_back(ns);
      spent += ns;
    }
    std::sort(times.begin(), times.end());
    const std::size_t k = times.size();
    const double median = (static_cast<double>(times[(k - 1) / 2]) + static_cast<double>(times[k / 2])) / 2;
    out_.push_back({benchmark_name(benchmark), design, n, n * o_.tuples, median / 1e6, static_cast<uint32_t>(k)});
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
  template <class Table>
  std::string scan(const Table& table, uint32_t n, uint64_t& ns) {
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
  template <class Table>
  std::string iterate(const Table& table, uint32_t n, uint64_t& ns) {
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
  template <class Table>
  std::string insert(Table& table, uint32_t n, bool check, uint64_t& ns) {
    std::vector<Lane> lanes;
    ns = timed(n, lanes, [&](uint32_t t, Lane& /*lane*/) {
      typename Table::Cursor cursor;
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
  std::vector<ScanBenchCheck>& checks_;
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
  bytes += most * kScanBuffer * kTupleBytes;
  // The check's table, beside the others' (a design checks before its
  // benchmarks load), and each scanner's byte a tuple of what it has seen.
  if (options.check_threads > 0) {
    const scan_designs::CheckShape c = scan_bench_check_shape(options);
    const uint64_t total = c.loaded + c.inserters * c.each;
    bytes += BlockList::bytes_for(total, c.inserters + 1, kTupleBytes) + c.scanners * total;
  }
  return bytes;
}

scan_designs::CheckShape scan_bench_check_shape(const ScanBenchOptions& options) {
  scan_designs::CheckShape shape;
  shape.inserters = std::max(options.check_threads / 2, 1u);
  shape.scanners = std::max(options.check_threads - shape.inserters, 1u);
  constexpr uint64_t kLeast = 1000;
  shape.loaded = std::max(options.tuples / 10, kLeast);
  shape.each = std::max(options.tuples / 100, kLeast);
  return shape;
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
  if (options.benchmarks.empty()) return "--benchmarks: at least one of " + names(kScanBenchBenchmarks);
  for (const std::string& b : options.benchmarks) {
    if (std::find(kScanBenchBenchmarks.begin(), kScanBenchBenchmarks.end(), b) == kScanBenchBenchmarks.end()) {
      return "no scan benchmark " + b + " (one of " + names(kScanBenchBenchmarks) + ")";
    }
  }
  if (options.check_threads == 1 || options.check_threads > most) {
    return "--check-threads " + std::to_string(options.check_threads) + ": 0 (no check) or from 2 to " +
           std::to_string(most) + " on this machine";
  }
  if (options.designs.empty()) return "--designs: at least one of " + names(scan_designs::kNames);
  for (const std::string& d : options.designs) {
    if (!is_design(d)) return "no scan design " + d + " (one of " + names(scan_designs::kNames) + ")";
  }
  if (auto why = footprint::shortfall(scan_bench_bytes(options), platform::available_memory_bytes()); !why.empty()) {
    return "the scan bench with " + std::to_string(options.tuples) + " tuples " + why + " (a smaller --tuples fits)";
  }
  return "";
}

std::string run_scan_bench(const ScanBenchOptions& options, std::vector<ScanBenchCheck>& checks,
                           std::vector<ScanBenchResult>& out, const std::function<void(const std::string&)>& progress) {
  if (auto why = scan_bench_refusal(options); !why.empty()) return why;
  Bench bench(options, checks, out, progress);
  return bench.run();
}

std::string scan_bench_table(const ScanBenchOptions& options, const std::vector<ScanBenchCheck>& checks,
                             const std::vector<ScanBenchResult>& results) {
  std::string text;
  char line[320];
  if (!checks.empty()) {
    const scan_designs::CheckShape c = scan_bench_check_shape(options);
    std::snprintf(line, sizeof(line),
                  "the study's correctness workload: %s of %llu tuples each beside %s, after %llu loaded; every "
                  "scan saw no tuple twice, every loaded tuple and each inserter's published before it began, and "
                  "the last scans every tuple\n",
                  plural(c.inserters, "inserter").c_str(), static_cast<unsigned long long>(c.each),
                  plural(c.scanners, "scanner").c_str(), static_cast<unsigned long long>(c.loaded));
    text += line;
    for (const auto& k : checks) {
      std::snprintf(line, sizeof(line), "  %-13s passed: %llu scans checked in %.0f ms\n", k.design.c_str(),
                    static_cast<unsigned long long>(k.scans), k.ms);
      text += line;
    }
  }
  std::snprintf(line, sizeof(line),
                "the Terrier study's benchmarks, each design alone: %llu tuples of %u bytes, %zu MiB blocks, "
                "%s, median of up to %s\n",
                static_cast<unsigned long long>(options.tuples), kTupleBytes, BlockList::kDefaultBlockBytes >> 20,
                plural(platform::hardware_cores(), "core").c_str(), plural(options.reps, "run").c_str());
  text += line;
  std::snprintf(line, sizeof(line), "%-22s %-13s %11s %8s %11s %8s %10s\n", "benchmark", "design", "elapsed ms",
                "vs N=1", "items/ms", "speedup", "vs coarse");
  text += line;
  const auto find = [&](const std::string& benchmark, const std::string& design, uint32_t n) {
    for (const auto& r : results) {
      if (r.benchmark == benchmark && r.design == design && r.threads == n) return &r;
    }
    return static_cast<const ScanBenchResult*>(nullptr);
  };
  const auto ratio = [](char(&out)[32], double num, double den) {
    if (den > 0 && num > 0) {
      std::snprintf(out, sizeof(out), "%.2fx", num / den);
    } else {
      std::snprintf(out, sizeof(out), "-");
    }
  };
  for (const std::string& b : kScanBenchBenchmarks) {
    for (const uint32_t n : scan_bench_threads(options)) {
      for (const std::string& design : scan_designs::kNames) {
        const ScanBenchResult* r = find(benchmark_name(b), design, n);
        if (r == nullptr) continue;
        const ScanBenchResult* one = find(r->benchmark, design, 1);
        const ScanBenchResult* coarse = find(r->benchmark, "coarse", n);
        char time_ratio[32];
        char speedup[32];
        char over_coarse[32];
        ratio(time_ratio, one != nullptr ? one->ms : 0, r->ms);
        ratio(speedup, r->mitems_per_s(), one != nullptr ? one->mitems_per_s() : 0);
        ratio(over_coarse, r->mitems_per_s(), coarse != nullptr ? coarse->mitems_per_s() : 0);
        const std::string name = r->benchmark + std::to_string(n);
        std::snprintf(line, sizeof(line), "%-22s %-13s %11.1f %8s %11.0f %8s %10s\n", name.c_str(), design.c_str(),
                      r->ms, time_ratio, r->mitems_per_s() * 1e3, speedup, over_coarse);
        text += line;
      }
    }
  }
  return text;
}

}  // namespace abyss
