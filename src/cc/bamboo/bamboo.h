#pragma once
// BAMBOO: wound-wait two-phase locking that retires a write lock once the
// write is done (Guo et al., "Releasing Locks As Early As You Can: Reducing
// Contention of Hotspots by Violating Two-Phase Locking", SIGMOD 2021). A
// retired write is seen by the transactions that come after it before it
// commits; they commit after it, and abort with it if it aborts (a cascading
// abort).
//
// Each row keeps, behind a short latch, one list of entries in the order
// they were granted: the retired ones, then at most one owner at the tail, a
// write not yet retired. Each transaction has a state word, Active, Wounded,
// Cascaded or Decided (cc/common/wound_state.h).
//
//   - A request conflicts with an entry when either is a write. It goes on
//     when every entry it conflicts with is older and retired, and no older
//     request it conflicts with is waiting. A younger entry in its way
//     (owner or retired) is wounded, an older owner is waited for, and so
//     is a younger one that has decided; the request then waits among the
//     row's waiters, which go on oldest first (Bamboo §3.2: wound-wait
//     against owners and retired entries alike).
//   - A read is copied when it is granted from the newest write ahead of it
//     (not committed yet: a dirty read, named by that writer); with none, it
//     reads the row in place, which no write installs over before this
//     transaction commits. It retires at once: reads take turns only with
//     writes.
//   - A write copies the same way and becomes the owner. It retires at the
//     transaction's next access, or at its commit (--bamboo-retire access;
//     `commit` keeps every lock to the commit, as WOUND_WAIT does). The data
//     written is then what later entries copy. A transaction that writes a
//     retired row again first takes it back: it wounds every entry behind
//     its own and waits for them to go. A removal never retires, and
//     neither does a next-key write (txn/scan.h): a scan that reads the key
//     must wait for the insert below it, which the install indexes.
//   - Commit waits until no entry it conflicts with is ahead of any of its
//     own: the writes whose data it used, and the reads of what it
//     overwrites, commit first (the commit barrier, Bamboo §3.2, kept as a
//     look at the entries ahead instead of a counter, and only for an entry
//     granted with one it conflicts with ahead: entries only join behind).
//     It then decides, installs its writes under every entry it holds, and
//     leaves.
//   - An abort leaves every row; on a row where it had retired a write, it
//     first wounds every entry behind that write (cascade), since each of
//     them copied its data or data built on it.
//
// Ages (Bamboo's dynamic timestamps): a transaction takes a timestamp only
// at its first conflict, under that row's latch, after the entries it
// conflicts with there have taken theirs, in their order on the row. So a
// transaction that joins a row behind others is younger than they are and
// wounds none of them, unless it took its age earlier on another row. Each
// attempt starts without one.
//
// Every wait is for an older transaction, for one that has decided (which
// waits for nothing) or for one that is wounded (which gives up every wait
// at once), so no deadlock can form. The oldest transaction is never
// wounded, so some transaction always commits; a restarted one is young
// again, and can lose over and over under skew.
//
// Why it is serializable: the commit order is a serial order. Each entry
// reads or overwrites the newest write ahead of it on its row, or the
// committed row when there is none, and a write comes after the reads
// ahead of it; the barrier makes every entry commit after those it
// conflicts with ahead of it, and an entry that left had committed. So
// every dependency goes from a transaction to one that commits later. A
// write that aborts takes every transaction that used it along, so a
// committed transaction used committed data only. Entries that conflict
// are also in the order of their ages (both take one when the later
// joins; a younger one ahead of a request is wounded and gone before the
// request is granted; an upgrade moves its entry to the tail the same
// way), so every wait is for an older transaction.
//
// Departures: Bamboo writes in place and keeps the data before each write,
// which the first aborting writer of a cascade puts back; abyss writes a
// private copy, which later entries copy and the commit installs, so an
// abort puts back nothing. Bamboo counts a commit barrier per transaction;
// abyss looks at the entries ahead of its own at commit.
// An attempt starts without an age. A reader older than a retired write
// wounds it, where Bamboo's optional refinement for reads after writes
// places the reader ahead of the write instead; that is not built.
#include <array>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "cc/common/wound_state.h"
#include "cc/traits.h"
#include "common/config.h"
#include "common/knob.h"
#include "common/types.h"
#include "platform/atomic.h"
#include "platform/latch.h"
#include "platform/touch.h"
#include "txn/access.h"

