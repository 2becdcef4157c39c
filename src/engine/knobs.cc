#include "engine/knobs.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include <nlohmann/json.hpp>

#include "cc/schemes.h"
#include "common/tpcc_config.h"
#include "platform/file.h"
#include "platform/latch.h"
#include "platform/ts_source.h"

namespace abyss {

namespace {

constexpr std::string_view kKnobKindNames[] = {"integer", "real", "choice", "switch", "text"};

std::string quote_text(std::string_view text) { return "'" + std::string(text) + "'"; }

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Shortest text that reads back as the same double ("0.9999", "86400").
std::string format_real(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<int64_t>(v));
  char buf[32];
  for (int precision = 1; precision <= 17; precision++) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

// ---- row builders ------------------------------------------------------------

template <class T>
Knob integer(std::string_view name, std::string_view json, uint64_t min, uint64_t max, T& (*field)(Config&),
             std::string_view help) {
  Knob k;
  k.name = name;
  k.json = json;
  k.kind = KnobKind::Integer;
  k.min = min;
  k.max = max;
  k.help = help;
  k.set = [field, min, max](Config& c, std::string_view text) {
    uint64_t v = 0;
    if (auto err = parse_integer(text, min, max, v); !err.empty()) return err;
    field(c) = static_cast<T>(v);
    return std::string();
  };
  k.get = [field](const Config& c) { return nlohmann::json(field(const_cast<Config&>(c))); };
  return k;
}

Knob real(std::string_view name, std::string_view json, double lo, double hi, double& (*field)(Config&),
          std::string_view help) {
  Knob k;
  k.name = name;
  k.json = json;
  k.kind = KnobKind::Real;
  k.lo = lo;
  k.hi = hi;
  k.help = help;
  k.set = [field, lo, hi](Config& c, std::string_view text) {
    double v = 0;
    if (auto err = parse_real(text, lo, hi, v); !err.empty()) return err;
    field(c) = v;
    return std::string();
  };
  k.get = [field](const Config& c) { return nlohmann::json(field(const_cast<Config&>(c))); };
  return k;
}

// A choice stored as an enum whose values index `names`.
template <class Enum, std::size_t N>
Knob choice(std::string_view name, std::string_view json, const std::array<std::string_view, N>& names,
            Enum& (*field)(Config&), std::string_view help) {
  Knob k;
  k.name = name;
  k.json = json;
  k.kind = KnobKind::Choice;
  for (auto n : names) k.choices.emplace_back(n);
  k.help = help;
  k.set = [field, names](Config& c, std::string_view text) {
    const std::string want = lower(text);
    for (std::size_t i = 0; i < N; i++) {
      if (names[i] == want) {
        field(c) = static_cast<Enum>(i);
        return std::string();
      }
    }
    return std::string();  // unreachable: Knob::apply checked `choices` first
  };
  k.get = [field, names](const Config& c) {
    return nlohmann::json(names[static_cast<std::size_t>(field(const_cast<Config&>(c)))]);
  };
  return k;
}

// on | off, stored as a bool.
Knob on_off(std::string_view name, std::string_view json, bool& (*field)(Config&), std::string_view help) {
  Knob k;
  k.name = name;
  k.json = json;
  k.kind = KnobKind::Choice;
  k.choices = {"on", "off"};
  k.help = help;
  k.set = [field](Config& c, std::string_view text) {
    field(c) = lower(text) == "on";
    return std::string();
  };
  k.get = [field](const Config& c) { return nlohmann::json(field(const_cast<Config&>(c))); };
  return k;
}

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

std::string unless_allocates_timestamps(const cc::SchemeTraits& s, const Config&) {
  return s.allocates_timestamps ? "" : "--cc " + std::string(s.name) + " allocates no timestamps";
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
std::string unless_multi_partition(const cc::SchemeTraits&, const Config& c) {
  return c.ycsb.partitions > 1 && c.ycsb.parts_per_txn > 1
             ? ""
             : "a multi-partition transaction needs --partitions and --parts-per-txn above 1";
}
std::string unless_scheme(const cc::SchemeTraits& s, std::string_view name) {
  return s.name == name ? "" : "it applies to --cc " + std::string(name) + " only";
}
std::string unless_dl_detect(const cc::SchemeTraits& s, const Config&) { return unless_scheme(s, "dl_detect"); }
std::string unless_dl_searches(const cc::SchemeTraits& s, const Config& c) {
  if (s.name != "dl_detect") return unless_dl_detect(s, c);
  return c.dl_detect ? "" : "--dl-detect off searches no cycles";
}
std::string unless_mvcc(const cc::SchemeTraits& s, const Config&) { return unless_scheme(s, "mvcc"); }
std::string unless_silo(const cc::SchemeTraits& s, const Config&) { return unless_scheme(s, "silo"); }

std::vector<Knob> make_table() {
  std::vector<Knob> t;
  Knob k;

  k.name = "workload";
  k.json = "workload";
  k.kind = KnobKind::Choice;
  k.choices = {std::string(kWorkloadNames[0]), std::string(kWorkloadNames[1])};
  k.help = "workload";
  k.set = [](Config& c, std::string_view text) {
    c.workload = lower(text) == "tpcc" ? WorkloadKind::Tpcc : WorkloadKind::Ycsb;
    return std::string();
  };
  k.get = [](const Config& c) { return nlohmann::json(name_of(kWorkloadNames, c.workload)); };
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
      "threads", "threads", 1, 1024, +[](Config& c) -> uint32_t& { return c.threads; }, "worker threads"));
  t.push_back(real(
      "duration", "duration_s", 0.01, 86400, +[](Config& c) -> double& { return c.duration_s; },
      "measurement window, seconds"));
  t.push_back(real(
      "warmup", "warmup_s", 0, 3600, +[](Config& c) -> double& { return c.warmup_s; },
      "warm-up before measuring, seconds"));

