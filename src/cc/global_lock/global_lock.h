#pragma once
// GLOBAL_LOCK: one lock for the whole database, taken when a transaction
// begins and released when it ends, so transactions run one at a time. It is
// the serial-execution reference: serializable by construction, never aborts,
// and its throughput is what any scheme must beat to be worth its overhead.
// Rows carry no concurrency-control state.
#include <cstdint>

#include "cc/traits.h"
#include "common/config.h"
#include "common/types.h"
#include "platform/atomic.h"
#include "platform/clock.h"
#include "platform/latch.h"
#include "stats/stats.h"

namespace abyss::cc {

class GlobalLock final {
 public:
  static constexpr SchemeTraits kTraits{
      .name = "global_lock",
      .summary = "one database-wide lock: transactions run one at a time (the serial reference)",
      .paper = "serial execution, the baseline of Abyss §2",
      .family = Family::Locking,
      .allocates_timestamps = false,  // whoever takes the lock first runs first
      .uses_latch = false,            // the lock is one word taken with compare-and-swap
      .waits = true,                  // every other transaction waits for the one running
      .aborts = false,                // one transaction at a time never conflicts
      .writes_in_place = true,        // the running transaction is the only one
  };
  struct RowMeta {};
  struct AccessMeta {};
  struct TxnMeta {
    bool held = false;
  };

  GlobalLock(const Config& /*config*/, uint32_t /*workers*/) {}

  Rc begin(auto& t, bool /*restart*/) {
    const uint64_t t0 = platform::cycles();
    platform::SpinWait spin;
    while (held_.load(platform::memory_order_relaxed) || held_.exchange(true, platform::memory_order_acquire)) {
      spin.once();
    }
    t.worker().charge(TimeCat::Wait, platform::cycles() - t0);
    t.meta().held = true;
    return Rc::Ok;
  }
  Rc read(auto& t, auto& a) {
    t.view_in_place(a);
    return Rc::Ok;
  }
  Rc write(auto& t, auto& a) {
    t.write_in_place(a);
    return Rc::Ok;
  }
  Rc upgrade(auto& /*t*/, auto& /*a*/) { return Rc::Ok; }
  Rc insert(auto& /*t*/, auto& /*a*/) { return Rc::Ok; }
  Rc commit(auto& t) {
    t.install_all();
    release(t);
    return Rc::Ok;
  }
  void abort(auto& t) { release(t); }

 private:
  void release(auto& t) {
    if (!t.meta().held) return;
    t.meta().held = false;
    held_.store(false, platform::memory_order_release);
  }

  alignas(platform::kCacheLine) platform::Atomic<bool> held_{false};
};

}  // namespace abyss::cc