namespace abyss::cc {

// Where a write retires: at the transaction's next access (or its commit,
// if it makes none), or only at its commit.
enum class BambooRetire : uint8_t { Access, Commit };
inline constexpr std::array<std::string_view, 2> kBambooRetireNames = {"access", "commit"};

// BAMBOO's settings (Bamboo::knobs); a run's are Config::settings<BambooConfig>().
struct BambooConfig {
  BambooRetire retire = BambooRetire::Access;
};

class Bamboo final {
 public:
  static constexpr SchemeTraits kTraits{
      .name = "bamboo",
      .summary =
          "wound-wait 2PL that retires a write once done: later transactions use it before it commits, and "
          "abort with it",
      .paper = "Guo et al., SIGMOD 2021 (Bamboo)",
      .family = Family::Locking,
      .allocates_timestamps = true,  // a transaction's age decides who goes first
      .uses_latch = true,            // each row's entries sit behind a latch
      .waits = true,                 // for an older owner, and at commit for the writes it used
      // A retired write is copied before it commits, named by the id its
      // writer takes at the write (Txn::writer_id).
      .dirty_writes = true,
      .causes = abort_causes({AbortCause::Wound, AbortCause::Cascade}),
  };

  static std::vector<Knob> knobs() {
    return {choice(
        "bamboo-retire", "bamboo_retire", kBambooRetireNames,
        +[](Config& c) -> BambooRetire& { return c.settings<BambooConfig>().retire; },
        "BAMBOO: where a write lock retires, letting later transactions read the write before it commits: at the "
        "transaction's next access (access), or only at its commit, as WOUND_WAIT (commit)")};
  }

  // A transaction's entry on a row, embedded in its access-set entry.
  struct Entry {
    WorkerId worker{};
    Entry* prev = nullptr;
    Entry* next = nullptr;
    bool held = false;     // on the row's list
    bool write = false;    // a write (or a removal); else a read
    bool retired = false;  // later entries may go on; a write's data may be copied
    // An entry it conflicts with was ahead of it when it was granted, so
    // its commit waits for that one (Bamboo's commit barrier). Entries only
    // join behind, so one granted with none ahead never waits.
    bool behind = false;
    Entry* wnext = nullptr;      // on the row's waiters
    bool waiting = false;        // on the row's waiters
    bool wants_write = false;    // what it waits for
    const char* data = nullptr;  // a write's private copy, which later entries copy
    TxnId writer{};              // the id that names that copy (Txn::writer_id)
    uint64_t digest = 0;         // checked builds: the copy's digest when it retired
  };

  struct RowMeta {
    platform::Latch latch;
    Entry* head = nullptr;  // the oldest grant
    Entry* tail = nullptr;  // the newest: the owner, when there is one
    // Requests waiting to be granted, in no order: one goes on only when no
    // older one it conflicts with waits (Bamboo's waiters, granted oldest
    // first), so waiters racing for the latch do not wound each other.
    Entry* waiters = nullptr;
    // Bumped under the latch whenever an entry leaves or retires: what a
    // waiter watches, outside the latch, before it looks again.
    platform::Atomic<uint64_t> generation{0};
  };
  struct AccessMeta {
    Entry entry;
  };
  struct TxnMeta {
    // The access whose write retires at the next access or the commit.
    uint32_t pending = kNone;
  };

  Bamboo(const Config& config, uint32_t workers)
      : latch_(config.latch),
        retire_(config.settings<BambooConfig>().retire),
        states_(workers),
        ages_(new Age[workers]) {}

  // Every attempt starts without an age: it takes one at its first conflict.
  Rc begin(auto& t, bool /*restart*/) {
    ages_[t.worker().id.value].ts.store(0, platform::memory_order_release);
    t.meta().pending = kNone;
    states_.begin(t.worker().id);
    return Rc::Ok;
  }

  Rc read(auto& t, auto& a) {
    retire_pending(t);
    if (wounded(t)) return give_up(t);
    Entry& e = prepare(t, a);
    RowMeta& m = t.row_meta(a.row);
    const bool granted = request(t, m, e, false, [&] {
      append(m, e);
      e.retired = true;
      // The newest write ahead is copied. With none, the row is read in
      // place: it stays as it is until this transaction commits, since a
      // write joins behind this entry and installs only after it commits
      // (an older one wounds it first and waits for it to go).
      const Entry* w = newest_write_ahead(e);
      e.behind = w != nullptr;
      if (w != nullptr) {
        t.copy_pending(a, w->data, w->writer);
      } else {
        t.view_in_place(a);
      }
    });
    return granted ? Rc::Ok : give_up(t);
  }