  k = Knob{};
  k.name = "pin";
  k.json = "pin";
  k.kind = KnobKind::Switch;
  k.help = "pin worker i to core i % cores";
  k.set = [](Config& c, std::string_view text) {
    c.pin = text != "false";
    return std::string();
  };
  k.get = [](const Config& c) { return nlohmann::json(c.pin); };
  t.push_back(std::move(k));

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
  k.syntax = "mutex|atomic|batch:N|clock";
  k.help = "timestamp allocation: mutex | atomic | batch:N (N in 1..1000000) | clock (Abyss §4.3)";
  k.ignored_because = unless_allocates_timestamps;
  k.set = [](Config& c, std::string_view text) {
    platform::TsAllocConfig parsed;
    if (auto err = platform::TsAllocConfig::parse(lower(text), parsed); !err.empty()) return err;
    c.ts_alloc = parsed;
    return std::string();
  };
  k.get = [](const Config& c) { return nlohmann::json(c.ts_alloc.to_string()); };
  t.push_back(std::move(k));

  t.push_back(choice(
      "latch", "latch", kLatchNames, +[](Config& c) -> platform::LatchKind& { return c.latch; },
      "latch for lock state (queue = MCS)"));
  t.back().ignored_because = unless_uses_latch;
  t.push_back(choice(
      "backoff", "backoff", kBackoffNames, +[](Config& c) -> BackoffKind& { return c.backoff; },
      "after a CC abort (exp = randomised exponential)"));
  t.back().ignored_because = unless_aborts;
  t.push_back(integer<uint32_t>(
      "backoff-base-ns", "backoff_base_ns", 0, 1'000'000'000, +[](Config& c) -> uint32_t& { return c.backoff_base_ns; },
      "bound of the exponential backoff after a first abort, nanoseconds; doubles per abort (Tale §5)"));
  t.back().ignored_because = unless_backs_off;
  t.push_back(integer<uint32_t>(
      "backoff-max-us", "backoff_max_us", 0, 1'000'000, +[](Config& c) -> uint32_t& { return c.backoff_max_us; },
      "upper bound of the exponential backoff, microseconds"));
  t.back().ignored_because = unless_backs_off;
  t.push_back(integer<uint32_t>(
      "dl-timeout", "dl_timeout_us", 0, 10'000'000, +[](Config& c) -> uint32_t& { return c.dl_timeout_us; },
      "DL_DETECT: abort a lock wait after this many microseconds (0: never wait)"));
  t.back().scheme = "dl_detect";
  t.back().ignored_because = unless_dl_detect;
  t.push_back(on_off(
      "dl-detect", "dl_detect", +[](Config& c) -> bool& { return c.dl_detect; },
      "DL_DETECT: search the waits-for graph for cycles: on | off"));
  t.back().scheme = "dl_detect";
  t.back().ignored_because = unless_dl_detect;
  t.push_back(integer<uint32_t>(
      "dl-detect-every", "dl_detect_every", 1, 1'000'000, +[](Config& c) -> uint32_t& { return c.dl_detect_every; },
      "DL_DETECT: spins of a lock wait between two searches of the waits-for graph (Abyss §4.2)"));
  t.back().scheme = "dl_detect";
  t.back().ignored_because = unless_dl_searches;
  t.push_back(integer<uint32_t>(
      "dl-max-edges", "dl_max_edges", 1, 1024, +[](Config& c) -> uint32_t& { return c.dl_max_edges; },
      "DL_DETECT: waits-for edges a waiter publishes; more are dropped, the timeout still bounds the wait "
      "(Abyss §4.2)"));
  t.back().scheme = "dl_detect";
  t.back().ignored_because = unless_dl_searches;
  t.push_back(integer<uint32_t>(
      "mvcc-refresh-every", "mvcc_refresh_every", 0, 1'000'000,
      +[](Config& c) -> uint32_t& { return c.mvcc_refresh_every; },
      "MVCC: transactions a worker begins between two recomputations of its garbage-collection low-water mark "
      "(0: at every begin; Abyss §2.2)"));
  t.back().scheme = "mvcc";
  t.back().ignored_because = unless_mvcc;
  t.push_back(integer<uint32_t>(
      "silo-epoch-ms", "silo_epoch_ms", 1, 10'000, +[](Config& c) -> uint32_t& { return c.silo_epoch_ms; },
      "SILO: period of the global epoch, milliseconds (Silo §4.1)"));
  t.back().scheme = "silo";
  t.back().ignored_because = unless_silo;

