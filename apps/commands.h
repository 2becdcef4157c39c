#pragma once
// Flag definitions of `run`, and `bench ts`. The run-based tables (demo,
// bench ycsb|hstore|tpcc|latch) are harness specs (harness/specs/).
#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "common/config.h"

namespace abyss::cli {

// Every knob of Config as a validated flag.
void add_run_flags(CLI::App& app, Config& cfg);

// After parsing `run`: an error line if a flag of one workload was given to a
// run of the other (`--theta` with `--workload tpcc`), else empty. Such a flag
// would be ignored, and the run would not be the one asked for.
std::string workload_flag_mismatch(const CLI::App& run, const Config& cfg);

// Flags of `run` that were given but change nothing in this run (they belong
// to schemes or settings not chosen), and a setting likely to mislead: one
// note each, printed on stderr before the run.
std::vector<std::string> ineffective_flag_notes(const CLI::App& run, const Config& cfg);

struct BenchTsOptions {
  double duration_s = 0.5;   // per point of the micro-benchmark
  uint32_t max_threads = 0;  // 0: the number of cores
  double ycsb_duration_s = 1.0;
  double ycsb_theta = 0.9;  // contention for the TIMESTAMP-on-YCSB table
  std::string json_path;
};
void add_bench_ts_flags(CLI::App& app, BenchTsOptions& o);
int bench_ts_command(const BenchTsOptions& o);

}  // namespace abyss::cli
