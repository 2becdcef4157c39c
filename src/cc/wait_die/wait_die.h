#pragma once
// WAIT_DIE: 2PL with waiting deadlock prevention (Abyss §2.1). A transaction
// may wait for a lock only if it is older than every transaction that holds or
// is queued for it; otherwise it dies (aborts) and restarts. Waits therefore
// only ever go from older to younger, and no deadlock can form. A restarted
// transaction keeps its timestamp, so it ages and eventually wins.
#include <cstdint>
#include <string_view>

#include "cc/common/wait.h"
#include "cc/lock/row_lock.h"
#include "cc/traits.h"
#include "common/config.h"
#include "common/types.h"

namespace abyss::cc {

class WaitDie final {
 public:
  static constexpr SchemeTraits kTraits{
      .name = "wait_die",
      .summary = "2PL, an older requester waits for a younger holder, a younger one dies",
      .paper = "Abyss §2.1",
      .family = Family::Locking,
      .allocates_timestamps = true,  // a transaction's age decides whether it waits or dies
      .uses_latch = true,            // the row's lock queue sits behind a latch
      .waits = true,                 // an older requester queues for the lock
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

  WaitDie(const Config& config, uint32_t /*workers*/) : latch_(config.latch) {}

  Rc begin(auto& t, bool restart) {
    if (!restart) t.meta().ts = t.worker().allocate_ts();
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

  Rc upgrade(auto& t, auto& a) { return t.row_meta(a.row).lock.upgrade(a.cc.req, latch_) ? Rc::Ok : Rc::Abort; }
  Rc insert(auto& /*t*/, auto& /*a*/) { return Rc::Ok; }

  Rc commit(auto& t) {
    t.install_all();
    release(t);
    return Rc::Ok;
  }
  void abort(auto& t) { release(t); }

 private:
  Rc acquire(auto& t, auto& a, LockMode mode) {
    LockRequest& r = a.cc.req;
    r.ts = t.meta().ts;
    r.worker = t.worker().id;
    const auto outcome = t.row_meta(a.row).lock.acquire(r, mode, latch_, [&](const RowLock& lock) {
      bool older_than_all = true;
      lock.for_each_request([&](const LockRequest& o) { older_than_all &= r.ts < o.ts; });
      return older_than_all;
    });
    if (outcome == RowLock::Outcome::Refused) return Rc::Abort;
    if (outcome == RowLock::Outcome::Queued) {
      // Never gives up: everyone it waits for is younger and cannot wait back.
      (void)wait_for_grant(t.worker(), r, [](uint64_t) { return false; });
    }
    return Rc::Ok;
  }

  void release(auto& t) {
    for (auto& a : t.accesses()) {
      if (a.cc.req.held) t.row_meta(a.row).lock.release(a.cc.req, latch_);
    }
  }

  platform::LatchKind latch_;
};

}  // namespace abyss::cc
