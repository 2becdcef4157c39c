#pragma once
// Facts about this process and machine for reports.
#include <cstdint>
#include <string>

namespace abyss::platform {

uint64_t resident_bytes();  // VmRSS
std::string cpu_model();
// The 1-minute load average (/proc/loadavg): how many threads were runnable
// on average; 0 when it cannot be read.
double load_average();

}  // namespace abyss::platform