  Rc write(auto& t, auto& a) {
    retire_pending(t);
    if (wounded(t)) return give_up(t);
    Entry& e = prepare(t, a);
    RowMeta& m = t.row_meta(a.row);
    const bool granted = request(t, m, e, true, [&] {
      append(m, e);
      copy_newest(t, a, e);
      own(t, a, e);
    });
    return granted ? Rc::Ok : give_up(t);
  }

  // The read is retired and copied; no write came after it since without
  // wounding this transaction (an older one) or being wounded by it (a
  // younger one, gone before this returns): the copy is still the newest
  // data, and the write changes it.
  Rc upgrade(auto& t, auto& a) {
    retire_pending(t);
    if (wounded(t)) return give_up(t);
    Entry& e = a.cc.entry;
    RowMeta& m = t.row_meta(a.row);
    const bool granted = request(t, m, e, true, [&] {
      unlink(m, e);
      append(m, e);
      if (a.local == nullptr) t.snapshot(a);  // read in place: the write needs its copy now
      own(t, a, e);
    });
    return granted ? Rc::Ok : give_up(t);
  }

  // A write of a row this transaction wrote already. Still the owner, it
  // goes on; retired, it takes the row back: every entry behind its own
  // used its data and is younger (an older one would have wounded it), so
  // each is wounded, and once they are gone it owns the row again.
  Rc rewrite(auto& t, auto& a) {
    Entry& e = a.cc.entry;
    const uint32_t i = index_of(t, a);
    if (t.in_commit() && t.meta().pending == i) t.meta().pending = kNone;  // a next key: kept to the end
    if (!e.retired) return Rc::Ok;
    retire_pending(t);
    if (wounded(t)) return give_up(t);
    RowMeta& m = t.row_meta(a.row);
    const bool granted = wait_on_row(t.worker(), states_, m.generation, [&] {
      platform::Latch::Guard g(m.latch, latch_);
      touch(m);
      if (e.next != nullptr) {
        for (Entry* x = e.next; x != nullptr; x = x->next) {
          look(x);
          if (younger(x->worker, e.worker)) states_.wound(x->worker);
        }
        return false;
      }
      e.retired = false;
      if (!t.in_commit()) t.meta().pending = i;  // it retires again at the next access
      return true;
    });
    return granted ? Rc::Ok : give_up(t);
  }

  // Invisible to others until install_all() indexes it: nothing to lock.
  Rc insert(auto& t, auto& /*a*/) {
    retire_pending(t);
    return Rc::Ok;
  }

  Rc commit(auto& t) {
    retire_pending(t);
    if constexpr (kChecked<decltype(t)>) refuse_changes_after_retiring(t);
    if (wounded(t)) return give_up(t);
    for (auto& a : t.accesses()) {
      Entry& e = a.cc.entry;
      if (!e.held || !e.behind) continue;
      RowMeta& m = t.row_meta(a.row);
      // The commit barrier: every entry ahead that this one conflicts with
      // commits first (or, a write whose data this entry used, aborts and
      // wounds this transaction).
      const bool clear = wait_on_row(t.worker(), states_, m.generation, [&] {
        platform::Latch::Guard g(m.latch, latch_);
        touch(m);
        for (const Entry* x = e.prev; x != nullptr; x = x->prev) {
          look(x);
          if (x->write || e.write) return false;
        }
        return true;
      });
      if (!clear) return give_up(t);
    }
    if (!states_.decide(t.worker().id)) return give_up(t);
    // Under every entry: a later entry copies this transaction's data, not
    // the row, until it leaves.
    t.install_all();
    leave(t, false);
    return Rc::Ok;
  }

  void abort(auto& t) { leave(t, true); }

 private:
  static constexpr uint32_t kNone = ~uint32_t{0};

  bool wounded(auto& t) const { return states_.wounded(t.worker().id); }
  Rc give_up(auto& t) { return t.abort_for(states_.cause(t.worker().id)); }

  static Entry& prepare(auto& t, auto& a) {
    Entry& e = a.cc.entry;
    e.worker = t.worker().id;
    e.write = a.type != AccessType::Read;
    e.retired = false;
    return e;
  }

  static uint32_t index_of(auto& t, const auto& a) { return static_cast<uint32_t>(&a - t.accesses().data()); }

