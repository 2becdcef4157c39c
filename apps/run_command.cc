// `abyss run`: one run of a workload under one scheme, and the validation
// `run` and `serve` share.
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "apps/commands.h"
#include "common/config.h"
#include "common/knob.h"
#include "engine/engine.h"
#include "engine/knobs.h"
#include "engine/recover.h"
#include "engine/report.h"
#include "workload/kv/kv.h"
#include "workload/workloads.h"

namespace abyss::cli {

std::string check_config(const CLI::App& at, Config& cfg, Use use, const std::function<std::string()>& own) {
  auto given = [&](const Knob& k) { return at.count(k.flag()) > 0; };
  if (use == Use::Serve) {
    if (auto err = unserved_flag(given); !err.empty()) return err;
  }
  // A recovered run or server goes on with the logged workload (docs/durability.md).
  if (cfg.log.recover) {
    if (auto err = check_log(cfg); !err.empty()) return err;
    if (auto err = adopt_logged_workload(cfg, given); !err.empty()) return err;
  }
  if (auto err = own(); !err.empty()) return err;
  if (auto err = check_isolation(cfg); !err.empty()) return err;
  if (auto err = workload_flag_mismatch(at, cfg); !err.empty()) return err;
  // A run's key ranges (--kv-keys-per-worker) are no part of a served table.
  Config checked = cfg;
  if (use == Use::Serve) checked.settings<KvConfig>().keys_per_worker = 1;
  if (auto err = validate_workload(checked); !err.empty()) return err;
  if (cfg.memory_check) {
    if (auto why = memory_shortfall(checked); !why.empty()) {
      return use == Use::Run ? "this run " + why + " (--memory-check off runs it anyway)"
                             : "this table " + why + " (--memory-check off serves it anyway)";
    }
  }
  return {};
}

namespace {

// Checks, notes, then the run and its report.
int run_command(const CLI::App& run, Config& cfg, bool dry_run, const std::string& command_line) {
  // On simulated cores the papers run one worker per core.
  if (cfg.sim_cores > 0 && run.count("--threads") == 0) cfg.threads = cfg.sim_cores;
  const std::string err = check_config(run, cfg, Use::Run, [&] {
    std::string e = check_window(cfg);
    if (e.empty()) e = check_machine(cfg);
    if (e.empty()) e = check_log(cfg);
    if (e.empty()) e = check_power_loss(cfg);
    return e;
  });
  if (!err.empty()) {
    std::fprintf(stderr, "abyss: %s\n", err.c_str());
    return 2;
  }
  for (const auto& note : ineffective_flag_notes(run, cfg)) std::fprintf(stderr, "abyss: note: %s\n", note.c_str());
  if (const std::string note = oversubscription_note(cfg); !note.empty()) {
    std::fprintf(stderr, "abyss: note: %s\n", note.c_str());
  }
  if (dry_run) {
    std::printf("%s\n", cfg.to_json().dump(2).c_str());
    return 0;
  }
  RunResult r;
  try {
    r = abyss::run(cfg);
  } catch (const std::invalid_argument& e) {
    // What the run was given cannot be used: a log to recover that fails its checks.
    std::fprintf(stderr, "abyss: %s\n", e.what());
    return 2;
  }
  r.command_line = command_line;
  print_report(r, stdout);
  if (!cfg.json_path.empty()) {
    if (auto e = write_report_json(r, cfg.json_path); !e.empty()) throw std::runtime_error(e);
  }
  return 0;
}

}  // namespace

std::vector<Command> add_run(CLI::App& app, const std::string& command_line) {
  auto cfg = std::make_shared<Config>();
  auto dry_run = std::make_shared<bool>(false);
  CLI::App* run = app.add_subcommand("run", "one run of a workload under one scheme");
  add_run_flags(*run, *cfg);
  run->add_flag("--dry-run", *dry_run, "check every flag, print the configuration as JSON and run nothing");
  return {{run, [=] { return run_command(*run, *cfg, *dry_run, command_line); }}};
}

}  // namespace abyss::cli
