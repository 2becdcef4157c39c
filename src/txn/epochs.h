#pragma once
// When a row slot no transaction can reach may be used again: epoch-based
// reclamation over the workers of a run.
//
// A removed row leaves every index at its removal's install (or, under a
// scheme that keeps versions, when its entries are reclaimed), and an aborted
// insert never entered one; from then on no transaction can find the row.
// But one that found it before may still hold the pointer, and holds it until
// its attempt ends (its accesses, a lock request queued in the row's
// metadata, a next key it validates at commit). So the slot waits:
//
//   - Each worker announces, at every begin, the global epoch it saw: every
//     row pointer it reads in that attempt was reachable in that epoch or a
//     later one. A worker that has stopped announces nothing (idle).
//   - A worker retires a slot under the global epoch it reads once the slot
//     is unreachable.
//   - The global epoch moves from e to e + 1 only when every worker that is
//     not idle has announced e.
//   - A slot retired in epoch e is free once the global epoch reaches e + 2:
//     every worker that could have read its pointer announced e or earlier,
//     and the epoch could not have passed e + 1 until each began again.
//
// The announcement is an exchange, so it is ordered before the attempt's
// reads of shared memory; a reader's last use of a slot happens before its
// next announcement, which happens before the advance that frees the slot.
#include <cstdint>
#include <memory>

#include "platform/atomic.h"

namespace abyss {

class Epochs final {
 public:
  explicit Epochs(uint32_t workers) : workers_(workers), slots_(std::make_unique<Slot[]>(workers)) {}

  // At each begin, before the attempt reads anything shared.
  void enter(uint32_t worker) {
    slots_[worker].epoch.exchange(global_.load(platform::memory_order_acquire), platform::memory_order_seq_cst);
  }
  // When the worker stops running transactions.
  void leave(uint32_t worker) { slots_[worker].epoch.store(kIdle, platform::memory_order_release); }

  uint64_t now() const { return global_.load(platform::memory_order_acquire); }

  // Moves the global epoch on if every worker that is not idle has announced
  // the current one; answers the epoch now. Reads every worker's slot, so
  // callers try it now and then, not at every begin.
  uint64_t try_advance() {
    uint64_t e = now();
    for (uint32_t w = 0; w < workers_; w++) {
      const uint64_t seen = slots_[w].epoch.load(platform::memory_order_acquire);
      if (seen != kIdle && seen != e) return e;
    }
    if (global_.compare_exchange_strong(e, e + 1, platform::memory_order_acq_rel, platform::memory_order_acquire)) {
      return e + 1;
    }
    return e;  // another worker moved it: `e` holds the epoch it found
  }

  // Whether a slot retired in `epoch` is free when the global epoch is `now`.
  static bool free_at(uint64_t epoch, uint64_t now) { return now >= epoch + 2; }

 private:
  static constexpr uint64_t kIdle = 0;  // the global epoch starts at 1

  struct alignas(platform::kCacheLine) Slot {
    platform::Atomic<uint64_t> epoch{kIdle};
  };

  alignas(platform::kCacheLine) platform::Atomic<uint64_t> global_{1};
  const uint32_t workers_;
  std::unique_ptr<Slot[]> slots_;
};

}  // namespace abyss
