#pragma once
// WAIT_DIE: 2PL with waiting deadlock prevention (Abyss §2.1). A transaction
// may wait for a lock only if it is older than every transaction that holds or
// is queued for it; otherwise it dies (aborts) and restarts. Waits therefore
// only ever go from older to younger, and no deadlock can form. A restarted
// transaction keeps its timestamp, so it ages and eventually wins.
#include <cstdint>
#include <string_view>

#include "cc/common/queued_locking.h"
#include "cc/common/wait.h"
#include "cc/lock/row_lock.h"
#include "cc/traits.h"
#include "common/config.h"
#include "common/types.h"

namespace abyss::cc {

class WaitDie final : public QueuedLocking<WaitDie> {
 public:
  static constexpr SchemeTraits kTraits{
      .name = "wait_die",
      .summary = "2PL, an older requester waits for a younger holder, a younger one dies",
      .paper = "Abyss §2.1",
      .family = Family::Locking,
      .allocates_timestamps = true,  // a transaction's age decides whether it waits or dies
      .uses_latch = true,            // the row's lock queue sits behind a latch
      .waits = true,                 // an older requester queues for the lock
      .writes_in_place = true,       // a written row is locked exclusively until the end (strict 2PL)
      .causes = abort_causes({AbortCause::WaitDie, AbortCause::LockConflict}),
  };

  WaitDie(const Config& config, uint32_t /*workers*/) : QueuedLocking(config) {}

  Rc begin(auto& t, bool restart) {
    if (!restart) t.meta().ts = t.worker().allocate_ts();
    return Rc::Ok;
  }

 private:
  friend class QueuedLocking<WaitDie>;

  Rc acquire(auto& t, auto& a, LockMode mode) {
    return request(
        t, a, mode, AbortCause::WaitDie,
        [](const LockRequest& r, const RowLock& lock) {
          bool older_than_all = true;
          lock.for_each_request([&](const LockRequest& o) { older_than_all &= r.ts < o.ts; });
          return older_than_all;
        },
        [&](const LockRequest& r) {
          // Never gives up: everyone it waits for is younger and cannot wait back.
          (void)wait_for_grant(t.worker(), r, [](uint64_t) { return false; });
          return Rc::Ok;
        });
  }
};

}  // namespace abyss::cc
