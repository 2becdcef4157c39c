// The worker functions of platform/thread.h on the simulated machine.
#include <stdexcept>
#include <thread>

#include "platform/sim/machine.h"
#include "platform/thread.h"

namespace abyss::platform {

void run_threads(uint32_t n, bool /*pin*/, const std::function<void(uint32_t)>& fn) { sim::run(n, fn); }

// Set-up is not part of what is simulated: it runs on the host, one part
// after another.
void run_parallel(uint32_t n, const std::function<void(uint32_t)>& fn) {
  for (uint32_t i = 0; i < n; i++) fn(i);
}

// The simulated cores run run_threads' workers only: a thread started on its
// own would run on the host, outside the simulated time.
struct Thread::Impl {};

// NOLINTNEXTLINE(performance-unnecessary-value-param): the signature is the native one, which keeps fn
Thread::Thread(std::function<void()> /*fn*/) {
  throw std::logic_error("a simulated build starts no thread outside its workers (platform::Thread)");
}
Thread::Thread() = default;
Thread::~Thread() = default;
Thread::Thread(Thread&& o) noexcept = default;
Thread& Thread::operator=(Thread&& o) noexcept = default;
void Thread::join() { impl_.reset(); }

// The host's: set-up work (loading) runs on the host (the simulated cores
// are platform::machine_info().cores).
uint32_t hardware_cores() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : n;
}

}  // namespace abyss::platform
