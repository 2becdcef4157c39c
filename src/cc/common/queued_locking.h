#pragma once
// Strict two-phase locking over the queued row lock (cc/lock/row_lock.h), the
// part that WAIT_DIE, WOUND_WAIT and DL_DETECT share: a read holds a shared
// lock and reads the row in place, a write holds an exclusive lock and writes
// the row in place (Txn::write_in_place: its old data is kept to put back on
// an abort), and every lock is held until after the commit (Abyss §2.1). The schemes differ only in what a conflicting
// request does: whether it may queue, and how long it waits once queued.
//
// A scheme derives from QueuedLocking<Scheme> and defines
//   Rc acquire(auto& t, auto& a, LockMode mode)
// (befriending the base), which calls request() with its conflict policy; it
// also defines begin(), which sets t.meta().ts, the age requests carry.
#include <cstdint>

#include "cc/lock/row_lock.h"
#include "common/config.h"
#include "common/types.h"
#include "platform/latch.h"

namespace abyss::cc {

template <class Scheme>
class QueuedLocking {
 public:
  struct RowMeta {
    RowLock lock;
  };
  struct AccessMeta {
    LockRequest req;
  };
  struct TxnMeta {
    Timestamp ts;
  };

  explicit QueuedLocking(const Config& config) : latch_(config.latch) {}

  Rc read(auto& t, auto& a) {
    if (Rc rc = scheme().acquire(t, a, LockMode::Shared); rc != Rc::Ok) return rc;
    t.view_in_place(a);  // stable: no one may write it until we release
    return Rc::Ok;
  }

  Rc write(auto& t, auto& a) {
    if (Rc rc = scheme().acquire(t, a, LockMode::Exclusive); rc != Rc::Ok) return rc;
    t.write_in_place(a);
    return Rc::Ok;
  }

  Rc upgrade(auto& t, auto& a) {
    return t.row_meta(a.row).lock.upgrade(a.cc.req, latch_) ? Rc::Ok : t.abort_for(AbortCause::LockConflict);
  }
  // Invisible to others until install_all() indexes it: nothing to lock.
  Rc insert(auto& /*t*/, auto& /*a*/) { return Rc::Ok; }

  Rc commit(auto& t) {
    t.install_all();  // under every lock the transaction holds
    release(t);
    return Rc::Ok;
  }
  void abort(auto& t) { release(t); }

 protected:
  // Abyss §2.1: requests the row's lock with the transaction's age. On a
  // conflict, `may_queue(request, lock)` decides under the row latch whether
  // the request queues (false: it is refused and the transaction aborts for
  // `refused`); once queued, `wait(request)` waits and answers Ok once
  // granted, or the abort it names (Txn::abort_for) when it gives up.
  // A request that was queued stays held either way: abort() releases it.
  template <class MayQueue, class Wait>
  Rc request(auto& t, auto& a, LockMode mode, AbortCause refused, MayQueue&& may_queue, Wait&& wait) {
    LockRequest& r = a.cc.req;
    r.ts = t.meta().ts;
    r.worker = t.worker().id;
    const auto outcome =
        t.row_meta(a.row).lock.acquire(r, mode, latch_, [&](const RowLock& lock) { return may_queue(r, lock); });
    if (outcome == RowLock::Outcome::Refused) return t.abort_for(refused);
    if (outcome == RowLock::Outcome::Granted) return Rc::Ok;
    return wait(r);
  }

 private:
  Scheme& scheme() { return static_cast<Scheme&>(*this); }

  void release(auto& t) {
    for (auto& a : t.accesses()) {
      if (a.cc.req.held) t.row_meta(a.row).lock.release(a.cc.req, latch_);
    }
  }

  platform::LatchKind latch_;
};

}  // namespace abyss::cc
