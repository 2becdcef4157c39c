#pragma once
// Facts about this process and machine for reports.
#include <cstdint>
#include <functional>
#include <string>

namespace abyss::platform {

uint64_t resident_bytes();  // VmRSS

// The bytes this process can still take: the least of MemAvailable
// (/proc/meminfo), the headroom under every enclosing cgroup's memory limit
// (v2 memory.max less memory.current, v1 memory.limit_in_bytes less
// memory.usage_in_bytes, each less the reclaimable inactive file cache) and,
// under `ulimit -v`, RLIMIT_AS less VmSize. UINT64_MAX when none is known.
uint64_t available_memory_bytes();
std::string cpu_model();
// The first core's current clock from /proc/cpuinfo ("cpu MHz"); 0 when it
// does not say.
double cpu_mhz();
// This machine's name (gethostname) and kernel (uname: system, release,
// version, architecture), for a report's provenance; "unknown" when unknown.
std::string host_name();
std::string kernel();
// The real date and time in UTC, ISO 8601 to the second (also in a
// simulated build, whose clocks are virtual).
std::string utc_now();

// Whether standard error is a terminal, and one line of it rewritten in place
// (carriage return, the text, clear to the end of the line); empty text
// clears it. For progress that a log file should not get.
bool stderr_is_terminal();
void status_line(const std::string& text);
// The 1-minute load average (/proc/loadavg): how many threads were runnable
// on average; 0 when it cannot be read.
double load_average();

// Runs `fn` in a child process (fork) and waits for it to end: its exit
// status, 128 + the signal that ended it, or -1 when no child could be
// made. The child ends with _exit(0) once `fn` returns, running no
// destructors or exit handlers. For tests of code that ends its process
// (a simulated power loss); call it while the caller runs no other thread.
int run_in_child(const std::function<void()>& fn);

}  // namespace abyss::platform
