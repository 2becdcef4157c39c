#include "workload/registry.h"

#include <array>

#include "workload/workloads.h"

namespace abyss {

namespace {

template <class... W>
std::array<WorkloadInfo, sizeof...(W)> infos(WorkloadList<W...>* /*tag*/) {
  return {WorkloadInfo{W::kTraits, W::kTypeNames, W::metrics(), &W::partitions}...};
}

template <class... W>
std::vector<Knob> knobs_of(WorkloadList<W...>* /*tag*/) {
  std::vector<Knob> all;
  auto add = [&all](std::vector<Knob> rows, std::string_view owner) {
    for (Knob& k : rows) {
      k.workload = owner;
      all.push_back(std::move(k));
    }
  };
  (add(W::knobs(), W::kTraits.name), ...);
  return all;
}

}  // namespace

std::span<const WorkloadInfo> workloads() {
  static const auto table = infos(static_cast<WorkloadRegistry*>(nullptr));
  return table;
}

const WorkloadInfo& workload(std::string_view name) {
  for (const WorkloadInfo& w : workloads()) {
    if (w.traits.name == name) return w;
  }
  throw std::invalid_argument("unknown workload '" + std::string(name) + "'");
}

std::vector<Knob> workload_knobs() { return knobs_of(static_cast<WorkloadRegistry*>(nullptr)); }

std::string validate_workload(const Config& cfg) {
  return WorkloadRegistry::dispatch(cfg.workload, [&]<class W>() { return W::validate(cfg); });
}

}  // namespace abyss
