#pragma once
// The knob table: every flag of `abyss run` is one row here, defined once
// with its name, kind, range or choices, default, owner (every run, one
// workload or one scheme), JSON key and help text. The command line, the
// validation of each value, the errors for a flag of another workload, the
// notes for a flag the chosen scheme ignores, Config::to_json's keys and
// `abyss describe --json` all read this table.
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "cc/traits.h"
#include "common/config.h"

namespace abyss {

enum class KnobKind : uint8_t {
  Integer,  // a whole number in [lo, hi]; 1e3 is accepted as 1000
  Real,     // a finite number in [lo, hi]
  Choice,   // one of `choices`, compared without regard to case
  Switch,   // a bare flag (--pin): given or not
  Text,     // a value with its own syntax (`syntax` says what is allowed)
};
std::string_view name_of(KnobKind k);

struct Knob {
  std::string_view name;      // the flag is --name
  std::string_view json;      // dotted key under "config" in a run's JSON report
  std::string_view workload;  // empty: every workload; else the one it applies to
  std::string_view scheme;    // empty: every scheme; else the one that reads it
  KnobKind kind = KnobKind::Integer;
  uint64_t min = 0;  // Integer: inclusive range
  uint64_t max = 0;
  double lo = 0;  // Real: inclusive range
  double hi = 0;
  std::vector<std::string> choices;  // Choice: the allowed names
  std::string_view syntax;           // Text: what is allowed, e.g. "mutex|atomic|batch:N|clock"
  std::string_view help;
  // Whether the knob changes a run of this scheme and configuration, and
  // why not when it does not (for the note printed on stderr). Null: always.
  std::string (*ignored_because)(const cc::SchemeTraits&, const Config&) = nullptr;
  // Stores text into the config; returns an error line naming the value and
  // what is allowed (without the flag, which the caller prefixes), or empty.
  std::function<std::string(Config&, std::string_view)> set;
  // The value in `cfg`, as it goes into JSON and `describe`'s defaults.
  std::function<nlohmann::json(const Config&)> get;

  std::string flag() const { return "--" + std::string(name); }
  // Checks and stores a value given on the command line; an error line as `set`.
  std::string apply(Config& cfg, std::string_view text) const;
  // "an integer from 1 to 1024", "one of spin, queue", ...: for messages and --help.
  std::string allowed() const;
};

// Every knob of `abyss run`, in the order of --help.
std::span<const Knob> run_knobs();

// The knob named `name` (without dashes); null when there is none.
const Knob* find_knob(std::string_view name);

// Parses the text of a number flag. Integers accept digits and exact
// scientific notation (1e6); both refuse NaN, infinities, trailing text and
// values out of [lo, hi], with a line saying which.
std::string parse_integer(std::string_view text, uint64_t min, uint64_t max, uint64_t& out);
std::string parse_real(std::string_view text, double lo, double hi, double& out);

// Config::to_json's content, from the table: every knob that applies to the
// configured workload, under its JSON key.
nlohmann::json knobs_to_json(const Config& cfg);

// The close matches for a misspelt name among `candidates` ("--thread" ->
// "--threads"; leading dashes are ignored), best first; empty when nothing
// is close.
std::vector<std::string> similar_names(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace abyss
