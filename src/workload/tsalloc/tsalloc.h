#pragma once
// The timestamp allocation micro-benchmark of Abyss §4.3 (Figure 6): workers
// that do nothing but take timestamps from the shared source, so the run
// measures the `--ts-alloc` method alone. A transaction takes
// --ts-per-txn timestamps and touches no data; the database is empty.
// Run it under `--cc none`, whose begin and commit take no timestamp of their
// own, and read `timestamps_per_second` from the report.
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/config.h"
#include "common/knob.h"
#include "common/types.h"
#include "platform/clock.h"
#include "stats/stats.h"
#include "storage/database.h"
#include "txn/txn.h"
#include "workload/traits.h"

namespace abyss {

// The micro-benchmark's one setting (Tsalloc::knobs).
struct TsallocConfig {
  // Enough allocations per transaction that the runner's per-transaction
  // work is small beside them, as in a tight allocation loop. Fewer let a
  // slow method (mutex on many simulated cores) commit within a short window.
  uint32_t per_txn = 256;
};

class Tsalloc final {
 public:
  static constexpr WorkloadTraits kTraits{
      .name = "tsalloc",
      .summary = "no data: each transaction only takes timestamps (the --ts-alloc micro-benchmark)",
      .spec = "Abyss §4.3, Figure 6",
      .allocates_timestamps = true,  // taking timestamps is all it does
  };
  static constexpr std::array<std::string_view, 1> kTypeNames = {"allocate"};

  static std::span<const WorkloadMetric> metrics() {
    static constexpr WorkloadMetric kMetrics[] = {
        {"timestamps_per_second", "timestamps/s", "timestamps taken per second",
         [](const WorkerStats& total, double seconds, const Config& config) {
           const double per_txn = config.settings<TsallocConfig>().per_txn;
           return seconds > 0 ? static_cast<double>(total.types[0][Counter::Commits]) * per_txn / seconds : 0.0;
         }},
    };
    return kMetrics;
  }
  // The allocation method is the run-wide --ts-alloc; the count per
  // transaction is the workload's own.
  static std::vector<Knob> knobs() {
    return {integer<uint32_t>(
        "ts-per-txn", "tsalloc.per_txn", 1, 1000000,
        +[](Config& c) -> uint32_t& { return c.settings<TsallocConfig>().per_txn; }, "timestamps per transaction")};
  }
  static std::string validate(const Config& /*config*/) { return {}; }
  // No data to split: one partition (H-STORE then runs transactions one at a time).
  static uint32_t partitions(const Config& /*config*/) { return 1; }

  // A transaction has no inputs: the queries only count.
  struct Queries {
    std::size_t count = 0;
    std::size_t size() const { return count; }
  };

  explicit Tsalloc(const Config& config) : per_txn_(config.settings<TsallocConfig>().per_txn) {}
  void load(Database& /*db*/, uint32_t /*loaders*/, void (* /*init_row*/)(void* meta)) {}
  void resume(const Database& /*db*/) {}  // no data
  Queries generate(uint32_t /*worker*/, uint32_t count, Rng& /*rng*/) const { return {count}; }
  uint8_t type_of(const Queries& /*qs*/, std::size_t /*i*/) const { return 0; }
  // Every transaction is in the one partition.
  void partitions_of(const Queries& /*qs*/, std::size_t /*i*/, std::vector<uint32_t>& out) const { out.assign(1, 0); }
  static uint64_t estimate_load_bytes(const Config& /*config*/, std::size_t /*meta_size*/, std::size_t /*meta_align*/,
                                      uint32_t /*loaders*/) {
    return 0;
  }
  static uint64_t estimate_worker_bytes(const Config& /*config*/, std::size_t /*meta_size*/ = 0,
                                        std::size_t /*meta_align*/ = 0) {
    return 0;
  }

  template <class CC>
  Rc run(Txn<CC>& txn, const Queries& /*qs*/, std::size_t /*i*/, uint64_t& sink) const {
    Worker& w = txn.worker();
    // One timed section for the whole batch: timing each allocation would
    // cost as much as a clock-method allocation itself.
    const uint64_t t0 = w.clock();
    for (uint32_t k = 0; k < per_txn_; k++) sink += w.ts->allocate(w.id.value, w.ts_local);
    w.charge(TimeCat::TsAlloc, w.clock() - t0);
    return Rc::Ok;
  }

 private:
  uint32_t per_txn_;
};

}  // namespace abyss
