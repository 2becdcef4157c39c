#pragma once
// Flag definitions and the commands built from runs (demo, benchmarks).
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

struct DemoOptions {
  double duration_s = 1.0;
  double warmup_s = 0.2;
  uint64_t rows = 1 << 20;
  double theta = 0.6;
  uint32_t max_threads = 0;  // 0: the number of cores
  std::string json_dir;
};
void add_demo_flags(CLI::App& app, DemoOptions& o);
int demo_command(const DemoOptions& o);

struct BenchYcsbOptions {
  double duration_s = 1.0;
  double warmup_s = 0.2;
  uint64_t rows = 1 << 20;
  uint32_t reps = 1;
  uint32_t prime_runs = 1;  // discarded runs of the first point
  std::string json_path;
};
void add_bench_ycsb_flags(CLI::App& app, BenchYcsbOptions& o);
int bench_ycsb_command(const BenchYcsbOptions& o);

struct BenchTsOptions {
  double duration_s = 0.5;   // per point of the micro-benchmark
  uint32_t max_threads = 0;  // 0: the number of cores
  double ycsb_duration_s = 1.0;
  double ycsb_theta = 0.9;  // contention for the TIMESTAMP-on-YCSB table
  std::string json_path;
};
void add_bench_ts_flags(CLI::App& app, BenchTsOptions& o);
int bench_ts_command(const BenchTsOptions& o);

struct BenchHstoreOptions {
  double duration_s = 1.0;
  double warmup_s = 0.2;
  uint32_t threads = 0;  // 0: the number of cores
  uint32_t partitions = 8;
  uint64_t rows = 1 << 20;
  uint32_t reps = 1;
  uint32_t prime_runs = 1;  // discarded runs of the first point
  std::string json_path;
};
void add_bench_hstore_flags(CLI::App& app, BenchHstoreOptions& o);
int bench_hstore_command(const BenchHstoreOptions& o);

struct BenchLatchOptions {
  double duration_s = 1.0;
  double warmup_s = 0.2;
  uint32_t threads = 2;
  double theta = 0.9;
  uint64_t rows = 1 << 20;
  uint32_t reps = 1;
  uint32_t prime_runs = 1;  // discarded runs of the first point
  std::string json_path;
};
void add_bench_latch_flags(CLI::App& app, BenchLatchOptions& o);
int bench_latch_command(const BenchLatchOptions& o);

struct BenchTpccOptions {
  double duration_s = 1.0;
  double warmup_s = 0.2;
  std::vector<uint32_t> warehouses = {1, 4};
  std::vector<uint32_t> threads = {1, 2};
  TpccSchema schema = TpccSchema::Full;
  bool inserts = true;
  uint32_t reps = 1;
  uint32_t prime_runs = 1;  // discarded runs of the first point
  std::string json_path;
};
void add_bench_tpcc_flags(CLI::App& app, BenchTpccOptions& o);
int bench_tpcc_command(const BenchTpccOptions& o);

}  // namespace abyss::cli
