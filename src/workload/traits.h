#pragma once
// What a workload declares about itself beside its transactions: its
// `--workload` name and the numbers it reports beside throughput. Each
// workload class defines `static constexpr WorkloadTraits kTraits{...}` and
// `static std::span<const WorkloadMetric> metrics()`; src/workload/registry.h
// lists the classes.
#include <string>
#include <string_view>

#include "common/config.h"
#include "stats/stats.h"

namespace abyss {

struct WorkloadTraits {
  std::string_view name;     // the --workload name, lower case
  std::string_view summary;  // one line for `abyss describe`
  std::string_view spec;     // where the workload is specified
  // Its transactions take timestamps themselves, so --ts-alloc applies under
  // every scheme (a timestamp micro-benchmark).
  bool allocates_timestamps = false;
};

// A number a run of the workload reports beside throughput, from the merged
// per-type counters and the run's configuration (TPC-C's tpmC: NewOrder
// commits per minute).
struct WorkloadMetric {
  std::string_view json;   // key under "results" in the JSON report
  std::string_view label;  // the readable report's row name
  std::string_view unit;   // shown after the value
  double (*compute)(const WorkerStats& total, double seconds, const Config& config);
};

// What a workload checks of its data after a run, from the data and what
// its committed transactions did (SmallBank's balance total): a workload
// with such checks defines `std::vector<ConsistencyCheck> check() const`,
// and `void committed(uint32_t worker) const`, which the runner calls after
// each commit of that worker's.
struct ConsistencyCheck {
  std::string name;  // one word or two: "balance total"
  bool held = false;
  std::string detail;  // the numbers compared
};

}  // namespace abyss
