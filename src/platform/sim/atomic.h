#pragma once
// Atomic<T> on a simulated core (included by platform/atomic.h in the sim
// build). Every operation first goes through the machine, which lets the
// cores behind this one catch up and charges the coherence cost of the line,
// and then acts on a plain value: all virtual cores run on one host thread,
// one at a time, switching only inside the machine's calls, so the value
// needs no host atomic. The memory order is accepted and not modelled: the
// simulated machine is sequentially consistent.
#include <concepts>
#include <cstdint>
#include <type_traits>

#include "platform/sim/machine.h"

namespace abyss::platform {

enum class MemoryOrder : uint8_t { Relaxed, Acquire, Release, AcqRel, SeqCst };
inline constexpr MemoryOrder memory_order_relaxed = MemoryOrder::Relaxed;
inline constexpr MemoryOrder memory_order_acquire = MemoryOrder::Acquire;
inline constexpr MemoryOrder memory_order_release = MemoryOrder::Release;
inline constexpr MemoryOrder memory_order_acq_rel = MemoryOrder::AcqRel;
inline constexpr MemoryOrder memory_order_seq_cst = MemoryOrder::SeqCst;

template <class T>
class Atomic final {
  static_assert(std::is_trivially_copyable_v<T>, "an atomic word holds a trivially copyable value");

 public:
  constexpr Atomic() noexcept = default;
  constexpr Atomic(T v) noexcept : v_(v) {}  // NOLINT(google-explicit-constructor): as std::atomic
  Atomic(const Atomic&) = delete;
  Atomic& operator=(const Atomic&) = delete;

  T load(MemoryOrder /*order*/) const {
    sim::access(&v_, sim::Op::Load);
    return v_;
  }
  void store(T v, MemoryOrder /*order*/) {
    sim::access(&v_, sim::Op::Store);
    v_ = v;
  }
  T exchange(T v, MemoryOrder /*order*/) {
    sim::access(&v_, sim::Op::Rmw);
    T old = v_;
    v_ = v;
    return old;
  }
  T fetch_add(T d, MemoryOrder /*order*/) requires std::integral<T> {
    sim::access(&v_, sim::Op::Rmw);
    T old = v_;
    v_ = static_cast<T>(old + d);
    return old;
  }
  T fetch_sub(T d, MemoryOrder /*order*/) requires std::integral<T> {
    sim::access(&v_, sim::Op::Rmw);
    T old = v_;
    v_ = static_cast<T>(old - d);
    return old;
  }
  bool compare_exchange_strong(T& expected, T desired, MemoryOrder /*order*/) { return cas(expected, desired); }
  bool compare_exchange_strong(T& expected, T desired, MemoryOrder /*success*/, MemoryOrder /*failure*/) {
    return cas(expected, desired);
  }
  bool compare_exchange_weak(T& expected, T desired, MemoryOrder /*order*/) { return cas(expected, desired); }
  bool compare_exchange_weak(T& expected, T desired, MemoryOrder /*success*/, MemoryOrder /*failure*/) {
    return cas(expected, desired);
  }

 private:
  // A compare-and-swap takes the line for writing whether or not it succeeds,
  // as on x86.
  bool cas(T& expected, T desired) {
    sim::access(&v_, sim::Op::Rmw);
    if (v_ == expected) {
      v_ = desired;
      return true;
    }
    expected = v_;
    sim::observe(&v_);  // a failed swap read the value: a wait may depend on it
    return false;
  }

  T v_{};
};

}  // namespace abyss::platform
