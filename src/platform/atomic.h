#pragma once
// The platform layer is the only code that touches hardware primitives
// (docs/architecture.md, "Layers"). Engine code uses these names; a simulated many-core
// build replaces this folder.
#include <cstddef>
#include <cstdint>

#if defined(ABYSS_SIM)
// The simulated build: Atomic<T> and the memory orders on a simulated core.
#include "platform/sim/atomic.h"
#else
#include <atomic>
#include <concepts>
#endif

namespace abyss::platform {

#if !defined(ABYSS_SIM)
using std::memory_order_acq_rel;
using std::memory_order_acquire;
using std::memory_order_relaxed;
using std::memory_order_release;
using std::memory_order_seq_cst;
using MemoryOrder = std::memory_order;

// An atomic word: std::atomic<T> with only the operations the engine uses, each
// with an explicit memory order, so a second backend (the simulator) has
// exactly these to provide and no call relies on a default order. Every method
// forwards inline, so the native build's code is std::atomic's.
template <class T>
class Atomic final {
 public:
  constexpr Atomic() noexcept = default;                 // value-initialised, as std::atomic<T> since C++20
  constexpr Atomic(T desired) noexcept : v_(desired) {}  // implicit, as std::atomic<T>
  Atomic(const Atomic&) = delete;
  Atomic& operator=(const Atomic&) = delete;

  T load(MemoryOrder order) const noexcept { return v_.load(order); }
  void store(T desired, MemoryOrder order) noexcept { v_.store(desired, order); }
  T exchange(T desired, MemoryOrder order) noexcept { return v_.exchange(desired, order); }

  T fetch_add(T arg, MemoryOrder order) noexcept requires std::integral<T> { return v_.fetch_add(arg, order); }
  T fetch_sub(T arg, MemoryOrder order) noexcept requires std::integral<T> { return v_.fetch_sub(arg, order); }

  // Blocks while the value is `old` (a futex on Linux for a 4-byte word);
  // notify_one() wakes one blocked thread. Native only: a simulated core
  // waits through platform::SpinWait.
  void wait(T old, MemoryOrder order) const noexcept { v_.wait(old, order); }
  void notify_one() noexcept { v_.notify_one(); }

  bool compare_exchange_weak(T& expected, T desired, MemoryOrder order) noexcept {
    return v_.compare_exchange_weak(expected, desired, order);
  }
  bool compare_exchange_weak(T& expected, T desired, MemoryOrder success, MemoryOrder failure) noexcept {
    return v_.compare_exchange_weak(expected, desired, success, failure);
  }
  bool compare_exchange_strong(T& expected, T desired, MemoryOrder order) noexcept {
    return v_.compare_exchange_strong(expected, desired, order);
  }
  bool compare_exchange_strong(T& expected, T desired, MemoryOrder success, MemoryOrder failure) noexcept {
    return v_.compare_exchange_strong(expected, desired, success, failure);
  }

 private:
  std::atomic<T> v_;
};
#endif  // !ABYSS_SIM
static_assert(sizeof(Atomic<uint64_t>) == sizeof(uint64_t), "the wrapper adds nothing to a row's metadata or a bucket");

// One cache line: per-worker state and contended words are aligned to it so
// workers do not false-share (Tale §5, "64-byte alignment").
inline constexpr std::size_t kCacheLine = 64;

#if defined(ABYSS_SIM)
// The simulated machine is sequentially consistent: a fence orders nothing
// more, and a spin-wait hint is a few cycles of local work.
inline void fence() {}
inline void cpu_relax() { sim::pause(); }
#else
inline void fence() { std::atomic_thread_fence(std::memory_order_seq_cst); }

// A spin-wait hint to the core (PAUSE on x86).
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}
#endif  // ABYSS_SIM

}  // namespace abyss::platform
