#pragma once
// VLL: very lightweight locking (Ren, Thomson & Abadi, "Lightweight Locking
// for Main Memory Database Systems", PVLDB 6(2), 2012; DBx1000 ships it). A row's
// lock is two counters, CX and CS: how many transactions want it
// exclusively and how many shared. There is no lock table and no queue per
// row. A transaction declares the rows it will use and counts itself into
// all of them at once, in one critical section under a global latch, as it
// joins the global queue of transactions. When it was the only one counted
// on what it takes (CX = 1 and CS = 0 for a write; CX = 0 for a read), it
// is free and runs at once; otherwise it is blocked, and runs once it is the
// oldest transaction in the queue. Its end counts it out of
// every row and leaves the queue.
//
// VLL needs each transaction's rows before it starts. abyss's workloads
// find their keys as they run (a TPC-C order's lines, a scan's range), so a
// transaction's first attempt is its reconnaissance, the role of Calvin's
// reconnaissance pass (OLLP; Thomson et al., SIGMOD 2012): it joins
// the queue with nothing declared and counts itself into each row as it
// reaches it, with one compare-and-swap, and aborts at the first row
// another transaction is counted on (`lock_conflict`). The restart declares
// every row the aborted attempt reached (and what earlier attempts
// declared), with the mode it wanted, and takes them all at once. A row an
// attempt reaches outside what it declared is taken the same way, one by
// one, and a conflict there aborts it too, so the next attempt declares
// more. An attempt that meets no conflict commits as it is.
//
// Why it is serializable: it is strict two-phase locking. Each access holds
// a count, declared or taken at the access, until the install is done, and
// no two transactions that run at the same time hold counts that conflict:
//   - a count taken at the access goes on only when no conflicting count is
//     there, and a later conflicting one is refused (taken at an access) or
//     blocks the one that declares it;
//   - a free transaction had no conflicting count on its declared rows when
//     it counted itself in, and the same holds from then on;
//   - a blocked transaction runs only at the head of the queue. Every
//     transaction is in the queue from its begin to its end, and a count is
//     taken only after the transaction joined, so every count in conflict
//     with a blocked transaction's was either there first, and belongs to
//     an older transaction, which has ended by the time it reaches the head,
//     or came later, from a transaction that is younger and then refused
//     or blocked itself. The head never waits, so the queue always moves.
// A scan is protected from phantoms by its next keys (txn/scan.h): an
// insert writes the key above it, which the scan read.
//
// Departures: DBx1000's VLL runs YCSB only, whose keys its queries list; a
// blocked transaction is left in the queue and run by whichever worker
// finds it at the head, while its own worker starts another. Here a worker
// waits for its own blocked transaction. Selective contention analysis
// (SCA) is not built, as in DBx1000. The counts of a transaction that
// declares are taken under the global latch, as VLL's are; those taken at
// an access are one compare-and-swap on the row's word, which the latch's
// holders change with fetch-and-add. A secondary-index key an attempt
// aborted on is not declared again (a restart finds declared rows by
// primary key), and a transaction resumed from --abort-buffer starts with
// nothing declared.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "cc/common/count_word.h"
#include "cc/common/wait.h"
#include "cc/traits.h"
#include "common/config.h"
#include "common/types.h"
#include "platform/atomic.h"
#include "platform/latch.h"
#include "storage/row.h"
#include "txn/access.h"

namespace abyss::cc {

class Vll final {
 public:
  static constexpr SchemeTraits kTraits{
      .name = "vll",
      .summary =
          "lock counters on each row, taken all at once under a global latch in a global queue; a "
          "blocked transaction runs at the queue's head",
      .paper = "Ren et al., PVLDB 6(2) 2012 (VLL)",
      .family = Family::Locking,
      .allocates_timestamps = false,  // the global queue is the order
      .uses_latch = true,             // declarations join the queue under one global latch
      .waits = true,                  // a blocked transaction, until it is the queue's head
      .writes_in_place = true,        // a written row is counted exclusively until the end (strict 2PL)
      .causes = abort_causes({AbortCause::LockConflict}),
  };

  // A row's counters in one word: CX in the high half, CS in the low.
  static constexpr uint64_t kExclusive = uint64_t{1} << 32;
  using Word = CountWord<kExclusive>;  // a count taken at an access
  struct RowMeta {
    platform::Atomic<uint64_t> word{0};
  };

  // A count this access took itself, outside what the attempt declared.
  enum class Held : uint8_t { None, Shared, Exclusive };
  struct AccessMeta {
    Held held = Held::None;
    bool wants_write = false;  // asked to write it: the next attempt declares it so
  };

  // A row an attempt declares: found by its primary key, and counted only
  // if the index still maps that key to the row the last attempt reached.
  struct Declared {
    Table* table;
    uint64_t key;
    Row* row;
    bool write;
  };
  // A transaction's place in the global queue.
  struct QueueEntry {
    QueueEntry* prev = nullptr;
    QueueEntry* next = nullptr;
    bool queued = false;  // from begin() to the attempt's end
    bool blocked = false;
    platform::Atomic<bool> granted{false};  // a blocked one reached the head
  };
  struct TxnMeta {
    std::vector<Declared> declared;  // this attempt's, counted in, sorted by row
    std::vector<Declared> next;      // what the next attempt declares
    QueueEntry entry;
  };

  Vll(const Config& config, uint32_t /*workers*/) : latch_kind_(config.latch) {}