  // YCSB (Abyss §3.3).
  const std::size_t ycsb_first = t.size();
  t.push_back(integer<uint64_t>(
      "rows", "ycsb.rows", 1, uint64_t{1} << 34, +[](Config& c) -> uint64_t& { return c.ycsb.rows; }, "YCSB rows"));
  t.push_back(integer<uint32_t>(
      "req-per-txn", "ycsb.req_per_txn", 1, 64, +[](Config& c) -> uint32_t& { return c.ycsb.req_per_txn; },
      "YCSB accesses per transaction"));
  t.push_back(real(
      "theta", "ycsb.theta", 0, 0.9999, +[](Config& c) -> double& { return c.ycsb.theta; },
      "YCSB Zipfian skew (0 = uniform)"));
  t.push_back(real(
      "write-ratio", "ycsb.write_ratio", 0, 1, +[](Config& c) -> double& { return c.ycsb.write_ratio; },
      "YCSB probability that an access is an update"));
  t.push_back(real(
      "read-only-txn-ratio", "ycsb.read_only_txn_ratio", 0, 1,
      +[](Config& c) -> double& { return c.ycsb.read_only_txn_ratio; }, "YCSB fraction of read-only transactions"));
  t.push_back(integer<uint32_t>(
      "partitions", "ycsb.partitions", 1, 1024, +[](Config& c) -> uint32_t& { return c.ycsb.partitions; },
      "YCSB partitions (key % partitions)"));
  t.push_back(real(
      "multi-part-ratio", "ycsb.multi_part_ratio", 0, 1, +[](Config& c) -> double& { return c.ycsb.multi_part_ratio; },
      "YCSB fraction of multi-partition transactions"));
  t.back().ignored_because = unless_multi_partition;
  t.push_back(integer<uint32_t>(
      "parts-per-txn", "ycsb.parts_per_txn", 1, 64, +[](Config& c) -> uint32_t& { return c.ycsb.parts_per_txn; },
      "YCSB partitions a multi-partition transaction touches"));
  t.push_back(choice(
      "key-order", "ycsb.key_order", kKeyOrderNames, +[](Config& c) -> KeyOrder& { return c.ycsb.key_order; },
      "YCSB order of a transaction's keys"));
  t.push_back(integer<uint32_t>(
      "fields", "ycsb.fields", 1, 64, +[](Config& c) -> uint32_t& { return c.ycsb.fields; },
      "YCSB string columns per row"));
  t.push_back(integer<uint32_t>(
      "field-size", "ycsb.field_size", 1, 4096, +[](Config& c) -> uint32_t& { return c.ycsb.field_size; },
      "YCSB bytes per string column"));
  for (std::size_t i = ycsb_first; i < t.size(); i++) t[i].workload = "ycsb";

