#include "engine/knobs.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <utility>

#include <nlohmann/json.hpp>

#include "cc/schemes.h"
#include "common/latch_kind.h"
#include "common/ts_alloc.h"
#include "platform/file.h"
#include "workload/workloads.h"

namespace abyss {

namespace {

using knob_detail::lower;
using knob_detail::quote_text;

// An output path, checked before anything runs.
Knob output(std::string_view name, bool directory, std::string& (*field)(Config&), std::string_view help) {
  Knob k;
  k.name = name;
  k.kind = KnobKind::Text;
  k.syntax = directory ? "DIR" : "FILE";
  k.help = help;
  k.set = [field, directory](Config& c, std::string_view text) {
    const std::string path(text);
    if (path.empty()) return std::string("'': a path is required (leave the flag out to write nothing)");
    const std::string err = directory ? platform::check_output_dir(path) : platform::check_output_file(path);
    if (!err.empty()) return quote_text(path) + ": cannot write there: " + err;
    field(c) = path;
    return std::string();
  };
  k.get = [field](const Config& c) { return nlohmann::json(field(const_cast<Config&>(c))); };
  return k;
}

// ---- why a knob does not apply -------------------------------------------------

std::string unless_allocates_timestamps(const cc::SchemeTraits& s, const Config& c) {
  if (s.allocates_timestamps || workload(c.workload).traits.allocates_timestamps) return "";
  return "--cc " + std::string(s.name) + " allocates no timestamps (nor does --workload " + c.workload + ")";
}
std::string unless_uses_latch(const cc::SchemeTraits& s, const Config&) {
  return s.uses_latch
             ? ""
             : "--cc " + std::string(s.name) + " has no latch to choose (its locks are compare-and-swap words)";
}
std::string unless_aborts(const cc::SchemeTraits& s, const Config&) {
  return s.aborts ? "" : "--cc " + std::string(s.name) + " never aborts a transaction";
}
std::string unless_backs_off(const cc::SchemeTraits& s, const Config& c) {
  if (!s.aborts) return unless_aborts(s, c);
  return c.backoff == BackoffKind::Exp ? "" : "it bounds --backoff exp only";
}
std::string unless_bounds_backoff(const cc::SchemeTraits& s, const Config& c) {
  if (!s.aborts) return unless_aborts(s, c);
  return c.backoff != BackoffKind::None ? "" : "--backoff none waits nothing";
}
std::string unless_simulated(const cc::SchemeTraits& /*s*/, const Config& c) {
  return c.sim_cores > 0 ? "" : "it chooses the simulated machine, used with --sim-cores N only";
}
std::string unless_steady(const cc::SchemeTraits& /*s*/, const Config& c) {
  return c.steady_commits > 0 ? "" : "it applies to windows sized by --steady-commits N only";
}
// "occ, silo, ...": the schemes of one family, for notes.
std::string family_names(cc::Family f) {
  std::string out;
  for (const cc::SchemeTraits& s : cc::schemes()) {
    if (s.family == f) out += (out.empty() ? "" : ", ") + std::string(s.name);
  }
  return out;
}
std::string unless_optimistic(const cc::SchemeTraits& s, const Config& /*c*/) {
  return s.family == cc::Family::Optimistic
             ? ""
             : "only the optimistic schemes (" + family_names(cc::Family::Optimistic) + ") read rows in place";
}
std::string unless_native(const cc::SchemeTraits& /*s*/, const Config& c) {
  return c.sim_cores == 0 ? "" : "simulated cores do not overlap misses, so nothing is fetched ahead";
}
// (A knob of one scheme is ignored under the others through its `scheme`
// field; see ignored_reason.)
std::string unless_logs(const cc::SchemeTraits& /*s*/, const Config& c) {
  return c.log.policy != LogPolicy::Off ? "" : "--log off writes no log";
}
std::string unless_logs_to_files(const cc::SchemeTraits& s, const Config& c) {
  if (c.log.policy == LogPolicy::Off) return unless_logs(s, c);
  return c.log.policy == LogPolicy::File ? "" : "--log memory writes no files";
}
std::string unless_logs_to_or_recovers_from_files(const cc::SchemeTraits& s, const Config& c) {
  return c.log.recover ? "" : unless_logs_to_files(s, c);
}

std::vector<Knob> make_table() {
  std::vector<Knob> t;
  Knob k;

  k.name = "workload";
  k.json = "workload";
  k.kind = KnobKind::Choice;
  for (const WorkloadInfo& w : workloads()) k.choices.emplace_back(w.traits.name);
  k.help = "workload";
  k.set = [](Config& c, std::string_view text) {
    c.workload = lower(text);
    return std::string();
  };
  k.get = [](const Config& c) { return nlohmann::json(c.workload); };
  t.push_back(std::move(k));

  k = Knob{};
  k.name = "cc";
  k.json = "cc";
  k.kind = KnobKind::Choice;
  for (const cc::SchemeTraits& s : cc::schemes()) k.choices.emplace_back(s.name);
  k.help = "concurrency-control scheme";
  k.set = [](Config& c, std::string_view text) {
    c.cc = std::string(cc::find_scheme(text)->name);
    return std::string();
  };
  k.get = [](const Config& c) { return nlohmann::json(c.cc); };
  t.push_back(std::move(k));

  t.push_back(integer<uint32_t>(
      "threads", "threads", 1, 4096, +[](Config& c) -> uint32_t& { return c.threads; },
      "worker threads (with --sim-cores: one per simulated core, default all of them)"));
  t.push_back(real(
      "duration", "duration_s", 0.0001, 86400, +[](Config& c) -> double& { return c.duration_s; },
      "measurement window, seconds (virtual seconds with --sim-cores)"));
  t.push_back(real(
      "warmup", "warmup_s", 0, 3600, +[](Config& c) -> double& { return c.warmup_s; },
      "warm-up before measuring, seconds (virtual seconds with --sim-cores)"));
  t.push_back(integer<uint32_t>(
      "steady-commits", "steady_commits", 0, 1'000'000'000, +[](Config& c) -> uint32_t& { return c.steady_commits; },
      "size the window by rule: open windows (--duration the shortest, --warmup the shortest warm-up before) until "
      "one holds N commits per worker and 1000 in all, its halves' commits agree within --steady-tolerance and its "
      "commit rate agrees with the one before it (the warm-up's for the first) (0: one window of --duration)"));
  k = real(
      "steady-tolerance", "steady_tolerance", 0.001, 1, +[](Config& c) -> double& { return c.steady_tolerance; },
      "how far the commits of a window's halves, and its commit rate and the one before it, may differ, as a "
      "fraction of the larger, for steady state");
  k.ignored_because = unless_steady;
  t.push_back(std::move(k));
  k = real(
      "max-duration", "max_duration_s", 0, 86400, +[](Config& c) -> double& { return c.max_duration_s; },
      "with --steady-commits: the longest warm-up and windows together, seconds (virtual with --sim-cores; 0: "
      "--warmup and 16 windows of --duration)");
  k.ignored_because = unless_steady;
  t.push_back(std::move(k));

  k = Knob{};
  k.name = "sample-interval";
  k.json = "sample_interval_s";
  k.kind = KnobKind::Text;
  k.syntax = "auto|SECONDS";
  k.help =
      "per-interval samples of the window into results.samples and a .samples.csv beside --json: every SECONDS "
      "(0: none), or auto: every second in runs of 5 s or more, none in shorter ones";
  k.set = [](Config& c, std::string_view text) {
    if (knob_detail::lower(text) == "auto") {
      c.sample_interval_s = Config::kSampleAuto;
      return std::string();
    }
    double v = 0;
    if (auto err = parse_real(text, 0, 86400, v); !err.empty()) return err + " (or auto)";
    if (v > 0 && v < 0.0001) return "'" + std::string(text) + "': below 0.0001 s; use 0 for no samples";
    c.sample_interval_s = v;
    return std::string();
  };
  k.get = [](const Config& c) {
    return c.sample_interval_s < 0 ? nlohmann::json("auto") : nlohmann::json(c.sample_interval_s);
  };
  t.push_back(std::move(k));

  k = Knob{};
  k.name = "pin";
  k.json = "pin";
  k.kind = KnobKind::Switch;
  k.help = "pin worker i to core i % cores";
  // A manifest (docs/durability.md) gives a switch's value as on or off.
  k.set = [](Config& c, std::string_view text) {
    c.pin = text != "false" && text != "off";
    return std::string();
  };
  k.get = [](const Config& c) { return nlohmann::json(c.pin); };
  t.push_back(std::move(k));

  t.push_back(integer<uint32_t>(
      "sim-cores", "sim_cores", 0, 4095, +[](Config& c) -> uint32_t& { return c.sim_cores; },
      "run on this many simulated cores, in virtual time (0: this machine's cores; docs/many-core.md)"));

  k = Knob{};
  k.name = "topology";
  k.json = "topology";
  k.kind = KnobKind::Text;
  k.syntax = "mesh|numa|host|FILE";
  k.help = "the simulated machine: mesh (Abyss §3.1), numa (Tale §2), host (this machine, calibrated) or a file";
  k.ignored_because = unless_simulated;
  k.set = [](Config& c, std::string_view text) {
    if (text.empty()) return std::string("an empty topology is not one of mesh, numa, host or a file");
    c.topology = std::string(text);
    return std::string();
  };
  k.get = [](const Config& c) { return nlohmann::json(c.topology); };
  t.push_back(std::move(k));

  t.push_back(integer<uint32_t>(
      "time-sample", "time_sample", 1, 1'000'000, +[](Config& c) -> uint32_t& { return c.time_sample; },
      "time the breakdown's per-access sections in one attempt of N and split the others' time in the same "
      "proportions (1: every attempt; aborts, backoff and waits are always timed)"));
  t.push_back(integer<uint64_t>(
      "seed", "seed", 0, std::numeric_limits<uint64_t>::max(), +[](Config& c) -> uint64_t& { return c.seed; },
      "seed of the query generators"));
  t.push_back(integer<uint32_t>(
      "queries-per-worker", "queries_per_worker", 1, 1'000'000,
      +[](Config& c) -> uint32_t& { return c.queries_per_worker; },
      "pre-generated transactions per worker, served round-robin"));

  k = Knob{};
  k.name = "ts-alloc";
  k.json = "ts_alloc";
  k.kind = KnobKind::Text;
  k.syntax = "mutex|atomic|batch:N|clock|hw";
  k.help =
      "timestamp allocation: mutex | atomic | batch:N (N in 1..1000000) | clock | hw (the simulated "
      "chip's counter, --sim-cores with --topology mesh) (Abyss §4.3)";
  k.ignored_because = unless_allocates_timestamps;
  k.set = [](Config& c, std::string_view text) {
    TsAllocConfig parsed;
    if (auto err = TsAllocConfig::parse(lower(text), parsed); !err.empty()) return err;
    c.ts_alloc = parsed;
    return std::string();
  };
  k.get = [](const Config& c) { return nlohmann::json(c.ts_alloc.to_string()); };
  t.push_back(std::move(k));

  t.push_back(choice(
      "index", "index", kIndexNames, +[](Config& c) -> IndexKind& { return c.storage.index; },
      "hash index layout: flat (cache-line buckets, one miss a probe) | chained (a node per key) (Tale §5)"));
  t.push_back(on_off(
      "huge-pages", "huge_pages", +[](Config& c) -> bool& { return c.storage.huge_pages; },
      "tables and indexes on transparent huge pages: on | off"));
  t.push_back(on_off(
      "prefetch", "prefetch", +[](Config& c) -> bool& { return c.prefetch; },
      "fetch the index buckets and rows of a transaction's known keys before its accesses: on | off"));
  t.back().ignored_because = unless_native;
  t.push_back(on_off(
      "read-copy", "read_copy", +[](Config& c) -> bool& { return c.read_copy; },
      "optimistic schemes copy every row they read into the transaction, as DBx1000's OCC does (Abyss Fig. 8's "
      "read-copy cost): on | off (off: a read in place, validated by the row's version)"));
  t.back().ignored_because = unless_optimistic;
  t.push_back(on_off(
      "phantom-protection", "phantom_protection", +[](Config& c) -> bool& { return c.phantom_protection; },
      "scans read, and inserts into ordered indexes write, the next key, so no scan misses a concurrent "
      "insert: on | off (off only to show the history checker catching phantoms)"));
  t.push_back(choice(
      "isolation", "isolation", kIsolationNames, +[](Config& c) -> Isolation& { return c.isolation; },
      "the isolation level asked of the scheme: serializable (every scheme) | snapshot | read-committed (weaker "
      "levels, offered by schemes that keep versions: abyss describe --json lists each scheme's)"));
  t.push_back(choice(
      "align", "align", kAlignNames, +[](Config& c) -> RowAlign& { return c.storage.align; },
      "rows: aligned (padded to whole cache lines) | packed (neighbours share lines) (Tale §5)"));
  t.push_back(choice(
      "alloc", "alloc", kAllocNames, +[](Config& c) -> AllocKind& { return c.alloc; },
      "a worker's private copies, index nodes and versions: arena (pre-allocated, per worker) | malloc (Tale §5)"));
  t.push_back(choice(
      "read-only-tables", "read_only_tables", kReadOnlyTablesNames,
      +[](Config& c) -> ReadOnlyTables& { return c.read_only_tables; },
      "reads of tables no transaction writes (TPC-C ITEM): bypass the scheme | cc (under it) (Tale §5)"));
  t.push_back(choice(
      "latch", "latch", kLatchNames, +[](Config& c) -> LatchKind& { return c.latch; },
      "latch for lock state (queue = MCS)"));
  t.back().ignored_because = unless_uses_latch;
  t.push_back(choice(
      "backoff", "backoff", kBackoffNames, +[](Config& c) -> BackoffKind& { return c.backoff; },
      "the wait after a CC abort: exp = random below a bound that doubles per abort (Tale §5), penalty = random "
      "below --backoff-max-us (DBx1000's abort penalty)"));
  t.back().ignored_because = unless_aborts;
  t.push_back(integer<uint32_t>(
      "backoff-base-ns", "backoff_base_ns", 0, 1'000'000'000, +[](Config& c) -> uint32_t& { return c.backoff_base_ns; },
      "bound of the exponential backoff after a first abort, nanoseconds; doubles per abort (Tale §5)"));
  t.back().ignored_because = unless_backs_off;
  t.push_back(integer<uint32_t>(
      "backoff-max-us", "backoff_max_us", 0, 1'000'000, +[](Config& c) -> uint32_t& { return c.backoff_max_us; },
      "upper bound of the backoff, microseconds (exp: of the doubling; penalty: of every wait)"));
  t.back().ignored_because = unless_bounds_backoff;
  t.push_back(integer<uint32_t>(
      "abort-buffer", "abort_buffer", 0, 1000, +[](Config& c) -> uint32_t& { return c.abort_buffer; },
      "park up to N aborted transactions, each until its backoff is over, and run new ones meanwhile (DBx1000's "
      "abort buffer; 0: wait out the backoff and restart the same transaction)"));
  t.back().ignored_because = unless_aborts;

  // Each scheme's own rows, from its folder (CC::knobs), marked with its name.
  for (Knob& k : cc::scheme_knobs()) t.push_back(std::move(k));

  // Durability (docs/durability.md).
  t.push_back(choice(
      "log", "log.policy", kLogPolicyNames, +[](Config& c) -> LogPolicy& { return c.log.policy; },
      "log committed transactions: off | memory (records built and dropped) | file (journals in --log-dir); a "
      "commit is acknowledged once durable"));
  t.push_back(choice(
      "journal", "log.journal", kJournalLayoutNames, +[](Config& c) -> JournalLayout& { return c.log.journal; },
      "shared (one journal, one latch-protected buffer) | per-worker (a journal per worker, nothing shared on the "
      "commit path)"));
  t.back().ignored_because = unless_logs;
  t.push_back(choice(
      "fsync", "log.fsync", kFsyncPolicyNames, +[](Config& c) -> FsyncPolicy& { return c.log.fsync; },
      "sync the journals: always (every commit) | group (once per group) | never (written to the OS only: "
      "survives the process, not the machine)"));
  t.back().ignored_because = unless_logs_to_files;
  t.push_back(integer<uint32_t>(
      "group-commit-us", "log.group_commit_us", 1, 10'000'000,
      +[](Config& c) -> uint32_t& { return c.log.group_commit_us; },
      "the longest a commit waits in its worker's buffer before the group is written, microseconds; also the "
      "epoch's period"));
  t.back().ignored_because = unless_logs;
  t.push_back(integer<uint32_t>(
      "checkpoint-every-ms", "log.checkpoint_every_ms", 0, 86'400'000,
      +[](Config& c) -> uint32_t& { return c.log.checkpoint_every_ms; },
      "--log file: write a checkpoint of every table this often, while the workers run, and remove the journal "
      "segments it covers, milliseconds (0: never)"));
  t.back().ignored_because = unless_logs_to_files;
  k = Knob{};
  k.name = "recover";
  k.json = "log.recover";
  k.kind = KnobKind::Switch;
  k.help =
      "start from the database the log in --log-dir holds (as abyss recover rebuilds it), with the logged run's "
      "workload, and go on logging there with --log file";
  k.set = [](Config& c, std::string_view text) {
    c.log.recover = text != "false" && text != "off";
    return std::string();
  };
  k.get = [](const Config& c) { return nlohmann::json(c.log.recover); };
  t.push_back(std::move(k));
  // A fault test, not part of the configuration's JSON (nor of a log's
  // manifest, which a recovery would read it back from).
  t.push_back(integer<uint64_t>(
      "power-loss-at", "", 1, 1'000'000'000'000, +[](Config& c) -> uint64_t& { return c.log.power_loss_at; },
      "--log file, a fault test: at the N-th write, sync, create, rename or removal of a file in --log-dir, "
      "lose what was not synced, as a power loss would, and exit 86 (docs/durability.md; the seed is --seed)"));
  t.back().ignored_because = unless_logs_to_files;

  // Each workload's own rows, from its folder (Ycsb::knobs, Tpcc::knobs).
  for (Knob& k : workload_knobs()) t.push_back(std::move(k));

  // Outputs: checked before the run, not part of the configuration's JSON.
  t.push_back(output(
      "history", false, +[](Config& c) -> std::string& { return c.history_path; },
      "write the history log (JSON lines) to FILE"));
  t.push_back(output(
      "dump", true, +[](Config& c) -> std::string& { return c.dump_dir; },
      "after the run, write DIR/<table>.csv for every table"));
  t.push_back(output(
      "log-dir", true, +[](Config& c) -> std::string& { return c.log.dir; },
      "--log file: write the journals, the epoch file and the manifest to DIR (abyss recover DIR reads them); with "
      "--recover, the log to start from"));
  // Where the journals go decides what they cost (a disk or memory): part
  // of the configuration, unlike the other outputs.
  t.back().json = "log.dir";
  t.back().get = [](const Config& c) { return c.log.dir.empty() ? nlohmann::json() : nlohmann::json(c.log.dir); };
  t.back().ignored_because = unless_logs_to_or_recovers_from_files;
  t.push_back(output(
      "ack-log", false, +[](Config& c) -> std::string& { return c.log.ack_log; },
      "--log file: append a line per commit and per acknowledgement to FILE (docs/durability.md)"));
  t.back().ignored_because = unless_logs_to_files;
  t.push_back(output(
      "json", false, +[](Config& c) -> std::string& { return c.json_path; },
      "write config and results as JSON to FILE"));
  // A safety check, not part of the configuration's JSON.
  t.push_back(on_off(
      "memory-check", "", +[](Config& c) -> bool& { return c.memory_check; },
      "refuse a run whose estimated memory exceeds what this machine has available: on | off"));

  // A server runs on real cores until it is stopped, each command a
  // transaction as it comes: what shapes a timed run of generated
  // transactions has nothing to act on there.
  constexpr std::string_view kUntilStopped = "abyss serve runs until it is stopped, with no warm-up or window";
  const std::pair<std::string_view, std::string_view> not_served[] = {
      {"duration", kUntilStopped},
      {"warmup", kUntilStopped},
      {"steady-commits", kUntilStopped},
      {"steady-tolerance", kUntilStopped},
      {"max-duration", kUntilStopped},
      {"sample-interval", kUntilStopped},
      {"time-sample", "abyss serve reports no time breakdown to sample"},
      {"queries-per-worker", "abyss serve runs the commands its clients send, not generated transactions"},
      {"abort-buffer",
       "abyss serve retries an aborted command in place: its worker has no other generated transaction to run "
       "meanwhile"},
      {"sim-cores", "abyss serve runs on real cores only"},
      {"topology", "abyss serve runs on real cores only"},
      {"json", "abyss serve writes no JSON report"},
      {"power-loss-at", "abyss serve is not a fault test: a simulated power loss ends a run at a count of file events"},
  };
  for (const auto& row : not_served) {
    const std::string_view name = row.first;
    auto it = std::find_if(t.begin(), t.end(), [&](const Knob& k) { return k.name == name; });
    if (it == t.end()) throw std::logic_error("no run knob " + std::string(name) + " to mark as not served");
    it->not_served = row.second;
  }
  return t;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); j++) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); i++) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); j++) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string check_power_loss(const Config& cfg) {
  if (cfg.log.power_loss_at == 0 || cfg.log.policy == LogPolicy::File) return {};
  return "--power-loss-at needs --log file: it loses the files of --log-dir";
}

