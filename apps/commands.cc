#include "apps/commands.h"

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cc/schemes.h"
#include "engine/knobs.h"
#include "workload/workloads.h"

namespace abyss::cli {

void add_run_flags(CLI::App& app, Config& cfg) {
  for (const Knob& knob : run_knobs()) {
    const Knob* k = &knob;  // the table is static: the pointer outlives the parser
    const std::string help =
        std::string(k->help) + (k->workload.empty() ? "" : " [--workload " + std::string(k->workload) + "]");
    if (k->kind == KnobKind::Switch) {
      app.add_flag_callback(
          k->flag(), [&cfg, k] { (void)k->set(cfg, "true"); }, help);
      continue;
    }
    CLI::Option* opt = app.add_option_function<std::string>(
        k->flag(), [&cfg, k](const std::string& v) { (void)k->apply(cfg, v); }, help);
    opt->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);  // a later flag overrides, as in a script's defaults
    opt->check(CLI::Validator(
        [k](std::string& v) {
          Config scratch;
          return k->apply(scratch, v);
        },
        k->allowed(), std::string(k->name)));
    const nlohmann::json value = k->get(Config{});
    if (value.is_boolean() && k->kind == KnobKind::Choice) {
      opt->default_str(value.get<bool>() ? "on" : "off");
    } else if (value.is_string()) {
      if (!value.get<std::string>().empty()) opt->default_str(value.get<std::string>());
    } else {
      opt->default_str(value.dump());
    }
  }
}

std::string workload_flag_mismatch(const CLI::App& run, const Config& cfg) {
  const std::string_view workload = cfg.workload;
  for (const Knob& k : run_knobs()) {
    if (k.workload.empty() || k.workload == workload || run.count(k.flag()) == 0) continue;
    return k.flag() + " " + run.get_option(k.flag())->results().front() + " applies to --workload " +
           std::string(k.workload) + " only, not to --workload " + std::string(workload);
  }
  return {};
}

std::vector<std::string> ineffective_flag_notes(const CLI::App& run, const Config& cfg) {
  const cc::SchemeTraits& scheme = cc::scheme(cfg.cc);
  std::vector<std::string> notes;
  for (const Knob& k : run_knobs()) {
    if (run.count(k.flag()) == 0) continue;
    if (auto why = ignored_reason(k, scheme, cfg); !why.empty()) notes.push_back(k.flag() + " has no effect: " + why);
  }
  const uint32_t partitions = workload(cfg.workload).partitions(cfg);
  if (scheme.declares_partitions && partitions < cfg.threads) {
    notes.push_back("--cc " + std::string(scheme.name) + " with " + std::to_string(partitions) + " partition(s) for " +
                    std::to_string(cfg.threads) +
                    " threads: workers queue on shared partition locks; the papers run one partition per worker");
  }
  return notes;
}

}  // namespace abyss::cli