  // TPC-C (rev 5.11, as Abyss §5.6 and Tale §4 run it).
  const std::size_t tpcc_first = t.size();
  t.push_back(integer<uint32_t>(
      "warehouses", "tpcc.warehouses", 1, 1024, +[](Config& c) -> uint32_t& { return c.tpcc.warehouses; },
      "TPC-C warehouses (H-STORE: one partition each)"));
  t.push_back(choice(
      "tpcc-schema", "tpcc.schema", kTpccSchemaNames, +[](Config& c) -> TpccSchema& { return c.tpcc.schema; },
      "TPC-C cardinalities: full (the spec's) or small (DBx1000's, as in Abyss)"));
  t.push_back(on_off(
      "tpcc-inserts", "tpcc.inserts", +[](Config& c) -> bool& { return c.tpcc.inserts; },
      "TPC-C: insert ORDER, NEW-ORDER, ORDER-LINE and HISTORY rows: on | off (DBx1000's variant)"));
  k = Knob{};
  k.name = "tpcc-mix";
  k.json = "tpcc.mix";
  k.kind = KnobKind::Text;
  k.syntax = "neworder=P,payment=P";
  k.help = "TPC-C transaction mix in percent, e.g. neworder=50,payment=50";
  k.set = [](Config& c, std::string_view text) { return parse_tpcc_mix(lower(text), c.tpcc.mix); };
  k.get = [](const Config& c) { return nlohmann::json(tpcc_mix_string(c.tpcc.mix)); };
  t.push_back(std::move(k));
  for (std::size_t i = tpcc_first; i < t.size(); i++) t[i].workload = "tpcc";

