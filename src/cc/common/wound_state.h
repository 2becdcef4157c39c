#pragma once
// The state word of a transaction that others may wound after it has shown
// them its writes or reads (PLOR, BAMBOO), and the wait on a row that gives
// up once it is wounded.
//
// Each worker's transaction is Active, Wounded (by an older transaction),
// Cascaded (it used data of a transaction that aborted) or Decided (past
// its commit decision). A wound is a compare-and-swap from Active, and so
// is the decision: a transaction past its decision can no longer be
// wounded, and one that is wounded can no longer decide. That closes the
// window between a last look at the state and the install.
#include <cstdint>
#include <memory>

#include "common/types.h"
#include "platform/atomic.h"
#include "platform/clock.h"
#include "platform/latch.h"
#include "platform/machine.h"
#include "stats/stats.h"

namespace abyss::cc {

class WoundStates {
 public:
  explicit WoundStates(uint32_t workers) : slots_(new Slot[workers]) {}

  // A new attempt starts Active. A wound is only set while its target is on
  // some row, which it left before its abort ended, hence before this.
  void begin(WorkerId w) { slot(w).store(kActive, platform::memory_order_release); }

  bool wounded(WorkerId w) const { return slot(w).load(platform::memory_order_acquire) != kActive; }
  // Why a wounded transaction aborts.
  AbortCause cause(WorkerId w) const {
    return slot(w).load(platform::memory_order_acquire) == kCascaded ? AbortCause::Cascade : AbortCause::Wound;
  }

  // Wounds `w` unless it has decided; whether it is wounded now (by this
  // call or an earlier one). `cascade`: it used data of a transaction that
  // aborted.
  bool wound(WorkerId w, bool cascade = false) {
    Kind expected = kActive;
    return slot(w).compare_exchange_strong(expected, cascade ? kCascaded : kWounded, platform::memory_order_acq_rel) ||
           expected == kWounded || expected == kCascaded;
  }

  // The commit decision: false if a wound came first.
  bool decide(WorkerId w) {
    Kind expected = kActive;
    return slot(w).compare_exchange_strong(expected, kDecided, platform::memory_order_acq_rel);
  }

 private:
  using Kind = uint8_t;
  static constexpr Kind kActive = 0;
  static constexpr Kind kWounded = 1;
  static constexpr Kind kCascaded = 2;
  static constexpr Kind kDecided = 3;

  struct alignas(platform::kCacheLine) Slot {
    platform::Atomic<Kind> state{kActive};
  };
  platform::Atomic<Kind>& slot(WorkerId w) const { return slots_[w.value].state; }

  std::unique_ptr<Slot[]> slots_;
};

// Retries `attempt()` (which takes the row's latch) until it answers true,
// giving up when the transaction is wounded; the time waited is charged to
// Wait. Between two tries it only reads the row's `generation`, which
// whoever changes what an attempt waits for bumps under the latch, and its
// own state, so waiters do not take turns at the latch while nothing
// changes. Whether the attempt succeeded.
template <class Attempt>
bool wait_on_row(auto& worker, const WoundStates& states, const platform::Atomic<uint64_t>& generation,
                 Attempt&& attempt) {
  uint64_t seen = generation.load(platform::memory_order_acquire);
  if (attempt()) return true;
  const WorkerId me = worker.id;
  const uint64_t t0 = platform::cycles();
  bool done = false;
  while (!done) {
    {
      platform::SpinWait spin;
      while (generation.load(platform::memory_order_acquire) == seen && !states.wounded(me)) spin.once();
    }
    if (states.wounded(me)) break;
    seen = generation.load(platform::memory_order_acquire);
    done = attempt();
  }
  worker.charge(TimeCat::Wait, platform::cycles() - t0);
  return done;
}

// Bumps a row's generation, under its latch: a waiter looks again.
inline void bump(platform::Atomic<uint64_t>& generation) {
  generation.store(generation.load(platform::memory_order_relaxed) + 1, platform::memory_order_release);
}

}  // namespace abyss::cc
