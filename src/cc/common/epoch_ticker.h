#pragma once
// A global epoch that advances every few milliseconds (Silo §4.1), shared by
// the schemes that give their versions a coarse order by it (`silo`) or age
// what they learn about rows by it (`mocc`'s temperatures).
//
// Silo advances the epoch from a designated thread; abyss has worker 0 do it
// when it begins a transaction, so the ticker needs no thread of its own. Worker
// 0 is the only writer of the epoch and the only reader or writer of the next
// tick; the other workers only read the epoch.
#include <cstdint>

#include "common/types.h"
#include "platform/atomic.h"
#include "platform/clock.h"

namespace abyss::cc {

class EpochTicker {
 public:
  explicit EpochTicker(uint32_t period_ms)
      : period_cycles_(static_cast<uint64_t>(period_ms * 1e6 * platform::cycles_per_ns())),
        next_tick_(platform::cycles() + period_cycles_) {}

  // Called by each worker as it begins a transaction: worker 0 advances the
  // epoch once its period has passed.
  void tick(WorkerId worker) {
    if (worker != WorkerId{0}) return;
    const uint64_t now = platform::cycles();
    if (now < next_tick_) return;
    epoch_.store(epoch_.load(platform::memory_order_relaxed) + 1, platform::memory_order_release);
    next_tick_ = now + period_cycles_;
  }

  // The current epoch; 0 is the load's, so the first one a run sees is 1.
  uint64_t epoch(platform::MemoryOrder order = platform::memory_order_acquire) const { return epoch_.load(order); }

 private:
  alignas(platform::kCacheLine) platform::Atomic<uint64_t> epoch_{1};
  // Worker 0's alone, on their own line so the epoch's readers never share it.
  alignas(platform::kCacheLine) const uint64_t period_cycles_;
  uint64_t next_tick_;  // cycles at which worker 0 next advances the epoch
};

}  // namespace abyss::cc
