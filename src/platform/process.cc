#include "platform/process.h"

#include <fstream>

namespace abyss::platform {

uint64_t resident_bytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  }
  return 0;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "unknown";
}

double load_average() {
  std::ifstream in("/proc/loadavg");
  double one_minute = 0;
  if (!(in >> one_minute)) return 0;
  return one_minute;
}

}  // namespace abyss::platform
