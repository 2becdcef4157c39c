#include "engine/describe.h"

#include <nlohmann/json.hpp>

#include "cc/schemes.h"
#include "common/build_info.h"
#include "common/config.h"
#include "engine/knobs.h"
#include "stats/stats.h"
#include "workload/tpcc/tpcc.h"
#include "workload/ycsb/ycsb.h"

namespace abyss {

namespace {

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
          {"keeps_versions", s.keeps_versions}};
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
                      {"default", k.get(Config{})}};
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

template <class W>
nlohmann::json workload_json(std::string_view name, std::string_view summary) {
  nlohmann::json knobs = nlohmann::json::array();
  for (const Knob& k : run_knobs()) {
    if (k.workload == name) knobs.push_back(k.name);
  }
  return {{"name", name}, {"summary", summary}, {"transaction_types", W::kTypeNames}, {"knobs", knobs}};
}

}  // namespace

nlohmann::json describe_json() {
  nlohmann::json schemes = nlohmann::json::array();
  for (const cc::SchemeTraits& s : cc::schemes()) schemes.push_back(scheme_json(s));
  nlohmann::json knobs = nlohmann::json::array();
  for (const Knob& k : run_knobs()) knobs.push_back(knob_json(k));
  nlohmann::json breakdown = nlohmann::json::array();
  for (std::size_t c = 0; c < kTimeCats; c++) breakdown.push_back(kTimeCatNames[c]);
  return {{"git_rev", git_rev()},
          {"build_type", build_type()},
          {"schemes", schemes},
          {"workloads",
           {workload_json<Ycsb>("ycsb", "YCSB (Abyss §3.3): one table, Zipfian keys, reads and updates"),
            workload_json<Tpcc>("tpcc", "TPC-C rev 5.11 NewOrder and Payment (Abyss §5.6, Tale §4)")}},
          {"knobs", knobs},
          {"breakdown", breakdown}};
}

std::string describe_text() {
  std::string out = "schemes (--cc):\n";
  for (const cc::SchemeTraits& s : cc::schemes()) {
    out += "  " + std::string(s.name) + std::string(12 - std::min<std::size_t>(11, s.name.size()), ' ') +
           std::string(s.summary) + " [" + std::string(s.paper) + "]\n";
  }
  out += "\nworkloads (--workload): ycsb, tpcc\n\nknobs of `abyss run`:\n";
  for (const Knob& k : run_knobs()) {
    std::string owner = k.workload.empty() ? "" : " [--workload " + std::string(k.workload) + "]";
    if (!k.scheme.empty()) owner += " [--cc " + std::string(k.scheme) + "]";
    out += "  " + k.flag() + ": " + k.allowed() + "; default " + k.get(Config{}).dump() + owner + "\n";
  }
  return out;
}

}  // namespace abyss
