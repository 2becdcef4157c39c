#pragma once
// The run's configuration, built once by the CLI and passed down: the
// run-wide knobs are fields here, each workload's and each scheme's settings
// are a struct in its folder reached with settings<S>(); every one is a row of
// the knob table with a validated range (engine/knobs.cc).
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "common/latch_kind.h"
#include "common/log_settings.h"
#include "common/settings.h"
#include "common/storage_options.h"
#include "common/ts_alloc.h"

namespace abyss {

// The wait after a CC abort: none, random below a bound that doubles per
// abort (Tale §5), or random below a fixed bound (DBx1000's abort penalty).
enum class BackoffKind : uint8_t { None, Exp, Penalty };
inline constexpr std::array<std::string_view, 3> kBackoffNames = {"none", "exp", "penalty"};

template <std::size_t N>
std::string_view name_of(const std::array<std::string_view, N>& names, auto value) {
  return names[static_cast<std::size_t>(value)];
}

// Where a worker's per-transaction memory comes from (private copies, index
// nodes, versions): its pre-allocated arena (Tale §5) or malloc and free per
// allocation.
enum class AllocKind : uint8_t { Malloc, Arena };
inline constexpr std::array<std::string_view, 2> kAllocNames = {"malloc", "arena"};

// Reads of a table no transaction writes (TPC-C ITEM): under the scheme like
// any other, or bypassing it (Tale §5).
enum class ReadOnlyTables : uint8_t { Cc, Bypass };
inline constexpr std::array<std::string_view, 2> kReadOnlyTablesNames = {"cc", "bypass"};

// The isolation level a run asks of its scheme (--isolation): serializable,
// which every scheme gives, or a weaker one that a scheme keeping versions
// offers (SchemeTraits::weaker_isolation): snapshot isolation, or read
// committed (docs/schemes.md, "Isolation levels").
enum class Isolation : uint8_t { Serializable, Snapshot, ReadCommitted };
inline constexpr std::array<std::string_view, 3> kIsolationNames = {"serializable", "snapshot", "read-committed"};

struct Config {
  std::string workload = "ycsb";  // a registered workload's name (workload/registry.h)
  std::string cc = "no_wait";     // a registered scheme's name (cc/registry.h)
  uint32_t threads = 1;
  double duration_s = 1.0;
  double warmup_s = 0.2;
  // A window sized by what it measures (docs/many-core.md, "Steady state"):
  // with steady_commits > 0, duration_s and warmup_s are the shortest window
  // and warm-up, and the run opens windows until one holds steady_commits
  // commits per worker (and 1000 in all) and its halves' commits agree
  // within steady_tolerance, or until max_duration_s (0: 16 windows of
  // duration_s after the warm-up) has passed.
  uint32_t steady_commits = 0;
  double steady_tolerance = 0.1;
  double max_duration_s = 0;
  double max_duration() const { return max_duration_s > 0 ? max_duration_s : warmup_s + 16 * duration_s; }
  bool pin = false;
  uint64_t seed = 1;
  uint32_t queries_per_worker = 4096;  // pre-generated, served round-robin (Abyss §3.2)
  // Seconds between the per-interval samples of the window (results.samples):
  // kSampleAuto takes one a second in runs of 5 s or more and none in
  // shorter ones; 0 takes none.
  static constexpr double kSampleAuto = -1;
  double sample_interval_s = kSampleAuto;
  double sample_interval() const {
    if (sample_interval_s >= 0) return sample_interval_s;
    return duration_s >= 5 && steady_commits == 0 ? 1.0 : 0.0;
  }

  // The simulated machine (docs/many-core.md): 0 runs on this machine's
  // cores; N runs the workers on N virtual cores of `topology` (a shipped
  // name or a file) in the simulated build.
  uint32_t sim_cores = 0;
  std::string topology = "mesh";

  // One attempt in `time_sample` reads the clock around its index look-ups,
  // scheme calls and commit; the others' time is split in the proportions
  // those measured (stats.h WorkerStats::finish). Aborts, backoff and waits
  // are timed in every attempt.
  uint32_t time_sample = 8;

  // Tale §5's switches for the storage layer and the access path.
  StorageOptions storage{};
  bool prefetch = true;  // a transaction that knows its keys fetches their buckets and rows ahead
  AllocKind alloc = AllocKind::Arena;
  ReadOnlyTables read_only_tables = ReadOnlyTables::Bypass;
  bool read_copy = false;  // optimistic schemes copy a row read with read_with() (DBx1000's OCC)
  // Scans read, and inserts into ordered indexes write, next keys (txn/txn.h).
  // Off only to show that the history checker catches the phantoms it lets in.
  bool phantom_protection = true;
  Isolation isolation = Isolation::Serializable;

  TsAllocConfig ts_alloc{};
  LatchKind latch = LatchKind::Spin;
  BackoffKind backoff = BackoffKind::Exp;
  uint32_t backoff_base_ns = 1000;  // bound after the first abort, doubled per abort (Tale §5)
  uint32_t backoff_max_us = 100;
  // The bound of the random wait after the `aborts`+1-th abort of a
  // transaction: exp (Tale §5), --backoff-base-ns doubled per abort up to
  // --backoff-max-us; penalty, --backoff-max-us.
  uint64_t backoff_bound_ns(uint32_t aborts) const {
    const uint64_t cap = uint64_t{backoff_max_us} * 1000;
    if (backoff == BackoffKind::Penalty) return cap;
    const uint64_t bound = uint64_t{backoff_base_ns} << (aborts < 20 ? aborts : 20);
    return bound < cap ? bound : cap;
  }

  // Aborted transactions a worker parks while it runs new ones, each until
  // its backoff is over (DBx1000's abort buffer, 10 there); 0: a worker
  // waits out the backoff and restarts the same transaction.
  uint32_t abort_buffer = 0;

  // The settings of the workloads and the schemes, each defined in its
  // folder (workload/ycsb/ycsb_config.h, ...): settings<YcsbConfig>().theta.
  template <class S>
  S& settings() {
    return settings_.get<S>();
  }
  template <class S>
  const S& settings() const {
    return settings_.get<S>();
  }

  // How many partitions the workload's data is split into (H-STORE locks
  // them). Not a flag: the engine sets it from the workload (W::partitions)
  // before it builds the scheme.
  uint32_t partitions = 1;

  LogSettings log{};  // durability (docs/durability.md)

  std::string history_path;  // empty: no history log
  std::string dump_dir;      // empty: no dump
  std::string json_path;     // empty: no JSON report
  bool memory_check = true;  // refuse a load the machine cannot hold (engine/engine.h estimate_bytes)

  // Every knob that applies to the workload (not the output paths), under
  // the JSON keys of the knob table, which defines it (engine/knobs.cc).
  nlohmann::json to_json() const;
  // FNV-1a of the canonical JSON of to_json(): joins runs of one configuration.
  std::string hash() const;

 private:
  Settings settings_;
};

}  // namespace abyss
