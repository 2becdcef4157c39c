#pragma once
// Facts about this process and machine for reports.
#include <cstdint>
#include <string>

namespace abyss::platform {

uint64_t resident_bytes();  // VmRSS
std::string cpu_model();

}  // namespace abyss::platform