std::span<const Knob> run_knobs() {
  static const std::vector<Knob> table = make_table();
  return table;
}

std::string ignored_reason(const Knob& k, const cc::SchemeTraits& s, const Config& cfg) {
  if (!k.scheme.empty() && k.scheme != s.name) return "it applies to --cc " + std::string(k.scheme) + " only";
  return k.ignored_because == nullptr ? "" : k.ignored_because(s, cfg);
}

std::string unserved_flag(const std::function<bool(const Knob&)>& given) {
  for (const Knob& k : run_knobs()) {
    if (!k.not_served.empty() && given(k)) return k.flag() + ": " + std::string(k.not_served);
  }
  return {};
}

const Knob* find_knob(std::string_view name) {
  for (const Knob& k : run_knobs()) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

nlohmann::json Config::to_json() const { return knobs_to_json(*this); }

nlohmann::json knobs_to_json(const Config& cfg) {
  nlohmann::json j = nlohmann::json::object();
  const std::string_view workload = cfg.workload;
  for (const Knob& k : run_knobs()) {
    if (k.json.empty() || (!k.workload.empty() && k.workload != workload)) continue;
    const std::size_t dot = k.json.find('.');
    if (dot == std::string_view::npos) {
      j[std::string(k.json)] = k.get(cfg);
    } else {
      j[std::string(k.json.substr(0, dot))][std::string(k.json.substr(dot + 1))] = k.get(cfg);
    }
  }
  return j;
}

std::vector<std::string> similar_names(std::string_view word, const std::vector<std::string>& candidates) {
  auto bare = [](std::string_view w) {
    while (!w.empty() && w.front() == '-') w.remove_prefix(1);
    return w;
  };
  const std::string_view want = bare(word);
  std::vector<std::pair<std::size_t, std::string>> scored;
  for (const std::string& c : candidates) {
    const std::string_view name = bare(c);
    const std::size_t d = edit_distance(want, name);
    const bool prefix = !want.empty() && (name.starts_with(want) || want.starts_with(name));
    if (d <= std::max<std::size_t>(2, name.size() / 4) || prefix) scored.emplace_back(prefix ? 0 : d, c);
  }
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> out;
  out.reserve(scored.size());
  for (auto& [d, name] : scored) out.push_back(std::move(name));
  return out;
}

}  // namespace abyss
