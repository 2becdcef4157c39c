#pragma once
// Timestamp allocation, the four methods of Abyss §4.3 (`--ts-alloc`):
//   mutex    a counter behind a mutex (the naive critical section)
//   atomic   one atomic fetch-and-add per timestamp
//   batch:N  a worker takes N timestamps with one fetch-and-add and hands them
//            out locally; a restarted transaction takes the next one from its
//            batch, which can still be older than the timestamp that caused the
//            abort (the pathology §4.3 describes)
//   clock    the core's cycle counter with the worker id in the low bits:
//            unique without any shared write
// The method is chosen by the run's configuration (common/ts_alloc.h). This is
// allocation policy, not a platform primitive: it is written over the
// platform's atomic counter, mutex and cycle counter, so a second backend runs
// the same policy on its own primitives.
#include <cstdint>
#include <string>

#include "common/ts_alloc.h"
#include "platform/atomic.h"
#include "platform/clock.h"
#include "platform/latch.h"
#include "platform/machine.h"

namespace abyss {

// Per-worker allocation state: the unused rest of a batch.
struct TsLocal {
  uint64_t next = 0;
  uint64_t end = 0;
};

class TsSource final {
 public:
  // Bits for the worker id in Clock timestamps: up to 4096 workers (the
  // --threads bound).
  static constexpr uint32_t kWorkerBits = 12;

  explicit TsSource(TsAllocConfig cfg) : cfg_(cfg) {}

  // Unique and > 0. Monotonic per worker; across workers only Mutex and Atomic
  // are globally monotonic.
  uint64_t allocate(uint32_t worker, TsLocal& local) {
    switch (cfg_.method) {
      case TsMethod::Mutex: {
        platform::MutexGuard g(mutex_);
        return ++plain_;
      }
      case TsMethod::Atomic:
        return counter_.fetch_add(1, platform::memory_order_relaxed) + 1;
      case TsMethod::Batch:
        if (local.next == local.end) {
          local.next = counter_.fetch_add(cfg_.batch, platform::memory_order_relaxed) + 1;
          local.end = local.next + cfg_.batch;
        }
        return local.next++;
      case TsMethod::Clock:
        return (platform::cycles() << kWorkerBits) | worker;
      case TsMethod::Hardware:
        return platform::hardware_counter_next();
    }
    return 0;
  }

  const TsAllocConfig& config() const { return cfg_; }

 private:
  TsAllocConfig cfg_;
  alignas(platform::kCacheLine) platform::Atomic<uint64_t> counter_{0};
  alignas(platform::kCacheLine) platform::Mutex mutex_;
  uint64_t plain_ = 0;  // guarded by mutex_
};

}  // namespace abyss
