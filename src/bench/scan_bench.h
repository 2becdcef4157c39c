#pragma once
// `abyss bench scan`: the Terrier study's five designs for a table scanned
// while it is appended to (bench/scan_designs.h: coarse, fine-grained,
// snapshot, ordered-map, lock-free), alone, through its three benchmarks
// (concurrent sequential scans in Terrier, "Benchmarking"), each at N
// threads:
//   ConcurrentScanN      a table of `tuples` tuples is loaded by one worker,
//                        then N threads each scan all of it with Scan() into
//                        a buffer of their own
//   ConcurrentInsertN    N threads each insert `tuples` tuples into an empty
//                        table, each through its own cursor
//   ConcurrentIteratorN  the loaded table, and N threads each walk all of it
//                        with the iterator alone (the end test and the
//                        advance per slot), copying no tuple: the cost of
//                        iterating, which the study found to be the baseline's
//                        bottleneck
// Every thread does the whole work, so the ideal is the elapsed time of N = 1
// at every N, and N times its items a second (Terrier study, Results). Each
// answer is checked (a scan sees every tuple once, an insert loses none), so
// a broken design fails the bench instead of looking fast; and before its
// benchmarks each design runs the study's correctness workload, inserters
// beside scanners (scan_designs::check_concurrent).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "bench/scan_designs.h"

namespace abyss {

inline const std::vector<std::string> kScanBenchBenchmarks = {"scan", "insert", "iterator"};

struct ScanBenchOptions {
  uint64_t tuples = 10'000'000;   // Terrier study, "Benchmarking": 10 million tuples
  std::vector<uint32_t> threads;  // empty: 1, 2 and this machine's cores
  std::vector<std::string> benchmarks = kScanBenchBenchmarks;
  std::vector<std::string> designs = scan_designs::kNames;
  // Threads of the correctness workload, half inserting and half scanning
  // (Terrier study, "Benchmarking": 16); 0 skips it.
  uint32_t check_threads = 16;
  // Runs of each measurement, the median reported; a measurement that has
  // taken kScanBenchRepeatSeconds already is not run again.
  uint32_t reps = 3;
};

inline constexpr double kScanBenchRepeatSeconds = 1.0;
inline constexpr uint64_t kScanBenchMaxTuples = uint64_t{1} << 36;
inline constexpr uint32_t kScanBenchMaxReps = 100;
// Threads a core, at most: past that a measurement times the OS scheduler.
inline constexpr uint32_t kScanBenchThreadsPerCore = 8;

// The correctness workload's shape for these options: inserters and
// scanners, half the check threads each; a tenth of the tuples loaded first
// and a hundredth inserted by each inserter beside the scans (at least 1,000).
scan_designs::CheckShape scan_bench_check_shape(const ScanBenchOptions& options);

struct ScanBenchResult {
  std::string benchmark;  // ConcurrentScan, ConcurrentInsert, ConcurrentIterator
  std::string design;     // one of scan_designs::kNames
  uint32_t threads = 0;
  uint64_t items = 0;  // tuples scanned, inserted or stepped over, all threads together
  double ms = 0;       // the median run's elapsed time
  uint32_t runs = 0;
  double mitems_per_s() const { return ms > 0 ? static_cast<double>(items) / ms / 1e3 : 0; }
};

// A design's correctness workload: the scans it checked, in how long.
struct ScanBenchCheck {
  std::string design;
  uint64_t scans = 0;
  double ms = 0;
};

// The thread counts a run measures: the options' own, or 1, 2 and this
// machine's cores, ascending, without repeats.
std::vector<uint32_t> scan_bench_threads(const ScanBenchOptions& options);

// The most bytes the bench maps at once with these options.
uint64_t scan_bench_bytes(const ScanBenchOptions& options);

// Why these options cannot run here (the simulated build, no tuples or
// absurdly many, a thread count past kScanBenchThreadsPerCore a core, an
// unknown benchmark or design, a size the machine cannot hold), in one line,
// before anything is built; empty if they can.
std::string scan_bench_refusal(const ScanBenchOptions& options);

// Runs each design's correctness workload (unless check_threads is 0), then
// every (benchmark, design, thread count), and appends a check and a result
// each. `progress` hears a line before each. Answers an error (a design that
// answered wrongly), empty on success.
std::string run_scan_bench(const ScanBenchOptions& options, std::vector<ScanBenchCheck>& checks,
                           std::vector<ScanBenchResult>& out, const std::function<void(const std::string&)>& progress);

// The results as the study's tables: the checks, then a row per benchmark, N
// and design with the elapsed ms, its ratio to N = 1's (ideal 1.00x), items a
// millisecond, the speedup over N = 1's (ideal N) and over the coarse
// latch's at the same N.
std::string scan_bench_table(const ScanBenchOptions& options, const std::vector<ScanBenchCheck>& checks,
                             const std::vector<ScanBenchResult>& results);

}  // namespace abyss
