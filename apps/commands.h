#pragma once
// The subcommands of the abyss binary, each registered by one function with
// what it does once parsed, and the flags and checks `run` and `serve` share.
// The tables (demo, bench ycsb|tpcc|...) are harness specs (harness/specs/).
#include <CLI/CLI.hpp>

#include <functional>
#include <optional>
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

// One subcommand: its parser, and what it does once parsed (its exit code:
// 0 success, 2 bad input, named in one line before anything runs, 1 a
// failure at run time).
struct Command {
  CLI::App* app;
  std::function<int()> run;
};

// Each adds its subcommands to `app` (apps/<name>_command.cc).
std::vector<Command> add_run(CLI::App& app, const std::string& command_line);  // run
std::vector<Command> add_serve(CLI::App& app);                                 // serve, load
std::vector<Command> add_check(CLI::App& app);                                 // check history|tpcc, recover
std::vector<Command> add_bench(CLI::App& app);                                 // probe, bench memory|index|scan
std::vector<Command> add_describe(CLI::App& app);                              // describe
std::vector<Command> add_version(CLI::App& app);                               // version

// `demo` and the bench tables are harness specs run by ./abyss: the exit
// code of a line saying how to run the one asked for; nullopt when the
// command line asks for none.
std::optional<int> refuse_spec(int argc, char** argv);

enum class Use : uint8_t { Run, Serve };
// The one validation path of `run` and `serve` after parsing: a served
// flag, the logged workload adopted with --recover, `own` (the command's
// own checks), the workload's flags and settings, the memory check. An
// error line, or empty.
std::string check_config(const CLI::App& at, Config& cfg, Use use, const std::function<std::string()>& own);

}  // namespace abyss::cli
