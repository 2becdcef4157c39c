#pragma once
// PLOR: pessimistic locking, optimistic reading (Chen et al., "Plor: General
// Transactions with Predictable, Low Tail Latency", SIGMOD 2022). Writes take
// an exclusive lock when they happen, as 2PL does, with wound-wait between
// writers; reads take no lock that a writer waits on while it runs. A reader
// only registers on the row, and conflicts between readers and a writer are
// settled when the writer commits, where the older transaction goes first.
//
// Each row keeps, behind a short latch: its exclusive owner, the writers
// queued for it, the readers registered on it, and whether its owner is
// committing. Each transaction has a state word, Active, Wounded or Decided
// (cc/common/wound_state.h): wounding is a compare-and-swap from Active, so
// a transaction past its decision can no longer be wounded, and one that is
// wounded can no longer decide.
//
//   - A write asks for the row's exclusive lock. An older requester wounds a
//     younger owner; the requester queues either way, and a released lock
//     goes to the oldest one queued (Plor §3). The row is copied once the
//     lock is granted; the write changes the copy, which commit installs.
//   - A read registers on the row and copies it. A row whose owner is
//     committing is waited for if that owner is older or has decided; a
//     younger owner still deciding is wounded instead, and the read sees the
//     committed data. A reader checks its own state after the copy: an
//     install can only overlap the copy of a reader it has wounded.
//   - Commit marks each row it writes as committing, then settles its
//     readers: a younger one is wounded, unless it has decided; the
//     committer waits for an older one, and for one that has decided, to end.
//     It then decides, installs, and releases its locks and registrations.
//
// Every wait is for an older transaction, for one that has decided (which
// waits for nothing), or for one that is wounded (which gives up every wait
// at once), so no deadlock can form; a restarted transaction keeps its
// timestamp and ages until it goes first. A read never aborts a writer
// that is older, so the oldest transactions commit at the first try: the
// tail latency PLOR is built for.
//
// Why it is serializable: a committed transaction's decision orders it. A
// write lock is held from the write to after the install, so writers of a
// row decide in their lock order; a reader sees only installed data, after
// its writer decided. A reader T of a row that U overwrites decides before U:
// if T registered before U settled the row's readers, U waited for T (older
// or decided) or wounded it (then T does not commit); if T came later, it
// saw the row committing and waited for U, or wounded it.
#include <cstdint>
#include <string_view>

#include "cc/common/wait.h"
#include "cc/common/wound_state.h"
#include "cc/lock/row_lock.h"
#include "cc/traits.h"
#include "common/config.h"
#include "common/types.h"
#include "platform/atomic.h"
#include "platform/clock.h"
#include "platform/latch.h"
#include "platform/touch.h"
#include "stats/stats.h"
#include "txn/access.h"

namespace abyss::cc {

class Plor final {
 public:
  static constexpr SchemeTraits kTraits{
      .name = "plor",
      .summary = "2PL writes with wound-wait, unlocked reads settled by the committing writer: the older goes first",
      .paper = "Chen et al., SIGMOD 2022 (Plor)",
      .family = Family::Locking,
      .allocates_timestamps = true,  // a transaction's age decides who goes first
      .uses_latch = true,            // each row's owner, queue and readers sit behind a latch
      .waits = true,                 // a writer queues for the lock; a committer, for older readers
      .causes = abort_causes({AbortCause::Wound}),
  };

  // A transaction's entry on a row, as its owner or a queued writer, or as
  // a reader: the row lock's request (ts, worker, next, held, granted; its
  // mode and state stay unused), embedded in the access-set entry.
  using Request = LockRequest;

  struct RowMeta {
    platform::Latch latch;
    Request* owner = nullptr;    // holds the exclusive lock
    Request* waiters = nullptr;  // queued writers, granted oldest first
    Request* readers = nullptr;  // registered readers
    bool committing = false;     // the owner is settling readers or installing
    // Bumped under the latch whenever a reader leaves or the owner lets go:
    // what a waiter watches, outside the latch, before it looks again.
    platform::Atomic<uint64_t> generation{0};
  };
  struct AccessMeta {
    Request reader;
    Request writer;
  };
  struct TxnMeta {
    Timestamp ts;
  };

  Plor(const Config& config, uint32_t workers) : latch_(config.latch), states_(workers) {}

  Rc begin(auto& t, bool restart) {
    if (!restart) t.meta().ts = t.worker().allocate_ts();
    states_.begin(t.worker().id);
    return Rc::Ok;
  }

  Rc read(auto& t, auto& a) {
    if (wounded(t)) return t.abort_for(AbortCause::Wound);
    Request& r = prepare(t, a.cc.reader);
    RowMeta& m = t.row_meta(a.row);
    const Rc rc = wait_until(t, m, [&] {
      platform::Latch::Guard g(m.latch, latch_);
      touch(m);
      // A committing owner installs soon: an older or decided one is waited
      // for; a younger one is wounded, and the read sees the committed data.
      if (m.committing && !goes_after(r, *m.owner)) return false;
      push(m.readers, r);
      return true;
    });
    if (rc != Rc::Ok) return rc;
    t.snapshot(a);
    // Only a committer that wounded this reader installs while it copies.
    if (wounded(t)) return t.abort_for(AbortCause::Wound);
    return Rc::Ok;
  }

  Rc write(auto& t, auto& a) {
    if (Rc rc = lock(t, a); rc != Rc::Ok) return rc;
    t.snapshot(a);  // the owner alone installs the row: the copy is stable
    return Rc::Ok;
  }

