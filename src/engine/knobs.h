#pragma once
// The knob table: every flag of `abyss run` is one row (common/knob.h), defined once
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
#include "common/knob.h"

namespace abyss {

// Every knob of `abyss run`, in the order of --help.
std::span<const Knob> run_knobs();

// The knob named `name` (without dashes); null when there is none.
const Knob* find_knob(std::string_view name);

// Why `k` changes nothing in a run of scheme `s` with `cfg`, for the note on
// stderr; empty when it applies. A knob owned by another scheme never applies;
// otherwise its own `ignored_because` decides.
std::string ignored_reason(const Knob& k, const cc::SchemeTraits& s, const Config& cfg);

// The first flag `given` says was given that `abyss serve` refuses, with
// why (Knob::not_served); empty when there is none.
std::string unserved_flag(const std::function<bool(const Knob&)>& given);

// --power-loss-at's condition: --log file, whose directory it loses; the
// error line, or empty.
std::string check_power_loss(const Config& cfg);

// Config::to_json's content, from the table: every knob that applies to the
// configured workload, under its JSON key.
nlohmann::json knobs_to_json(const Config& cfg);

// The close matches for a misspelt name among `candidates` ("--thread" ->
// "--threads"; leading dashes are ignored), best first; empty when nothing
// is close.
std::vector<std::string> similar_names(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace abyss
