#pragma once
// What a report says about the binary that produced it.
#include <string_view>

namespace abyss {

// The commit the binary was built from ("-dirty" when tracked files had
// changes), or "unknown" outside a git checkout.
std::string_view git_rev();

// CMAKE_BUILD_TYPE, plus "+<sanitizers>" in a sanitizer build.
std::string_view build_type();

// The C++ compiler ("GNU 12.2.0") and the flags of this build type
// (CMAKE_CXX_FLAGS and CMAKE_CXX_FLAGS_<TYPE>, and the sanitizers').
std::string_view compiler();
std::string_view compile_flags();

}  // namespace abyss
