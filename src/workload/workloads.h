#pragma once
// The registered workloads as data, for code that needs their names, traits,
// metrics and knobs but not their classes (the knob table, reports,
// `abyss describe`).
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/config.h"
#include "common/knob.h"
#include "workload/traits.h"

namespace abyss {

struct WorkloadInfo {
  WorkloadTraits traits;
  std::span<const std::string_view> type_names;  // transaction types, in counter order
  std::span<const WorkloadMetric> metrics;
  uint32_t (*partitions)(const Config&);  // W::partitions: how many partitions the data is split into
};

// Every registered workload, in registry order.
std::span<const WorkloadInfo> workloads();

// The workload named `name` exactly; throws std::invalid_argument otherwise.
const WorkloadInfo& workload(std::string_view name);

// Every workload's own knobs, each marked with its workload, in registry order.
std::vector<Knob> workload_knobs();

// The cross-field checks of the configured workload: one line naming the
// flags, the values and what is allowed; empty when valid.
std::string validate_workload(const Config& cfg);

}  // namespace abyss
