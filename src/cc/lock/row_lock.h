#pragma once
// A per-row lock with an owner list and a FIFO waiter queue, for the 2PL
// schemes that wait (WAIT_DIE, DL_DETECT). The state lives in the row header,
// not in a central lock table (Abyss §4.2); a short latch guards it. Requests
// are embedded in the transaction's access-set entries, so taking a lock
// allocates nothing.
#include <cstdint>

#include "common/types.h"
#include "platform/atomic.h"
#include "platform/latch.h"
#include "platform/touch.h"

namespace abyss::cc {

enum class LockMode : uint8_t { None, Shared, Exclusive };

struct LockRequest {
  enum class State : uint8_t { Idle, Waiting, Owner };

  Timestamp ts;     // the requesting transaction's timestamp
  WorkerId worker;  // the requesting worker
  LockMode mode = LockMode::None;
  State state = State::Idle;  // written under the row latch
  // Owned by the requester alone (a grant by another worker does not touch
  // it): the request is queued or granted, so the requester must release it.
  bool held = false;
  platform::Atomic<bool> granted{false};  // set under the latch; a waiter spins on it
  LockRequest* next = nullptr;

  LockRequest() = default;
  // Access-set entries are copied only while empty (before any request).
  LockRequest(const LockRequest&) : LockRequest() {}
  LockRequest& operator=(const LockRequest& other) {
    if (this != &other) *this = LockRequest();
    return *this;
  }
};

class RowLock final {
 public:
  enum class Outcome : uint8_t { Granted, Queued, Refused };

  // Takes the lock or queues the request. `may_wait(lock)` is asked, under the
  // latch, whether a conflicting request may queue; if not, it is refused.
  template <class MayWait>
  Outcome acquire(LockRequest& r, LockMode mode, platform::LatchKind latch, MayWait&& may_wait) {
    platform::Latch::Guard g(latch_, latch);
    touch_state();
    r.mode = mode;
    r.next = nullptr;
    if (waiters_ == nullptr && compatible(mode)) {
      grant(r);
      r.held = true;
      return Outcome::Granted;
    }
    if (!may_wait(*this)) return Outcome::Refused;
    r.held = true;
    r.state = LockRequest::State::Waiting;
    r.granted.store(false, platform::memory_order_relaxed);
    if (waiters_tail_ == nullptr) {
      waiters_ = &r;
    } else {
      waiters_tail_->next = &r;
    }
    waiters_tail_ = &r;
    return Outcome::Queued;
  }

  // Shared to exclusive, only for the sole owner with no one queued (a
  // conflicting upgrade aborts: two readers upgrading would deadlock).
  bool upgrade(LockRequest& r, platform::LatchKind latch) {
    platform::Latch::Guard g(latch_, latch);
    touch_state();
    if (r.state != LockRequest::State::Owner || owner_count_ != 1 || waiters_ != nullptr) return false;
    r.mode = LockMode::Exclusive;
    mode_ = LockMode::Exclusive;
    return true;
  }

  // Drops an owned or queued request and grants the queue's head while it is
  // compatible.
  void release(LockRequest& r, platform::LatchKind latch) {
    platform::Latch::Guard g(latch_, latch);
    touch_state();
    if (r.state == LockRequest::State::Owner) {
      unlink(owners_, nullptr, r);
      if (--owner_count_ == 0) mode_ = LockMode::None;
    } else if (r.state == LockRequest::State::Waiting) {
      unlink(waiters_, &waiters_tail_, r);
    }
    r.state = LockRequest::State::Idle;
    r.held = false;
    while (waiters_ != nullptr && compatible(waiters_->mode)) {
      LockRequest* head = waiters_;
      waiters_ = head->next;
      if (waiters_ == nullptr) waiters_tail_ = nullptr;
      grant(*head);
    }
  }

  // Visits owners then waiters (in queue order). Only under the latch, that
  // is from inside a may_wait callback.
  template <class Fn>
  void for_each_request(Fn&& fn) const {
    for (const LockRequest* o = owners_; o != nullptr; o = o->next) fn(*o);
    for (const LockRequest* w = waiters_; w != nullptr; w = w->next) fn(*w);
  }

 private:
  // The owner list, queue and mode: plain memory read and written under the
  // latch (src/platform/README.md, "Data traffic"). Counted as a write, which
  // all but a refused request or upgrade are.
  void touch_state() const { platform::touch(this, sizeof(RowLock), platform::Access::Write); }

  bool compatible(LockMode m) const {
    return owner_count_ == 0 || (mode_ == LockMode::Shared && m == LockMode::Shared);
  }

  void grant(LockRequest& r) {
    r.next = owners_;
    owners_ = &r;
    owner_count_++;
    mode_ = r.mode;
    r.state = LockRequest::State::Owner;
    r.granted.store(true, platform::memory_order_release);
  }

  static void unlink(LockRequest*& head, LockRequest** tail, LockRequest& r) {
    LockRequest* prev = nullptr;
    for (LockRequest* p = head; p != nullptr; prev = p, p = p->next) {
      if (p != &r) continue;
      (prev == nullptr ? head : prev->next) = p->next;
      if (tail != nullptr && *tail == p) *tail = prev;
      return;
    }
  }

  platform::Latch latch_;
  LockMode mode_ = LockMode::None;
  uint32_t owner_count_ = 0;
  LockRequest* owners_ = nullptr;
  LockRequest* waiters_ = nullptr;
  LockRequest* waiters_tail_ = nullptr;
};

}  // namespace abyss::cc
