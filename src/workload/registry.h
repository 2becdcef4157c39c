#pragma once
// The one list of workloads. A workload is registered here and nowhere else:
// its include and its entry in `WorkloadRegistry`. The `--workload` names,
// the dispatch to a template instantiation, the knobs each workload owns,
// the metrics it reports and `abyss describe` read this list.
#include <algorithm>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>

#include "txn/access.h"
#include "workload/kv/kv.h"
#include "workload/scan/scan.h"
#include "workload/smallbank/smallbank.h"
#include "workload/tatp/tatp.h"
#include "workload/tpcc/tpcc.h"
#include "workload/traits.h"
#include "workload/tsalloc/tsalloc.h"
#include "workload/ycsb/ycsb.h"

namespace abyss {

// What the engine asks of a workload (besides `template <class CC> Rc
// run(Txn<CC>&, const Queries&, std::size_t, uint64_t& sink) const`, which is
// checked where the engine instantiates it).
template <class W>
concept Workload = requires(const W& w, const Config& cfg, const typename W::Queries& qs, Rng& rng,
                            std::vector<uint32_t>& parts) {
  { W::kTraits } -> std::convertible_to<WorkloadTraits>;
  { W::kTypeNames.size() } -> std::convertible_to<std::size_t>;
  { W::metrics() } -> std::convertible_to<std::span<const WorkloadMetric>>;
  { W::knobs() } -> std::convertible_to<std::vector<Knob>>;
  { W::validate(cfg) } -> std::convertible_to<std::string>;
  { W::partitions(cfg) } -> std::convertible_to<uint32_t>;
  { w.generate(0u, 0u, rng) } -> std::same_as<typename W::Queries>;
  { w.type_of(qs, std::size_t{0}) } -> std::convertible_to<uint8_t>;
  {w.partitions_of(qs, std::size_t{0}, parts)};
  { qs.size() } -> std::convertible_to<std::size_t>;
  { W::estimate_load_bytes(cfg, std::size_t{8}, std::size_t{8}, 1u) } -> std::convertible_to<uint64_t>;
  { W::estimate_worker_bytes(cfg, std::size_t{8}, std::size_t{8}) } -> std::convertible_to<uint64_t>;
};

// The accesses one transaction of W may make: Txn's default, or more where
// W declares `static uint64_t max_accesses(const Config&)` (YCSB's long
// readers).
template <class W>
std::size_t access_capacity(const Config& cfg) {
  if constexpr (requires { W::max_accesses(cfg); }) {
    return std::max<std::size_t>(kDefaultAccessCapacity, W::max_accesses(cfg));
  } else {
    return kDefaultAccessCapacity;
  }
}

template <Workload... W>
struct WorkloadList {
  // Calls fn.template operator()<W>() with the workload named `name` and
  // returns its result.
  template <class Fn>
  static auto dispatch(std::string_view name, Fn&& fn) {
    using R = decltype(fn.template operator()<std::tuple_element_t<0, std::tuple<W...>>>());
    std::optional<R> out;
    const bool found = ((W::kTraits.name == name ? (out.emplace(fn.template operator()<W>()), true) : false) || ...);
    if (!found) throw std::invalid_argument("unknown workload '" + std::string(name) + "'");
    return std::move(*out);
  }
};

using WorkloadRegistry = WorkloadList<  //
    Ycsb,                               //
    Tpcc,                               //
    Tsalloc,                            //
    Scan,                               //
    Kv,                                 //
    SmallBank,                          //
    Tatp>;

}  // namespace abyss