  // Outputs: checked before the run, not part of the configuration's JSON.
  t.push_back(output(
      "history", false, +[](Config& c) -> std::string& { return c.history_path; },
      "write the history log (JSON lines) to FILE"));
  t.push_back(output(
      "dump", true, +[](Config& c) -> std::string& { return c.dump_dir; },
      "after the run, write DIR/<table>.csv for every table"));
  t.push_back(output(
      "json", false, +[](Config& c) -> std::string& { return c.json_path; },
      "write config and results as JSON to FILE"));
  // A safety check, not part of the configuration's JSON.
  t.push_back(on_off(
      "memory-check", "", +[](Config& c) -> bool& { return c.memory_check; },
      "refuse a run whose estimated memory exceeds what this machine has available: on | off"));
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

std::string_view name_of(KnobKind k) { return kKnobKindNames[static_cast<std::size_t>(k)]; }

std::string Knob::allowed() const {
  switch (kind) {
    case KnobKind::Integer:
      return "an integer from " + std::to_string(min) + " to " + std::to_string(max);
    case KnobKind::Real:
      return "a number from " + format_real(lo) + " to " + format_real(hi);
    case KnobKind::Choice: {
      std::string out = "one of ";
      for (std::size_t i = 0; i < choices.size(); i++) out += (i ? ", " : "") + choices[i];
      return out;
    }
    case KnobKind::Switch:
      return "no value";
    case KnobKind::Text:
      return std::string(syntax);
  }
  return {};
}

std::string Knob::apply(Config& cfg, std::string_view text) const {
  if (kind == KnobKind::Choice) {
    const std::string want = lower(text);
    if (std::find(choices.begin(), choices.end(), want) == choices.end()) {
      return quote_text(text) + ": not " + allowed();
    }
  }
  return set(cfg, text);
}

nlohmann::json Config::to_json() const { return knobs_to_json(*this); }

std::span<const Knob> run_knobs() {
  static const std::vector<Knob> table = make_table();
  return table;
}

const Knob* find_knob(std::string_view name) {
  for (const Knob& k : run_knobs()) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

std::string parse_integer(std::string_view text, uint64_t min, uint64_t max, uint64_t& out) {
  const std::string allowed = "allowed: an integer from " + std::to_string(min) + " to " + std::to_string(max);
  if (text.empty()) return "'': not a number; " + allowed;
  uint64_t v = 0;
  const char* first = text.data();
  const char* last = text.data() + text.size();
  const auto [end, ec] = std::from_chars(first, last, v);
  if (ec == std::errc::result_out_of_range) return quote_text(text) + ": above " + std::to_string(max) + "; " + allowed;
  if (ec != std::errc() || end != last) {
    // Not plain digits: a negative number, scientific notation (1e6) or not a number at all.
    const std::string s(text);
    char* stop = nullptr;
    const long double d = std::strtold(s.c_str(), &stop);
    if (stop == s.c_str() || *stop != '\0' || std::isspace(static_cast<unsigned char>(s[0])) != 0) {
      return quote_text(text) + ": not a number; " + allowed;
    }
    if (std::isnan(d)) return quote_text(text) + ": not a number; " + allowed;
    if (std::isinf(d)) return quote_text(text) + ": not finite; " + allowed;
    if (d != std::floor(d)) return quote_text(text) + ": not an integer; " + allowed;
    if (d < static_cast<long double>(min)) return quote_text(text) + ": below " + std::to_string(min) + "; " + allowed;
    if (d > static_cast<long double>(max)) return quote_text(text) + ": above " + std::to_string(max) + "; " + allowed;
    v = static_cast<uint64_t>(d);
  }
  if (v < min) return quote_text(text) + ": below " + std::to_string(min) + "; " + allowed;
  if (v > max) return quote_text(text) + ": above " + std::to_string(max) + "; " + allowed;
  out = v;
  return {};
}

std::string parse_real(std::string_view text, double lo, double hi, double& out) {
  const std::string allowed = "allowed: a number from " + format_real(lo) + " to " + format_real(hi);
  const std::string s(text);
  if (s.empty()) return "'': not a number; " + allowed;
  char* stop = nullptr;
  const double v = std::strtod(s.c_str(), &stop);
  if (stop == s.c_str() || *stop != '\0' || std::isspace(static_cast<unsigned char>(s[0])) != 0) {
    return quote_text(text) + ": not a number; " + allowed;
  }
  if (std::isnan(v)) return quote_text(text) + ": not a number; " + allowed;
  if (std::isinf(v)) return quote_text(text) + ": not finite; " + allowed;
  if (v < lo) return quote_text(text) + ": below " + format_real(lo) + "; " + allowed;
  if (v > hi) return quote_text(text) + ": above " + format_real(hi) + "; " + allowed;
  out = v;
  return {};
}

nlohmann::json knobs_to_json(const Config& cfg) {
  nlohmann::json j = nlohmann::json::object();
  const std::string_view workload = name_of(kWorkloadNames, cfg.workload);
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