  // The row was read and copied while registered, so no committer installed
  // it since without wounding this transaction: the copy stays the write's.
  Rc upgrade(auto& t, auto& a) { return lock(t, a); }

  // Invisible to others until install_all() indexes it: nothing to lock.
  Rc insert(auto& /*t*/, auto& /*a*/) { return Rc::Ok; }

  Rc commit(auto& t) {
    if (wounded(t)) return t.abort_for(AbortCause::Wound);
    const Request* me = nullptr;
    for (auto& a : t.accesses()) {
      if (!a.cc.writer.held) continue;
      me = &a.cc.writer;
      RowMeta& m = t.row_meta(a.row);
      const Rc rc = wait_until(t, m, [&] {
        platform::Latch::Guard g(m.latch, latch_);
        touch(m);
        m.committing = true;
        bool clear = true;
        for (const Request* r = m.readers; r != nullptr; r = r->next) {
          if (r->worker != me->worker && !goes_after(*me, *r)) clear = false;
        }
        return clear;
      });
      if (rc != Rc::Ok) return rc;
    }
    if (!states_.decide(t.worker().id)) return t.abort_for(AbortCause::Wound);
    t.install_all();  // under every exclusive lock; no registered reader is left to see it
    release(t);
    return Rc::Ok;
  }

  void abort(auto& t) { release(t); }

 private:
  bool wounded(auto& t) const { return states_.wounded(t.worker().id); }

  // Whether `later` may go on while `first` is in its way, under the row's
  // latch: `first` is younger than `later`, and is, or is now, wounded.
  // Never for a `first` that has decided: it is waited for instead.
  bool goes_after(const Request& later, const Request& first) {
    return first.ts >= later.ts && states_.wound(first.worker);
  }

  static Request& prepare(auto& t, Request& r) {
    r.ts = t.meta().ts;
    r.worker = t.worker().id;
    return r;
  }

  // The row's state is plain memory under its latch (src/platform/README.md,
  // "Data traffic"), counted as a write, which all but a waiting read are.
  static void touch(const RowMeta& m) { platform::touch(&m, sizeof(RowMeta), platform::Access::Write); }

  static void push(Request*& head, Request& r) {
    r.next = head;
    head = &r;
    r.held = true;
  }
  static void unlink(Request*& head, Request& r) {
    for (Request** p = &head; *p != nullptr; p = &(*p)->next) {
      if (*p != &r) continue;
      *p = r.next;
      return;
    }
  }

  // Retries `attempt()` (under the row's latch) until it answers true,
  // giving up when the transaction is wounded (wait_on_row).
  template <class Attempt>
  Rc wait_until(auto& t, RowMeta& m, Attempt&& attempt) {
    if (wait_on_row(t.worker(), states_, m.generation, attempt)) return Rc::Ok;
    return t.abort_for(AbortCause::Wound);
  }

  // The exclusive lock, by wound-wait: an older requester wounds a younger
  // owner, and every requester queues until the lock is handed to it.
  Rc lock(auto& t, auto& a) {
    if (wounded(t)) return t.abort_for(AbortCause::Wound);
    Request& w = prepare(t, a.cc.writer);
    RowMeta& m = t.row_meta(a.row);
    {
      platform::Latch::Guard g(m.latch, latch_);
      touch(m);
      w.held = true;
      if (m.owner == nullptr) {
        m.owner = &w;
        w.granted.store(true, platform::memory_order_relaxed);
        return Rc::Ok;
      }
      goes_after(w, *m.owner);  // wounds a younger owner, which then lets go
      w.granted.store(false, platform::memory_order_relaxed);
      push(m.waiters, w);
    }
    if (!wait_for_grant(t.worker(), w, [&](uint64_t) { return wounded(t); })) {
      return t.abort_for(AbortCause::Wound);  // abort() drops the request, granted meanwhile or not
    }
    // Granted, but wounded while it waited: a wound is acted on at once.
    if (wounded(t)) return t.abort_for(AbortCause::Wound);
    return Rc::Ok;
  }

  // Drops every lock, queued request and registration, handing each lock to
  // the oldest writer queued for it.
  void release(auto& t) {
    for (auto& a : t.accesses()) {
      Request& w = a.cc.writer;
      Request& r = a.cc.reader;
      if (!w.held && !r.held) continue;
      RowMeta& m = t.row_meta(a.row);
      platform::Latch::Guard g(m.latch, latch_);
      touch(m);
      if (r.held) {
        unlink(m.readers, r);
        r.held = false;
      }
      if (w.held) {
        w.held = false;
        if (m.owner == &w) {
          hand_over(m);
        } else {
          unlink(m.waiters, w);
        }
      }
      bump(m.generation);
    }
  }

  // The owner lets go: the lock goes to the oldest writer queued. Row latch
  // held.
  static void hand_over(RowMeta& m) {
    m.committing = false;
    m.owner = nullptr;
    Request* oldest = m.waiters;
    for (Request* q = m.waiters; q != nullptr; q = q->next) {
      if (q->ts < oldest->ts) oldest = q;
    }
    if (oldest == nullptr) return;
    unlink(m.waiters, *oldest);
    m.owner = oldest;
    oldest->granted.store(true, platform::memory_order_release);
  }

  platform::LatchKind latch_;
  WoundStates states_;
};

}  // namespace abyss::cc