  Rc begin(auto& t, bool restart) {
    auto& m = t.meta();
    if (!restart) m.next.clear();
    m.declared.clear();
    for (const Declared& d : m.next) {
      if (t.indexed_row(*d.table, d.key) == d.row) m.declared.push_back(d);
    }
    QueueEntry& q = m.entry;
    q.next = nullptr;
    q.granted.store(false, platform::memory_order_relaxed);
    bool blocked = false;
    {
      platform::Latch::Guard g(queue_.latch, latch_kind_);
      for (const Declared& d : m.declared) {
        const uint64_t was = t.row_meta(d.row).word.fetch_add(d.write ? kExclusive : 1, platform::memory_order_acq_rel);
        blocked |= d.write ? was != 0 : was >= kExclusive;
      }
      q.prev = queue_.tail;
      if (queue_.tail != nullptr) {
        queue_.tail->next = &q;
      } else {
        queue_.head = &q;
      }
      queue_.tail = &q;
      q.queued = true;
      q.blocked = blocked && queue_.head != &q;
    }
    // The head never waits, so this wait ends.
    if (q.blocked) (void)wait_for_grant(t.worker(), q, [](uint64_t) { return false; });
    return Rc::Ok;
  }

  Rc read(auto& t, auto& a) {
    if (declared(t, a.row) == nullptr) {
      if (!Word::try_shared(t.row_meta(a.row).word)) return t.abort_for(AbortCause::LockConflict);
      a.cc.held = Held::Shared;
    }
    t.view_in_place(a);
    return Rc::Ok;
  }

  Rc write(auto& t, auto& a) {
    a.cc.wants_write = true;
    if (Declared* d = declared(t, a.row)) {
      if (!d->write && !Word::try_upgrade(t.row_meta(a.row).word)) return t.abort_for(AbortCause::LockConflict);
      d->write = true;
    } else {
      if (!Word::try_exclusive(t.row_meta(a.row).word)) return t.abort_for(AbortCause::LockConflict);
      a.cc.held = Held::Exclusive;
    }
    t.write_in_place(a);
    return Rc::Ok;
  }

  // A read becomes a write: only when this transaction is the row's sole
  // counted reader and nobody wants it exclusively.
  Rc upgrade(auto& t, auto& a) {
    a.cc.wants_write = true;
    if (Declared* d = declared(t, a.row)) {
      if (!d->write && !Word::try_upgrade(t.row_meta(a.row).word)) return t.abort_for(AbortCause::LockConflict);
      d->write = true;
      return Rc::Ok;
    }
    if (!Word::try_upgrade(t.row_meta(a.row).word)) return t.abort_for(AbortCause::LockConflict);
    a.cc.held = Held::Exclusive;
    return Rc::Ok;
  }

  // An inserted row is invisible until commit indexes it: nothing to count.
  Rc insert(auto& /*t*/, auto& /*a*/) { return Rc::Ok; }

  Rc commit(auto& t) {
    t.install_all();
    release(t);
    return Rc::Ok;
  }

  void abort(auto& t) {
    remember(t);
    release(t);
  }

 private:
  struct alignas(platform::kCacheLine) Queue {
    platform::Latch latch;
    QueueEntry* head = nullptr;  // the oldest transaction
    QueueEntry* tail = nullptr;
  };

  static bool by_row(const Declared& a, const Declared& b) { return std::less<Row*>()(a.row, b.row); }

  // The attempt's declared row, or null.
  static Declared* declared(auto& t, Row* row) {
    auto& d = t.meta().declared;
    const auto it = std::lower_bound(d.begin(), d.end(), Declared{nullptr, 0, row, false}, by_row);
    return it != d.end() && it->row == row ? &*it : nullptr;
  }

  // What the restart declares: every row this attempt declared or reached,
  // written if it was written or asked to be.
  static void remember(auto& t) {
    auto& m = t.meta();
    m.next = m.declared;
    for (const auto& a : t.accesses()) {
      if (a.type == AccessType::Insert) continue;
      m.next.push_back({a.table, a.key, a.row, a.type != AccessType::Read || a.cc.wants_write});
    }
    std::sort(m.next.begin(), m.next.end(), by_row);
    auto out = m.next.begin();
    for (auto it = m.next.begin(); it != m.next.end(); ++it) {
      if (out != m.next.begin() && std::prev(out)->row == it->row) {
        std::prev(out)->write |= it->write;
      } else {
        *out++ = *it;
      }
    }
    m.next.erase(out, m.next.end());
  }

  // Counts the transaction out of every row, then takes it out of the
  // queue; a blocked transaction that becomes the head runs.
  void release(auto& t) {
    auto& m = t.meta();
    for (auto& a : t.accesses()) {
      if (a.cc.held != Held::None) {
        t.row_meta(a.row).word.fetch_sub(a.cc.held == Held::Exclusive ? kExclusive : 1, platform::memory_order_release);
      }
      a.cc.held = Held::None;
    }
    for (const Declared& d : m.declared) {
      t.row_meta(d.row).word.fetch_sub(d.write ? kExclusive : 1, platform::memory_order_release);
    }
    m.declared.clear();
    QueueEntry& q = m.entry;
    if (!q.queued) return;
    platform::Latch::Guard g(queue_.latch, latch_kind_);
    q.queued = false;
    if (q.prev != nullptr) {
      q.prev->next = q.next;
    } else {
      queue_.head = q.next;
    }
    if (q.next != nullptr) {
      q.next->prev = q.prev;
    } else {
      queue_.tail = q.prev;
    }
    if (q.prev == nullptr && q.next != nullptr && q.next->blocked) {
      q.next->granted.store(true, platform::memory_order_release);
    }
  }

  platform::LatchKind latch_kind_;
  Queue queue_;
};

}  // namespace abyss::cc
