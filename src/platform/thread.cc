#include "platform/thread.h"

#include <pthread.h>
#include <sched.h>

#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace abyss::platform {

uint32_t hardware_cores() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : n;
}

void run_threads(uint32_t n, bool pin, const std::function<void(uint32_t)>& fn) {
  // An exception escaping a std::thread's function calls std::terminate, so a
  // std::bad_alloc in one loader would abort the process. Each thread catches
  // what fn throws; the first one thrown is kept and rethrown here once every
  // thread has been joined (the others run to their end).
  std::mutex mutex;
  std::condition_variable started;
  enum class Gate : uint8_t { Wait, Go, Cancel };
  Gate gate = Gate::Wait;
  std::exception_ptr first;

  // No fn starts until every thread exists: if creating one fails (EAGAIN,
  // or no memory for its stack), the others are cancelled before running,
  // so no fn waits forever for a peer that never started.
  auto body = [&](uint32_t i) {
    {
      std::unique_lock<std::mutex> g(mutex);
      started.wait(g, [&] { return gate != Gate::Wait; });
      if (gate == Gate::Cancel) return;
    }
    try {
      fn(i);
    } catch (...) {
      std::lock_guard<std::mutex> g(mutex);
      if (!first) first = std::current_exception();
    }
  };
  auto open_gate = [&](Gate to) {
    {
      std::lock_guard<std::mutex> g(mutex);
      gate = to;
    }
    started.notify_all();
  };

  std::vector<std::thread> threads;
  const uint32_t cores = hardware_cores();
  try {
    threads.reserve(n);
    for (uint32_t i = 0; i < n; i++) {
      threads.emplace_back(body, i);
      if (pin) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(i % cores, &set);
        // Pinning is a performance hint; a failure (e.g. a restricted cpuset)
        // leaves the thread unpinned rather than failing the run.
        (void)pthread_setaffinity_np(threads.back().native_handle(), sizeof(set), &set);
      }
    }
  } catch (...) {
    open_gate(Gate::Cancel);
    for (auto& t : threads) t.join();
    throw;
  }
  open_gate(Gate::Go);
  for (auto& t : threads) t.join();
  if (first) std::rethrow_exception(first);
}

void run_parallel(uint32_t n, const std::function<void(uint32_t)>& fn) { run_threads(n, false, fn); }

struct Thread::Impl {
  std::thread thread;
};

Thread::Thread(std::function<void()> fn) : impl_(std::make_unique<Impl>()) {
  impl_->thread = std::thread(std::move(fn));
}

Thread::Thread() = default;
Thread::~Thread() { join(); }

Thread::Thread(Thread&& o) noexcept = default;

Thread& Thread::operator=(Thread&& o) noexcept {
  if (this != &o) {
    join();
    impl_ = std::move(o.impl_);
  }
  return *this;
}

void Thread::join() {
  if (impl_ == nullptr) return;
  if (impl_->thread.joinable()) impl_->thread.join();
  impl_.reset();
}

}  // namespace abyss::platform
