#pragma once
// Per-worker statistics. Time categories and counters each come from one list
// (defined once): the enum indexes an array, and merging, the table and the
// JSON all loop over the names below.
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "common/types.h"
#include "stats/histogram.h"

namespace abyss {

// The Tale's breakdown (Tale §4.1, refining Abyss §3.2).
enum class TimeCat : uint8_t {
  Useful,     // executing transaction logic and operating on tuples
  Abort,      // whole attempts that aborted, including their roll-back
  Backoff,    // waiting after an abort before the restart
  TsAlloc,    // allocating timestamps
  Index,      // hash-index look-ups and inserts
  Wait,       // waiting for a lock or for a pending version
  Commit,     // the scheme's commit: validation, install, release
  CcManager,  // the scheme's per-access work (lock/timestamp manager), less waiting
  Log,        // building log records, handing them to the journal, writing and syncing it
  Other,      // what is left: the worker loop, query hand-out, stats
  kCount
};
inline constexpr std::size_t kTimeCats = static_cast<std::size_t>(TimeCat::kCount);
inline constexpr std::array<std::string_view, kTimeCats> kTimeCatNames = {
    "useful", "abort", "backoff", "ts_alloc", "index", "wait", "commit", "cc_manager", "log", "other"};

enum class Counter : uint8_t {
  Commits,        // committed transactions
  CcAborts,       // attempts aborted by concurrency control (then restarted)
  LogicalAborts,  // transactions rolled back by their own logic (not restarted)
  Acknowledged,   // commits acknowledged: durable under the log policy (at commit with --log off)
  kCount
};
inline constexpr std::size_t kCounters = static_cast<std::size_t>(Counter::kCount);
inline constexpr std::array<std::string_view, kCounters> kCounterNames = {"commits", "cc_aborts", "logical_aborts",
                                                                          "acknowledged"};

using TimeArray = std::array<uint64_t, kTimeCats>;
using AbortCauseArray = std::array<uint64_t, kAbortCauses>;

// The share of attempts the scheme aborted: cc_aborts / (commits + cc_aborts).
inline double abort_rate(uint64_t commits, uint64_t cc_aborts) {
  return commits + cc_aborts > 0 ? static_cast<double>(cc_aborts) / static_cast<double>(commits + cc_aborts) : 0;
}

struct TypeStats {
  std::array<uint64_t, kCounters> counters{};
  // The CC aborts by the cause the scheme named; they sum to cc_aborts.
  AbortCauseArray aborts_by_cause{};
  Histogram latency;  // nanoseconds, first attempt start to acknowledgement

  uint64_t& operator[](Counter c) { return counters[static_cast<std::size_t>(c)]; }
  uint64_t operator[](Counter c) const { return counters[static_cast<std::size_t>(c)]; }
  double abort_rate() const { return abyss::abort_rate((*this)[Counter::Commits], (*this)[Counter::CcAborts]); }
  uint64_t aborts(AbortCause c) const { return aborts_by_cause[static_cast<std::size_t>(c)]; }
  void merge(const TypeStats& o) {
    for (std::size_t i = 0; i < kCounters; i++) counters[i] += o.counters[i];
    for (std::size_t i = 0; i < kAbortCauses; i++) aborts_by_cause[i] += o.aborts_by_cause[i];
    latency.merge(o.latency);
  }
  void subtract(const TypeStats& earlier) {
    for (std::size_t i = 0; i < kCounters; i++) counters[i] -= earlier.counters[i];
    for (std::size_t i = 0; i < kAbortCauses; i++) aborts_by_cause[i] -= earlier.aborts_by_cause[i];
    latency.subtract(earlier.latency);
  }
};

// Which categories an attempt times only when it is sampled (--time-sample):
// the per-access sections, whose clock reads would otherwise cost as much as
// the work they time. Aborts, backoff and waits are timed in every attempt.
inline constexpr bool sampled_category(TimeCat c) {
  return c == TimeCat::Useful || c == TimeCat::TsAlloc || c == TimeCat::Index || c == TimeCat::Commit ||
         c == TimeCat::CcManager;
}

struct alignas(64) WorkerStats {
  TimeArray cycles{};         // per category; Other is filled in by finish()
  uint64_t total_cycles = 0;  // the worker's measured window
  std::vector<TypeStats> types;
  // Completed attempts' time outside waits: `timed` holds the sampled
  // categories of the attempts that timed them, whose span was `timed_span`;
  // `untimed_span` is the same time in the attempts that did not. finish()
  // splits the latter in the proportions of the former and adds the split,
  // `estimated`, to `cycles`.
  TimeArray timed{};
  uint64_t timed_attempts = 0;  // completed attempts that timed the sampled categories
  uint64_t timed_span = 0;
  uint64_t untimed_span = 0;
  TimeArray estimated{};

  explicit WorkerStats(std::size_t txn_types = 1) : types(txn_types) {}
  uint64_t& operator[](TimeCat c) { return cycles[static_cast<std::size_t>(c)]; }
  uint64_t operator[](TimeCat c) const { return cycles[static_cast<std::size_t>(c)]; }

  // Adds the untimed attempts' span to the sampled categories, in the
  // proportions the timed attempts measured, or if none was timed those of
  // `pooled` (all workers' timed attempts), else leaves it to Other; then
  // sets Other to the part of the window no category claimed. Finishing
  // again recomputes both.
  void finish(const WorkerStats* pooled = nullptr) {
    const WorkerStats* source = timed_span > 0 ? this : pooled;
    const double scale = source != nullptr && source->timed_span > 0
                             ? static_cast<double>(untimed_span) / static_cast<double>(source->timed_span)
                             : 0.0;
    for (std::size_t i = 0; i < kTimeCats; i++) {
      cycles[i] -= estimated[i];
      estimated[i] = scale > 0 ? static_cast<uint64_t>(std::llround(static_cast<double>(source->timed[i]) * scale)) : 0;
      cycles[i] += estimated[i];
    }
    uint64_t claimed = 0;
    for (std::size_t i = 0; i < kTimeCats; i++) {
      if (i != static_cast<std::size_t>(TimeCat::Other)) claimed += cycles[i];
    }
    (*this)[TimeCat::Other] = total_cycles > claimed ? total_cycles - claimed : 0;
  }
  void merge(const WorkerStats& o) {
    for (std::size_t i = 0; i < kTimeCats; i++) {
      cycles[i] += o.cycles[i];
      timed[i] += o.timed[i];
      estimated[i] += o.estimated[i];
    }
    total_cycles += o.total_cycles;
    timed_attempts += o.timed_attempts;
    timed_span += o.timed_span;
    untimed_span += o.untimed_span;
    for (std::size_t t = 0; t < types.size(); t++) types[t].merge(o.types[t]);
  }
  // What happened since `earlier`, a copy of these statistics taken then,
  // as measured: estimates either holds are taken out (finish() puts them
  // back for the difference; Other is left to it too).
  void subtract(const WorkerStats& earlier) {
    for (std::size_t i = 0; i < kTimeCats; i++) {
      cycles[i] = (cycles[i] - estimated[i]) - (earlier.cycles[i] - earlier.estimated[i]);
      estimated[i] = 0;
      timed[i] -= earlier.timed[i];
    }
    total_cycles -= earlier.total_cycles;
    timed_attempts -= earlier.timed_attempts;
    timed_span -= earlier.timed_span;
    untimed_span -= earlier.untimed_span;
    for (std::size_t t = 0; t < types.size(); t++) types[t].subtract(earlier.types[t]);
  }
};

}  // namespace abyss
