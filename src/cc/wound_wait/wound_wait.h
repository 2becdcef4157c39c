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

#include "cc/common/queued_locking.h"
#include "cc/common/wait.h"
#include "cc/lock/row_lock.h"
#include "cc/traits.h"
#include "common/config.h"
#include "common/types.h"
#include "platform/atomic.h"

namespace abyss::cc {

class WoundWait final : public QueuedLocking<WoundWait> {
 public:
  static constexpr SchemeTraits kTraits{
      .name = "wound_wait",
      .summary = "2PL, an older requester wounds younger holders, a younger one waits",
      .paper = "Tale §5 (Rosenkrantz et al.)",
      .family = Family::Locking,
      .allocates_timestamps = true,  // a transaction's age decides whom it wounds
      .uses_latch = true,            // the row's lock queue sits behind a latch
      .waits = true,                 // a younger requester queues for the lock
      .writes_in_place = true,       // a written row is locked exclusively until the end (strict 2PL)
      .causes = abort_causes({AbortCause::Wound, AbortCause::LockConflict}),
  };

  WoundWait(const Config& config, uint32_t workers) : QueuedLocking(config), wounded_(new Slot[workers]) {}

  Rc begin(auto& t, bool restart) {
    if (!restart) t.meta().ts = t.worker().allocate_ts();
    // A wound is only ever set while its victim holds a request, which is
    // before the victim's abort released it, hence before this begin.
    wounded_[t.worker().id.value].flag.store(false, platform::memory_order_relaxed);
    return Rc::Ok;
  }

  // A wounded transaction aborts at its next access, an upgrade included.
  Rc upgrade(auto& t, auto& a) {
    if (is_wounded(t)) return t.abort_for(AbortCause::Wound);
    return QueuedLocking::upgrade(t, a);
  }

 private:
  friend class QueuedLocking<WoundWait>;

  struct alignas(platform::kCacheLine) Slot {
    platform::Atomic<bool> flag{false};
  };

  bool is_wounded(auto& t) const { return wounded_[t.worker().id.value].flag.load(platform::memory_order_acquire); }

  Rc acquire(auto& t, auto& a, LockMode mode) {
    if (is_wounded(t)) return t.abort_for(AbortCause::Wound);
    return request(
        t, a, mode, AbortCause::Unnamed,  // never refused: a conflict wounds or waits
        [&](const LockRequest& r, const RowLock& lock) {
          lock.for_each_request([&](const LockRequest& o) {
            if (o.ts > r.ts) wounded_[o.worker.value].flag.store(true, platform::memory_order_release);
          });
          return true;
        },
        // Wait, unless wounded meanwhile; abort() then drops the request.
        [&](const LockRequest& r) {
          return wait_for_grant(t.worker(), r, [&](uint64_t) { return is_wounded(t); })
                     ? Rc::Ok
                     : t.abort_for(AbortCause::Wound);
        });
  }

  std::unique_ptr<Slot[]> wounded_;
};

}  // namespace abyss::cc
