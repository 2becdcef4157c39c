#pragma once
// The registered schemes as data, for code that needs their names and traits
// but not their classes (the command line, reports, `abyss describe`).
#include <span>
#include <string>
#include <string_view>

#include "cc/traits.h"

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

}  // namespace abyss::cc
