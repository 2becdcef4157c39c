#pragma once
// One knob: a flag of `abyss run` with its kind, range or choices, default,
// owner, JSON key and help. The table of every knob is assembled by
// engine/knobs.cc from the run's rows and from each registered scheme's and
// workload's own rows (CC::knobs, Ycsb::knobs, Tpcc::knobs), so a scheme or a
// workload defines its flags in its folder. The row builders below keep rows
// short.
#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/config.h"

namespace abyss {

namespace cc {
struct SchemeTraits;
}

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
  std::string_view workload;  // empty: every workload; else the one it applies to (set by its registry)
  std::string_view scheme;    // empty: every scheme; else the one that reads it (set by its registry)
  KnobKind kind = KnobKind::Integer;
  uint64_t min = 0;  // Integer: inclusive range
  uint64_t max = 0;
  double lo = 0;  // Real: inclusive range
  double hi = 0;
  std::vector<std::string> choices;  // Choice: the allowed names
  std::string_view syntax;           // Text: what is allowed, e.g. "mutex|atomic|batch:N|clock"
  std::string_view help;
  // Why the knob changes nothing in a run of this scheme and configuration
  // (for the note printed on stderr), empty when it applies; null: it always
  // applies. A knob of one scheme (`scheme` set) needs none for the other
  // schemes: ignored_reason (engine/knobs.h) says so from `scheme`.
  std::string (*ignored_because)(const cc::SchemeTraits&, const Config&) = nullptr;
  // Why `abyss serve` refuses the flag (it shapes a timed run of generated
  // transactions, which a server does not run); empty: serve honours it as
  // run does.
  std::string_view not_served;
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

// Parses the text of a number flag. Integers accept digits and exact
// scientific notation (1e6); both refuse NaN, infinities, trailing text and
// values out of [lo, hi], with a line saying which.
std::string parse_integer(std::string_view text, uint64_t min, uint64_t max, uint64_t& out);
std::string parse_real(std::string_view text, double lo, double hi, double& out);

namespace knob_detail {
std::string quote_text(std::string_view text);
std::string lower(std::string_view text);
}  // namespace knob_detail

// ---- row builders ------------------------------------------------------------

template <class T>
inline Knob integer(std::string_view name, std::string_view json, uint64_t min, uint64_t max, T& (*field)(Config&),
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

inline Knob real(std::string_view name, std::string_view json, double lo, double hi, double& (*field)(Config&),
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
inline Knob choice(std::string_view name, std::string_view json, const std::array<std::string_view, N>& names,
                   Enum& (*field)(Config&), std::string_view help) {
  Knob k;
  k.name = name;
  k.json = json;
  k.kind = KnobKind::Choice;
  for (auto n : names) k.choices.emplace_back(n);
  k.help = help;
  k.set = [field, names](Config& c, std::string_view text) {
    const std::string want = knob_detail::lower(text);
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
inline Knob on_off(std::string_view name, std::string_view json, bool& (*field)(Config&), std::string_view help) {
  Knob k;
  k.name = name;
  k.json = json;
  k.kind = KnobKind::Choice;
  k.choices = {"on", "off"};
  k.help = help;
  k.set = [field](Config& c, std::string_view text) {
    field(c) = knob_detail::lower(text) == "on";
    return std::string();
  };
  k.get = [field](const Config& c) { return nlohmann::json(field(const_cast<Config&>(c))); };
  return k;
}

}  // namespace abyss
