#include "common/build_info.h"

#include "abyss_git_rev.h"  // generated at every build by cmake/git_rev.cmake

namespace abyss {

std::string_view git_rev() { return ABYSS_GIT_REV; }
std::string_view build_type() { return ABYSS_BUILD_TYPE; }
std::string_view compiler() { return ABYSS_COMPILER; }
std::string_view compile_flags() { return ABYSS_COMPILE_FLAGS; }

}  // namespace abyss
