#pragma once
// The row state and the steps of timestamp ordering that TIMESTAMP and MVCC
// share (Abyss §2.2, Bernstein & Goodman's basic T/O with a decentralised
// scheduler): each row keeps the timestamp of its newest version (`wts`), the
// largest timestamp that read it (`rts`) and at most one pending write, all
// behind the row's latch. The schemes differ in what a read may see (MVCC
// keeps older versions) and in what commit keeps of the version it replaces.
#include <cstdint>

#include "cc/common/wait.h"
#include "common/types.h"
#include "platform/atomic.h"
#include "platform/latch.h"

namespace abyss::cc {

struct ToRowMeta {
  platform::Latch latch;
  Timestamp wts = kNoTimestamp;  // timestamp of the newest version, the one in the row
  Timestamp rts = kNoTimestamp;  // largest timestamp that read it
  // Timestamp of the pending write, if any: written under the latch, and
  // read without it by a transaction waiting for it to end.
  platform::Atomic<Timestamp> pending{kNoTimestamp};
};
struct ToAccessMeta {
  bool prewrite = false;  // this access registered the row's pending write
  platform::McsLatch::Node node;
};
struct ToTxnMeta {
  Timestamp ts;
};

// Abyss §2.2, the `wait` of T/O: an access younger than the row's pending
// write waits for it to commit or abort, then `access()` runs under the row
// latch and answers the access's Rc. Only older writes are waited for, so
// waits never form a cycle. A waiter reads the pending write without the
// latch and takes the latch only once it looks over: waiters that took the
// latch to look would write its line at every look, and on many cores each
// such write wakes every other waiter on the row to do the same.
template <class Access>
Rc after_older_writes(auto& t, ToRowMeta& m, platform::LatchKind latch, Access&& access) {
  const Timestamp ts = t.meta().ts;
  auto older_pending = [&] {
    const Timestamp p = m.pending.load(platform::memory_order_acquire);
    return p != kNoTimestamp && p < ts;
  };
  Rc rc = Rc::Ok;
  retry_until_done(t.worker(), [&] {
    if (older_pending()) return Attempt::Retry;
    platform::Latch::Guard g(m.latch, latch);
    if (older_pending()) return Attempt::Retry;
    rc = access();
    return Attempt::Done;
  });
  return rc;
}

// A read of the newest version: marks it read at this timestamp and copies
// it. Row latch held.
void read_newest(auto& t, auto& a, ToRowMeta& m) {
  const Timestamp ts = t.meta().ts;
  if (m.rts < ts) m.rts = ts;
  t.snapshot(a);
}

// A write registers as the row's pending write, unless a younger transaction
// has read or written the newest version or another write is pending: its
// version would have to go under theirs. Row latch held.
Rc prewrite(auto& t, auto& a, ToRowMeta& m) {
  const Timestamp ts = t.meta().ts;
  if (ts < m.rts || ts < m.wts) return t.abort_for(AbortCause::TimestampOrder);
  if (m.pending.load(platform::memory_order_relaxed) != kNoTimestamp) return t.abort_for(AbortCause::LockConflict);
  m.pending.store(ts, platform::memory_order_relaxed);
  a.cc.prewrite = true;
  return Rc::Ok;
}

// The write hook: waits for an older pending write, then `prepare(m)` (MVCC
// collects old versions) and the pre-write, whose private copy the workload
// modifies.
template <class Prepare>
Rc write_after_older_writes(auto& t, auto& a, platform::LatchKind latch, Prepare&& prepare) {
  auto& m = t.row_meta(a.row);
  return after_older_writes(t, m, latch, [&] {
    prepare(m);
    if (Rc rc = prewrite(t, a, m); rc != Rc::Ok) return rc;
    t.snapshot(a);
    return Rc::Ok;
  });
}

// The row was read (and copied) at this timestamp; a write registers now.
Rc upgrade_to_prewrite(auto& t, auto& a, platform::LatchKind latch) {
  ToRowMeta& m = t.row_meta(a.row);
  platform::Latch::Guard g(m.latch, latch);
  return prewrite(t, a, m);
}

// An inserted row is invisible until commit indexes it; it carries its
// inserter's timestamp, so an older transaction that finds it afterwards
// arrives too late for it.
void stamp_insert(auto& t, auto& a) {
  ToRowMeta& m = t.row_meta(a.row);
  m.wts = t.meta().ts;
  m.rts = t.meta().ts;
}

// Commit: latches every pre-written row, so no read copies a half-installed
// one, and calls `replacing(a, m)` on it; installs; then stamps each with the
// transaction's timestamp, calls `installed(m)`, clears the pending write and
// unlatches. Only the pending write's owner holds a row latch for longer than
// one access, so holding several at once cannot deadlock.
template <class Replacing, class Installed>
void install_prewrites(auto& t, platform::LatchKind latch, Replacing&& replacing, Installed&& installed) {
  for (auto& a : t.accesses()) {
    if (!a.cc.prewrite) continue;
    auto& m = t.row_meta(a.row);
    m.latch.lock(latch, a.cc.node);
    replacing(a, m);
  }
  t.install_all();
  for (auto& a : t.accesses()) {
    if (!a.cc.prewrite) continue;
    auto& m = t.row_meta(a.row);
    m.wts = t.meta().ts;
    installed(m);
    m.pending.store(kNoTimestamp, platform::memory_order_release);
    a.cc.prewrite = false;
    m.latch.unlock(latch, a.cc.node);
  }
}

// Abort: drops the pending writes; nothing was installed.
void drop_prewrites(auto& t, platform::LatchKind latch) {
  for (auto& a : t.accesses()) {
    if (!a.cc.prewrite) continue;
    ToRowMeta& m = t.row_meta(a.row);
    platform::Latch::Guard g(m.latch, latch);
    m.pending.store(kNoTimestamp, platform::memory_order_release);
    a.cc.prewrite = false;
  }
}

}  // namespace abyss::cc
