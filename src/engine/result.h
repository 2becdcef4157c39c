#pragma once
// What a run measured.
#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/config.h"
#include "stats/stats.h"
#include "workload/traits.h"

namespace abyss {

// One interval of the measurement window (--sample-interval): what every
// worker did in it, with the breakdown's Other filled in, and the resident
// memory at its end.
struct Sample {
  double start_s = 0;  // from the window's start
  double end_s = 0;
  WorkerStats stats;
  uint64_t rss_bytes = 0;
  double seconds() const { return end_s - start_s; }
};

struct RunResult {
  Config config;
  std::vector<std::string_view> type_names;
  std::span<const WorkloadMetric> metrics;  // the workload's numbers beside throughput
  std::vector<ConsistencyCheck> checks;     // the workload's checks of its data after the run
  std::vector<WorkerStats> workers;         // each finished (Other filled in)
  WorkerStats total;                        // merged
  double seconds = 0;                       // the measurement window (wall clock)
  // How the window came to be and whether it held steady state
  // (docs/many-core.md, "Steady state"): the windows opened (more than one
  // only with --steady-commits, each after the last failed the rule), the
  // seconds from the end of set-up to the measured window's start, the
  // commits of the window's second half over its first's, and (by the
  // rule) the window's commit rate over the one before it (the warm-up's,
  // for the first window).
  struct Window {
    bool rule = false;  // sized by --steady-commits
    bool steady = false;
    uint32_t windows = 1;
    double warmup_seconds = 0;
    double halves_ratio = 0;
    double previous_ratio = 0;
  } window;
  double load_seconds = 0;
  uint64_t rss_after_load = 0;
  uint64_t rss_at_end = 0;
  // The tables' row blocks at the end, as mapped, and the inserts that took
  // the slot of a removed row or an aborted insert (txn/epochs.h).
  uint64_t table_bytes = 0;
  uint64_t rows_reused = 0;
  // What the log did (--log memory|file; docs/durability.md), over the
  // whole run, and the seconds from the first commit to the last write.
  struct Log {
    uint64_t records = 0;
    uint64_t bytes = 0;
    uint64_t flushes = 0;
    uint64_t fsyncs = 0;
    uint64_t durable_epoch = 0;
    double seconds = 0;
    // --checkpoint-every-ms: checkpoints put in place, their rows and
    // bytes, and the seconds spent on them.
    uint64_t checkpoints = 0;
    uint64_t checkpoint_rows = 0;
    uint64_t checkpoint_bytes = 0;
    double checkpoint_seconds = 0;
  } log;
  // --recover: what the run started from (engine/recover.h): the log's
  // durable epoch, the records applied, the rows written, and the seconds
  // replay took (after the load, which load_seconds counts).
  struct Recovery {
    uint64_t durable_epoch = 0;
    uint64_t records_applied = 0;
    uint64_t writes_applied = 0;
    uint64_t checkpoint_rows = 0;
    uint64_t journal_bytes = 0;
    double seconds = 0;
  } recovery;
  // The machine when the run started: more workers than idle cores (cores
  // minus the load average) means workers share cores, which the papers'
  // runs never did; schemes that wait then pay for preempted holders.
  uint32_t cores = 0;
  double load_average = 0;
  bool oversubscribed() const { return static_cast<double>(config.threads) + load_average > cores + 0.5; }
  // Which machine ran it: this one, or a simulated one (docs/many-core.md),
  // and the host's seconds for the run itself (load excluded).
  std::string platform = "native";
  std::string topology;       // simulated: the topology's name
  std::string topology_file;  // and the file it came from
  double ghz = 0;             // simulated: the virtual cores' clock
  double host_seconds = 0;
  // Provenance: when the run started (UTC, ISO 8601) and the command that
  // asked for it (set by the caller; empty from the library).
  std::string started;
  std::string command_line;
  std::vector<std::pair<std::string, uint64_t>> machine_counters;  // simulated: the machine's counts
  // Resident memory each second (each sample interval, when sampling) of
  // the measurement window: {seconds, bytes}.
  std::vector<std::pair<double, uint64_t>> rss_samples;
  std::vector<Sample> samples;  // empty unless sampling

  uint64_t count(Counter c) const {
    uint64_t n = 0;
    for (const auto& t : total.types) n += t[c];
    return n;
  }
  // Every type's CC aborts by cause, summed.
  AbortCauseArray aborts_by_cause() const {
    AbortCauseArray all{};
    for (const auto& t : total.types)
      for (std::size_t k = 0; k < kAbortCauses; k++) all[k] += t.aborts_by_cause[k];
    return all;
  }
  // The breakdown's sampled attempts (--time-sample): the fewest one worker
  // timed, and the workers with fewer than kFewTimedAttempts, whose split of
  // the sampled categories rests on few attempts (none: all workers' split).
  static constexpr uint64_t kFewTimedAttempts = 8;
  uint64_t least_timed_attempts() const {
    uint64_t least = UINT64_MAX;
    for (const auto& w : workers) least = std::min(least, w.timed_attempts);
    return workers.empty() ? 0 : least;
  }
  uint32_t workers_with_few_timed_attempts() const {
    uint32_t n = 0;
    for (const auto& w : workers) n += w.timed_attempts < kFewTimedAttempts ? 1 : 0;
    return n;
  }
  double commits_per_worker() const {
    return config.threads > 0 ? static_cast<double>(count(Counter::Commits)) / config.threads : 0;
  }
  double throughput() const { return seconds > 0 ? static_cast<double>(count(Counter::Commits)) / seconds : 0; }
  // Fraction of attempts that a CC abort ended.
  double abort_rate() const { return abyss::abort_rate(count(Counter::Commits), count(Counter::CcAborts)); }
  double fraction(TimeCat cat) const {
    return total.total_cycles > 0 ? static_cast<double>(total[cat]) / static_cast<double>(total.total_cycles) : 0;
  }
};

}  // namespace abyss
