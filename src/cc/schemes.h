#pragma once
// The registered schemes as data, for code that needs their names, traits
// and knobs but not their classes (the command line, the knob table, reports,
// `abyss describe`).
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cc/traits.h"
#include "common/knob.h"

namespace abyss::cc {

// Every registered scheme, in registry order.
std::span<const SchemeTraits> schemes();

// The scheme named `name`, compared without regard to case (plots print
// NO_WAIT); null when there is none.
const SchemeTraits* find_scheme(std::string_view name);

// The scheme named `name` exactly; throws std::invalid_argument otherwise.
const SchemeTraits& scheme(std::string_view name);

// "none, no_wait, ...": the names, for messages.
std::string scheme_names();

// Every scheme's own knobs (CC::knobs()), each marked with its scheme, in
// registry order; a scheme without knobs adds none.
std::vector<Knob> scheme_knobs();

}  // namespace abyss::cc
