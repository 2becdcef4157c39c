#pragma once
// The platform layer is the only code that touches hardware primitives
// (docs/architecture.md, "Layers"). Engine code uses these names; a simulated many-core
// build replaces this folder.
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace abyss::platform {

template <class T>
using Atomic = std::atomic<T>;

using std::memory_order_acq_rel;
using std::memory_order_acquire;
using std::memory_order_relaxed;
using std::memory_order_release;
using std::memory_order_seq_cst;
using MemoryOrder = std::memory_order;

// One cache line: per-worker state and contended words are aligned to it so
// workers do not false-share (Tale §5, "64-byte alignment").
inline constexpr std::size_t kCacheLine = 64;

inline void fence() { std::atomic_thread_fence(std::memory_order_seq_cst); }

// A spin-wait hint to the core (PAUSE on x86).
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

}  // namespace abyss::platform
