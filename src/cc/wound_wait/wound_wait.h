#pragma once
// WOUND_WAIT: 2PL with wound-wait deadlock prevention (Rosenkrantz et al.;
// the Tale §5 recommends it over WAIT_DIE). A requester wounds every younger
// transaction that holds or is queued for the row, then queues; a younger
// requester simply waits for older ones. A wounded transaction aborts at its
// next access or while it waits; one that has finished its accesses commits
// and releases anyway. Every wait thus points to an older transaction or to a
// wounded one that is about to let go, so no deadlock can form. A restarted
// transaction keeps its timestamp, so it ages and eventually wounds others.
#include <cstdint>
#include <memory>
#include <string_view>

#include "cc/common/wait.h"
#include "cc/lock/row_lock.h"
#include "cc/traits.h"
#include "common/config.h"
#include "common/types.h"
#include "platform/atomic.h"

namespace abyss::cc {

class WoundWait final {
 public:
  static constexpr SchemeTraits kTraits{
      .name = "wound_wait",
      .summary = "2PL, an older requester wounds younger holders, a younger one waits",
      .paper = "Tale §5 (Rosenkrantz et al.)",
      .family = Family::Locking,
      .allocates_timestamps = true,  // a transaction's age decides whom it wounds
      .uses_latch = true,            // the row's lock queue sits behind a latch
      .waits = true,                 // a younger requester queues for the lock
  };
  struct RowMeta {
    RowLock lock;
  };
  struct AccessMeta {
    LockRequest req;
  };
  struct TxnMeta {
    uint64_t ts = 0;
  };

  WoundWait(const Config& config, uint32_t workers) : latch_(config.latch), wounded_(new Slot[workers]) {}

  Rc begin(auto& t, bool restart) {
    if (!restart) t.meta().ts = t.worker().allocate_ts();
    // A wound is only ever set while its victim holds a request, which is
    // before the victim's abort released it, hence before this begin.
    wounded_[t.worker().id].flag.store(false, platform::memory_order_relaxed);
    return Rc::Ok;
  }

  Rc read(auto& t, auto& a) {
    if (Rc rc = acquire(t, a, LockMode::Shared); rc != Rc::Ok) return rc;
    t.view_in_place(a);
    return Rc::Ok;
  }

  Rc write(auto& t, auto& a) {
    if (Rc rc = acquire(t, a, LockMode::Exclusive); rc != Rc::Ok) return rc;
    t.snapshot(a);
    return Rc::Ok;
  }

  Rc upgrade(auto& t, auto& a) {
    if (is_wounded(t)) return Rc::Abort;
    return t.row_meta(a.row).lock.upgrade(a.cc.req, latch_) ? Rc::Ok : Rc::Abort;
  }
  Rc insert(auto& /*t*/, auto& /*a*/) { return Rc::Ok; }

  Rc commit(auto& t) {
    t.install_all();
    release(t);
    return Rc::Ok;
  }
  void abort(auto& t) { release(t); }

 private:
  struct alignas(platform::kCacheLine) Slot {
    platform::Atomic<bool> flag{false};
  };

  bool is_wounded(auto& t) const { return wounded_[t.worker().id].flag.load(platform::memory_order_acquire); }

  Rc acquire(auto& t, auto& a, LockMode mode) {
    if (is_wounded(t)) return Rc::Abort;
    LockRequest& r = a.cc.req;
    r.ts = t.meta().ts;
    r.worker = t.worker().id;
    const auto outcome = t.row_meta(a.row).lock.acquire(r, mode, latch_, [&](const RowLock& lock) {
      lock.for_each_request([&](const LockRequest& o) {
        if (o.ts > r.ts) wounded_[o.worker].flag.store(true, platform::memory_order_release);
      });
      return true;
    });
    if (outcome == RowLock::Outcome::Granted) return Rc::Ok;
    // Queued: wait, unless wounded meanwhile; abort() then drops the request.
    const bool granted = wait_for_grant(t.worker(), r, [&](uint64_t) { return is_wounded(t); });
    return granted ? Rc::Ok : Rc::Abort;
  }

  void release(auto& t) {
    for (auto& a : t.accesses()) {
      if (a.cc.req.held) t.row_meta(a.row).lock.release(a.cc.req, latch_);
    }
  }

  platform::LatchKind latch_;
  std::unique_ptr<Slot[]> wounded_;
};

}  // namespace abyss::cc
