#pragma once
// `abyss describe`: what this binary offers, as data. Every registered scheme
// with its traits, every workload with its transaction types, and every knob
// of `abyss run` with its kind, range or choices, default, owner and JSON key.
// The harness reads this instead of keeping copies of the engine's tables.
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace abyss {

nlohmann::json describe_json();

// The same, as readable text.
std::string describe_text();

}  // namespace abyss
