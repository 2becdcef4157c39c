#include "platform/thread.h"

#include <pthread.h>
#include <sched.h>

#include <thread>
#include <vector>

namespace abyss::platform {

uint32_t hardware_cores() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : n;
}

void run_threads(uint32_t n, bool pin, const std::function<void(uint32_t)>& fn) {
  std::vector<std::thread> threads;
  threads.reserve(n);
  const uint32_t cores = hardware_cores();
  for (uint32_t i = 0; i < n; i++) {
    threads.emplace_back([&fn, i] { fn(i); });
    if (pin) {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(i % cores, &set);
      // Pinning is a performance hint; a failure (e.g. a restricted cpuset)
      // leaves the thread unpinned rather than failing the run.
      (void)pthread_setaffinity_np(threads.back().native_handle(), sizeof(set), &set);
    }
  }
  for (auto& t : threads) t.join();
}

}  // namespace abyss::platform
