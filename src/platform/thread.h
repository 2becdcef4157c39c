#pragma once
// Worker threads. Engine code hands a function per worker; the platform runs
// them (one OS thread each here; fibers on virtual cores in the simulated build).
// Set-up work that is not measured goes through run_parallel instead.
#include <cstdint>
#include <functional>
#include <memory>

namespace abyss::platform {

// Runs fn(i) for i in [0, n) on n threads and waits for all of them. With pin,
// worker i is bound to core i % cores. If any fn(i) throws, the others still
// run to their end; once all are joined, the first exception thrown is
// rethrown here (so a std::bad_alloc in a loader ends the run with a message,
// not std::terminate). If a thread cannot be created, none of the fn runs and
// that error is thrown.
void run_threads(uint32_t n, bool pin, const std::function<void(uint32_t)>& fn);

// Runs fn(i) for i in [0, n) in parallel, for set-up work outside the
// measurement (loading the tables), with run_threads' exception behaviour.
// Natively run_threads(n, false, fn); a simulated backend runs it on the host,
// never on simulated cores, so loading costs no simulated time.
void run_parallel(uint32_t n, const std::function<void(uint32_t)>& fn);

uint32_t hardware_cores();

// One thread started on its own, outside run_threads' fixed set: a server's
// thread for one connection, created when the connection arrives and ended
// when it closes. join() waits for fn to return; the destructor joins. fn
// must not throw. Natively an OS thread; creating one that the system
// refuses throws std::system_error. A simulated build has no such thread
// (its cores run run_threads' workers only): the constructor throws
// std::logic_error.
class Thread final {
 public:
  Thread();
  explicit Thread(std::function<void()> fn);
  ~Thread();
  Thread(Thread&& o) noexcept;
  Thread& operator=(Thread&& o) noexcept;
  Thread(const Thread&) = delete;
  Thread& operator=(const Thread&) = delete;

  bool joinable() const { return impl_ != nullptr; }
  void join();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace abyss::platform