  // A transaction's age: 0 until its first conflict, then a timestamp
  // from the shared source, kept to the end of the attempt (Bamboo's
  // dynamic timestamps). Ages are given under the row's latch, to the
  // entries a request conflicts with first, in their order on the row, then
  // to the requester, so a transaction that joins a row behind others is
  // younger than they are, unless it took its age earlier on another row.
  uint64_t age(WorkerId w) const { return ages_[w.value].ts.load(platform::memory_order_acquire); }
  uint64_t give_age(WorkerId w, auto& worker) {
    uint64_t now = age(w);
    if (now != 0) return now;
    const uint64_t ts = worker.allocate_ts().value;
    // The owner may give itself one meanwhile, at another row: either stays.
    if (ages_[w.value].ts.compare_exchange_strong(now, ts, platform::memory_order_acq_rel)) return ts;
    return now;
  }

  // Whether `x` is younger than `e`, both with ages (a tie, from a
  // timestamp method that hands one out twice, goes by worker).
  bool younger(WorkerId x, WorkerId e) const {
    const uint64_t ax = age(x);
    const uint64_t ae = age(e);
    return ax > ae || (ax == ae && x.value > e.value);
  }

  // Whether a request by `e` (a write if `write`) may be granted now, under
  // the row's latch: every entry it conflicts with is older and retired,
  // and no older request it conflicts with waits. Wounds each younger entry
  // in its way, which then leaves.
  bool clear(auto& t, RowMeta& m, const Entry& e, bool write) {
    bool conflict = false;
    for (Entry* x = m.head; x != nullptr; x = x->next) {
      if (x == &e || (!write && !x->write)) continue;
      look(x);
      give_age(x->worker, t.worker());
      conflict = true;
    }
    for (const Entry* w = m.waiters; w != nullptr && !conflict; w = w->wnext) {
      conflict = w != &e && (write || w->wants_write);  // a waiter has its age
    }
    if (!conflict) return true;
    give_age(e.worker, t.worker());
    bool clear = true;
    for (Entry* x = m.head; x != nullptr; x = x->next) {
      if (x == &e || (!write && !x->write)) continue;
      if (younger(x->worker, e.worker)) {
        states_.wound(x->worker);  // a decided one cannot be, and is waited for
        clear = false;
      } else if (!x->retired) {
        clear = false;
      }
    }
    for (const Entry* w = m.waiters; w != nullptr && clear; w = w->wnext) {
      look(w);
      if (w != &e && (write || w->wants_write) && younger(e.worker, w->worker)) clear = false;
    }
    return clear;
  }

  // Asks for the row for `e` (a write if `write`) until it is granted, then
  // calls `grant()` under the latch; waits among the row's waiters. Gives
  // up when the transaction is wounded; whether it was granted.
  template <class Grant>
  bool request(auto& t, RowMeta& m, Entry& e, bool write, Grant&& grant) {
    const bool granted = wait_on_row(t.worker(), states_, m.generation, [&] {
      platform::Latch::Guard g(m.latch, latch_);
      touch(m);
      if (!clear(t, m, e, write)) {
        if (!e.waiting) {
          e.waiting = true;
          e.wants_write = write;
          e.wnext = m.waiters;
          m.waiters = &e;
        }
        return false;
      }
      if (e.waiting) {
        stop_waiting(m, e);
        bump(m.generation);  // a younger waiter held back by this one looks again
      }
      grant();
      return true;
    });
    if (!granted && e.waiting) {
      platform::Latch::Guard g(m.latch, latch_);
      touch(m);
      stop_waiting(m, e);
      bump(m.generation);  // a younger waiter may go on now
    }
    return granted;
  }
  static void stop_waiting(RowMeta& m, Entry& e) {
    for (Entry** p = &m.waiters; *p != nullptr; p = &(*p)->wnext) {
      if (*p != &e) continue;
      *p = e.wnext;
      break;
    }
    e.wnext = nullptr;
    e.waiting = false;
  }

  // The newest write ahead of `e` on its row, or null; under its latch.
  static const Entry* newest_write_ahead(const Entry& e) {
    for (const Entry* x = e.prev; x != nullptr; x = x->prev) {
      if (x->write) return x;
    }
    return nullptr;
  }

  // Copies the newest write ahead of `e`, or the row if there is none, into
  // the access; under the row's latch, so a write copied stays there.
  static void copy_newest(auto& t, auto& a, const Entry& e) {
    if (const Entry* w = newest_write_ahead(e)) {
      t.copy_pending(a, w->data, w->writer);
    } else {
      t.snapshot(a);  // no write on the row, so no install under way
    }
  }

