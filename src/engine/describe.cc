#include "engine/describe.h"

#include <nlohmann/json.hpp>

#include "cc/schemes.h"
#include "common/build_info.h"
#include "common/config.h"
#include "engine/knobs.h"
#include "stats/stats.h"
#include "workload/workloads.h"

namespace abyss {

namespace {

// The --isolation levels the scheme offers, strongest first.
nlohmann::json isolation_levels(const cc::SchemeTraits& s) {
  nlohmann::json levels = nlohmann::json::array();
  for (std::string_view name : kIsolationNames) {
    if (s.weaker_isolation || name == kIsolationNames[0]) levels.push_back(name);
  }
  return levels;
}

// The causes the scheme's aborts name (AbortCause), in the vocabulary's order.
nlohmann::json abort_cause_names(uint32_t causes) {
  nlohmann::json names = nlohmann::json::array();
  for (std::size_t k = 0; k < kAbortCauses; k++) {
    if (cc::has_cause(causes, static_cast<AbortCause>(k))) names.push_back(kAbortCauseNames[k]);
  }
  return names;
}

nlohmann::json scheme_json(const cc::SchemeTraits& s) {
  return {{"name", s.name},
          {"summary", s.summary},
          {"paper", s.paper},
          {"family", cc::name_of(s.family)},
          {"allocates_timestamps", s.allocates_timestamps},
          {"uses_latch", s.uses_latch},
          {"declares_partitions", s.declares_partitions},
          {"waits", s.waits},
          {"aborts", s.aborts},
          {"keeps_versions", s.keeps_versions},
          {"abort_causes", abort_cause_names(s.causes)},
          {"isolation", isolation_levels(s)}};
}

nlohmann::json knob_json(const Knob& k) {
  nlohmann::json j = {{"name", k.name},
                      {"flag", k.flag()},
                      {"kind", name_of(k.kind)},
                      {"json", k.json},
                      {"workload", k.workload.empty() ? nlohmann::json(nullptr) : nlohmann::json(k.workload)},
                      {"scheme", k.scheme.empty() ? nlohmann::json(nullptr) : nlohmann::json(k.scheme)},
                      {"allowed", k.allowed()},
                      {"help", k.help},
                      {"default", k.get(Config{})},
                      {"served", k.not_served.empty()}};
  if (k.kind == KnobKind::Integer) {
    j["min"] = k.min;
    j["max"] = k.max;
  }
  if (k.kind == KnobKind::Real) {
    j["min"] = k.lo;
    j["max"] = k.hi;
  }
  if (k.kind == KnobKind::Choice) j["choices"] = k.choices;
  if (k.kind == KnobKind::Text) j["syntax"] = k.syntax;
  return j;
}

nlohmann::json workload_json(const WorkloadInfo& w) {
  nlohmann::json knobs = nlohmann::json::array();
  for (const Knob& k : run_knobs()) {
    if (k.workload == w.traits.name) knobs.push_back(k.name);
  }
  nlohmann::json metrics = nlohmann::json::array();
  for (const WorkloadMetric& m : w.metrics) metrics.push_back({{"name", m.json}, {"unit", m.unit}});
  return {{"name", w.traits.name},
          {"summary", w.traits.summary},
          {"spec", w.traits.spec},
          {"allocates_timestamps", w.traits.allocates_timestamps},
          {"transaction_types", w.type_names},
          {"metrics", metrics},
          {"knobs", knobs}};
}

}  // namespace

nlohmann::json describe_json() {
  nlohmann::json schemes = nlohmann::json::array();
  for (const cc::SchemeTraits& s : cc::schemes()) schemes.push_back(scheme_json(s));
  nlohmann::json knobs = nlohmann::json::array();
  for (const Knob& k : run_knobs()) knobs.push_back(knob_json(k));
  nlohmann::json workloads_json = nlohmann::json::array();
  for (const WorkloadInfo& w : workloads()) workloads_json.push_back(workload_json(w));
  nlohmann::json breakdown = nlohmann::json::array();
  for (std::size_t c = 0; c < kTimeCats; c++) breakdown.push_back(kTimeCatNames[c]);
  nlohmann::json causes = nlohmann::json::array();
  for (std::string_view name : kAbortCauseNames) causes.push_back(name);
  return {{"git_rev", git_rev()}, {"build_type", build_type()}, {"schemes", schemes},    {"workloads", workloads_json},
          {"knobs", knobs},       {"breakdown", breakdown},     {"abort_causes", causes}};
}

std::string describe_text() {
  std::string out = "schemes (--cc):\n";
  for (const cc::SchemeTraits& s : cc::schemes()) {
    out += "  " + std::string(s.name) + std::string(12 - std::min<std::size_t>(11, s.name.size()), ' ') +
           std::string(s.summary) + " [" + std::string(s.paper) + "]\n";
  }
  out += "\nworkloads (--workload):\n";
  for (const WorkloadInfo& w : workloads()) {
    out += "  " + std::string(w.traits.name) + std::string(12 - std::min<std::size_t>(11, w.traits.name.size()), ' ') +
           std::string(w.traits.summary) + " [" + std::string(w.traits.spec) + "]\n";
  }
  out += "\nknobs of `abyss run`:\n";
  for (const Knob& k : run_knobs()) {
    std::string owner = k.workload.empty() ? "" : " [--workload " + std::string(k.workload) + "]";
    if (!k.scheme.empty()) owner += " [--cc " + std::string(k.scheme) + "]";
    out += "  " + k.flag() + ": " + k.allowed() + "; default " + k.get(Config{}).dump() + owner + "\n";
  }
  return out;
}

}  // namespace abyss
