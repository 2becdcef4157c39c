#include "platform/process.h"

#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <limits>
#include <sstream>

namespace abyss::platform {

namespace {

// The number after `key` on the line of `path` that starts with it, times
// `unit`; false when there is no such line.
bool read_field(const std::string& path, const std::string& key, uint64_t unit, uint64_t& out) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) == 0) {
      std::istringstream rest(line.substr(key.size()));
      uint64_t v = 0;
      if (!(rest >> v)) return false;
      out = v * unit;
      return true;
    }
  }
  return false;
}

// A file holding one number; false if it is missing or says "max".
bool read_number(const std::string& path, uint64_t& out) {
  std::ifstream in(path);
  return static_cast<bool>(in >> out);
}

// The headroom under the memory limits of `dir` and every cgroup above it up
// to `root`: limit - (usage - inactive file cache), the least over the levels.
void cgroup_headroom(std::string dir, const std::string& root, const char* limit_file, const char* usage_file,
                     const char* inactive_key, uint64_t& best) {
  for (;;) {
    uint64_t limit = 0;
    uint64_t usage = 0;
    // v1 reports "no limit" as a huge number (PAGE_COUNTER_MAX pages).
    if (read_number(dir + "/" + limit_file, limit) && limit < (uint64_t{1} << 62) &&
        read_number(dir + "/" + usage_file, usage)) {
      uint64_t inactive = 0;
      read_field(dir + "/memory.stat", inactive_key, 1, inactive);
      const uint64_t used = usage > inactive ? usage - inactive : 0;
      best = std::min(best, limit > used ? limit - used : 0);
    }
    if (dir.size() <= root.size()) return;
    dir.erase(dir.rfind('/'));
  }
}

}  // namespace

uint64_t resident_bytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  }
  return 0;
}

uint64_t available_memory_bytes() {
  uint64_t best = std::numeric_limits<uint64_t>::max();
  uint64_t v = 0;
  if (read_field("/proc/meminfo", "MemAvailable:", 1024, v)) best = v;

  // This process's cgroups: "0::/path" (v2) and "N:...memory...:/path" (v1).
  // Inside a container the path may not exist under the mount; then the
  // mount's root is the process's cgroup.
  std::ifstream cg("/proc/self/cgroup");
  std::string line;
  while (std::getline(cg, line)) {
    const auto c1 = line.find(':');
    const auto c2 = line.find(':', c1 + 1);
    if (c1 == std::string::npos || c2 == std::string::npos) continue;
    const std::string controllers = line.substr(c1 + 1, c2 - c1 - 1);
    std::string path = line.substr(c2 + 1);
    if (path == "/") path.clear();
    std::string root;
    const char* limit_file = nullptr;
    const char* usage_file = nullptr;
    const char* inactive_key = nullptr;
    if (controllers.empty()) {
      root = "/sys/fs/cgroup";
      limit_file = "memory.max";
      usage_file = "memory.current";
      inactive_key = "inactive_file ";
    } else if (("," + controllers + ",").find(",memory,") != std::string::npos) {
      root = "/sys/fs/cgroup/memory";
      limit_file = "memory.limit_in_bytes";
      usage_file = "memory.usage_in_bytes";
      inactive_key = "total_inactive_file ";
    } else {
      continue;
    }
    std::string dir = root + path;
    if (!std::ifstream(dir + "/" + usage_file)) dir = root;
    cgroup_headroom(dir, root, limit_file, usage_file, inactive_key, best);
  }

  // `ulimit -v` bounds the address space, reserved or not.
  rlimit as{};
  if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY &&
      read_field("/proc/self/status", "VmSize:", 1024, v)) {
    best = std::min<uint64_t>(best, as.rlim_cur > v ? as.rlim_cur - v : 0);
  }
  return best;
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

double cpu_mhz() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("cpu MHz", 0) == 0) {
      const auto colon = line.find(':');
      if (colon == std::string::npos) return 0;
      std::istringstream rest(line.substr(colon + 1));
      double mhz = 0;
      return rest >> mhz ? mhz : 0;
    }
  }
  return 0;
}

std::string host_name() {
  std::array<char, 256> name{};
  if (gethostname(name.data(), name.size() - 1) != 0) return "unknown";
  return name.data();
}

std::string kernel() {
  utsname u{};
  if (uname(&u) != 0) return "unknown";
  return std::string(u.sysname) + " " + u.release + " " + u.version + " " + u.machine;
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  if (gmtime_r(&now, &utc) == nullptr) return "unknown";
  std::array<char, 32> text{};
  return std::strftime(text.data(), text.size(), "%Y-%m-%dT%H:%M:%SZ", &utc) > 0 ? text.data() : "unknown";
}

bool stderr_is_terminal() { return isatty(STDERR_FILENO) == 1; }

void status_line(const std::string& text) {
  std::fprintf(stderr, "\r%s\033[K", text.c_str());
  std::fflush(stderr);
}

double load_average() {
  std::ifstream in("/proc/loadavg");
  double one_minute = 0;
  if (!(in >> one_minute)) return 0;
  return one_minute;
}

int run_in_child(const std::function<void()>& fn) {
  const pid_t pid = ::fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    fn();
    ::_exit(0);
  }
  int status = 0;
  pid_t got = -1;
  do {
    got = ::waitpid(pid, &status, 0);
  } while (got < 0 && errno == EINTR);
  if (got < 0) return -1;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
}

}  // namespace abyss::platform