  // `e` (at the tail) owns the row for its write, which retires at the next
  // access unless it is a removal (an upgrade's access turns into a write or
  // a removal only once this returns, so that is looked at then) or one of
  // the commit's next-key writes: a scan that reads a next key must wait for
  // the insert below it to be indexed, at the install.
  void own(auto& t, auto& a, Entry& e) {
    e.write = true;
    e.retired = false;
    e.behind = e.prev != nullptr;
    e.data = a.local;
    e.writer = t.writer_id();
    if (retire_ == BambooRetire::Access && !t.in_commit()) t.meta().pending = index_of(t, a);
  }

  // The write of the access named pending is done: it retires, unless the
  // access is a removal.
  void retire_pending(auto& t) {
    const uint32_t i = t.meta().pending;
    if (i == kNone) return;
    t.meta().pending = kNone;
    auto& a = t.accesses()[i];
    if (a.type != AccessType::Write) return;
    RowMeta& m = t.row_meta(a.row);
    if constexpr (kChecked<decltype(t)>) a.cc.entry.digest = digest(a);
    platform::Latch::Guard g(m.latch, latch_);
    touch(m);
    a.cc.entry.retired = true;
    bump(m.generation);
  }

  // A checked build refuses a transaction that changed a write after it
  // retired, which others may have copied: an update's copy is written
  // before the transaction's next call (txn/txn.h).
  template <class T>
  static constexpr bool kChecked = std::remove_cvref_t<T>::kCheckUndeclared;
  static uint64_t digest(const auto& a) {
    uint64_t h = 14695981039346656037ULL;  // FNV-1a
    const uint32_t size = a.table->schema().size();
    for (uint32_t i = 0; i < size; i++) h = (h ^ static_cast<unsigned char>(a.local[i])) * 1099511628211ULL;
    return h;
  }
  static void refuse_changes_after_retiring(auto& t) {
    for (const auto& a : t.accesses()) {
      const Entry& e = a.cc.entry;
      if (!e.held || !e.retired || !e.write || a.type != AccessType::Write || digest(a) == e.digest) continue;
      throw std::logic_error("a transaction changed its write of " + a.table->name() + " key " + std::to_string(a.key) +
                             " after the write retired (BAMBOO): an update's copy is written before the "
                             "transaction's next call, and update() is called again to change it later");
    }
  }

  // Leaves every row. An abort first wounds every entry behind a write it
  // had retired: each used that write's data.
  void leave(auto& t, bool aborted) {
    t.meta().pending = kNone;
    for (auto& a : t.accesses()) {
      Entry& e = a.cc.entry;
      if (!e.held) continue;
      RowMeta& m = t.row_meta(a.row);
      platform::Latch::Guard g(m.latch, latch_);
      touch(m);
      if (aborted && e.write) {
        for (Entry* x = e.next; x != nullptr; x = x->next) {
          look(x);
          states_.wound(x->worker, true);
        }
      }
      unlink(m, e);
      bump(m.generation);
    }
  }

  static void append(RowMeta& m, Entry& e) {
    e.prev = m.tail;
    e.next = nullptr;
    if (m.tail != nullptr) {
      m.tail->next = &e;
    } else {
      m.head = &e;
    }
    m.tail = &e;
    e.held = true;
  }
  static void unlink(RowMeta& m, Entry& e) {
    (e.prev != nullptr ? e.prev->next : m.head) = e.next;
    (e.next != nullptr ? e.next->prev : m.tail) = e.prev;
    e.prev = e.next = nullptr;
    e.held = false;
  }

  // The row's state and the entries on it are plain memory under its latch
  // (src/platform/README.md, "Data traffic"): the row's counted as a write,
  // which all but a waiting look are, an entry looked at as a read.
  static void touch(const RowMeta& m) { platform::touch(&m, sizeof(RowMeta), platform::Access::Write); }
  static void look(const Entry* x) { platform::touch(x, sizeof(Entry), platform::Access::Read); }

  struct alignas(platform::kCacheLine) Age {
    platform::Atomic<uint64_t> ts{0};
  };

  platform::LatchKind latch_;
  BambooRetire retire_;
  WoundStates states_;
  std::unique_ptr<Age[]> ages_;
};

}  // namespace abyss::cc
