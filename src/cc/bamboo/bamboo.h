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
//     when every entry it conflicts with is older and retired. A younger one
//     in its way (owner or retired) is wounded, an older owner is waited for,
//     and so is a younger one that has decided; the request then looks again
//     (Bamboo §3.2: wound-wait against owners and retired entries alike).
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
// Every wait is for an older transaction, for one that has decided (which
// waits for nothing) or for one that is wounded (which gives up every wait
// at once), so no deadlock can form. A restarted transaction keeps its
// timestamp and ages until it goes first.
//
// Why it is serializable: the commit order is a serial order. Each entry
// reads or overwrites the newest write ahead of it on its row, or the
// committed row when there is none, and a write comes after the reads
// ahead of it; the barrier makes every entry commit after those it
// conflicts with ahead of it, and an entry that left had committed. So
// every dependency goes from a transaction to one that commits later. A
// write that aborts takes every transaction that used it along, so a
// committed transaction used committed data only. Entries that conflict
// are also in the order of their timestamps (a younger one ahead of a
// request is wounded and gone before the request is granted; an upgrade
// moves its entry to the tail the same way), so every wait is for an older
// transaction.
//
// Departures: Bamboo writes in place and keeps the data before each write,
// which the first aborting writer of a cascade puts back; abyss writes a
// private copy, which later entries copy and the commit installs, so an
// abort puts back nothing. Bamboo counts a commit barrier per transaction;
// abyss looks at the entries ahead of its own at commit.
#include <array>
#include <cstdint>
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
    Timestamp ts{};
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
    const char* data = nullptr;  // a write's private copy, which later entries copy
    TxnId writer{};              // the id that names that copy (Txn::writer_id)
    uint64_t digest = 0;         // checked builds: the copy's digest when it retired
  };

  struct RowMeta {
    platform::Latch latch;
    Entry* head = nullptr;  // the oldest grant
    Entry* tail = nullptr;  // the newest: the owner, when there is one
    // Bumped under the latch whenever an entry leaves or retires: what a
    // waiter watches, outside the latch, before it looks again.
    platform::Atomic<uint64_t> generation{0};
  };
  struct AccessMeta {
    Entry entry;
  };
  struct TxnMeta {
    Timestamp ts{};
    // The access whose write retires at the next access or the commit.
    uint32_t pending = kNone;
  };

  Bamboo(const Config& config, uint32_t workers)
      : latch_(config.latch), retire_(config.settings<BambooConfig>().retire), states_(workers) {}

  Rc begin(auto& t, bool restart) {
    if (!restart) t.meta().ts = t.worker().allocate_ts();
    t.meta().pending = kNone;
    states_.begin(t.worker().id);
    return Rc::Ok;
  }

  Rc read(auto& t, auto& a) {
    retire_pending(t);
    if (wounded(t)) return give_up(t);
    Entry& e = prepare(t, a);
    RowMeta& m = t.row_meta(a.row);
    const bool granted = wait_on_row(t.worker(), states_, m.generation, [&] {
      platform::Latch::Guard g(m.latch, latch_);
      touch(m);
      if (!clear(m, e, false)) return false;
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
      return true;
    });
    return granted ? Rc::Ok : give_up(t);
  }

  Rc write(auto& t, auto& a) {
    retire_pending(t);
    if (wounded(t)) return give_up(t);
    Entry& e = prepare(t, a);
    RowMeta& m = t.row_meta(a.row);
    const bool granted = wait_on_row(t.worker(), states_, m.generation, [&] {
      platform::Latch::Guard g(m.latch, latch_);
      touch(m);
      if (!clear(m, e, true)) return false;
      append(m, e);
      copy_newest(t, a, e);
      own(t, a, e);
      return true;
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
    const bool granted = wait_on_row(t.worker(), states_, m.generation, [&] {
      platform::Latch::Guard g(m.latch, latch_);
      touch(m);
      if (!clear(m, e, true)) return false;
      unlink(m, e);
      append(m, e);
      if (a.local == nullptr) t.snapshot(a);  // read in place: the write needs its copy now
      own(t, a, e);
      return true;
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
          if (younger(*x, e)) states_.wound(x->worker);
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
    e.ts = t.meta().ts;
    e.worker = t.worker().id;
    e.write = a.type != AccessType::Read;
    e.retired = false;
    return e;
  }

  static uint32_t index_of(auto& t, const auto& a) { return static_cast<uint32_t>(&a - t.accesses().data()); }

  // Whether `x` is younger than `e` (a tie, from a timestamp method that
  // hands one out twice, goes by worker).
  static bool younger(const Entry& x, const Entry& e) {
    return x.ts > e.ts || (x.ts == e.ts && x.worker.value > e.worker.value);
  }

  // Whether a request by `e` (a write if `write`) may be granted now, under
  // the row's latch: every entry it conflicts with is older and retired.
  // Wounds each younger one in its way, which then leaves.
  bool clear(RowMeta& m, const Entry& e, bool write) {
    bool clear = true;
    for (Entry* x = m.head; x != nullptr; x = x->next) {
      if (x == &e) continue;
      look(x);
      if (!write && !x->write) continue;
      if (younger(*x, e)) {
        states_.wound(x->worker);  // a decided one cannot be, and is waited for
        clear = false;
      } else if (!x->retired) {
        clear = false;
      }
    }
    return clear;
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

  platform::LatchKind latch_;
  BambooRetire retire_;
  WoundStates states_;
};

}  // namespace abyss::cc
