#pragma once
// Flag definitions of `run`. The tables (demo, bench ycsb|hstore|tpcc|latch|ts)
// are harness specs (harness/specs/).
#include <CLI/CLI.hpp>

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

}  // namespace abyss::cli
