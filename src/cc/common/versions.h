#pragma once
// The older versions of a row that the multi-version schemes keep (MVCC,
// HEKATON, SSN), and their garbage collection.
//
// Every committed write leaves the version it replaced behind: the newest
// version stays in the row, older ones hang off the row's metadata, newest
// first, each tagged with its writer's timestamp. Each worker publishes the
// timestamp its current transaction reads as of (per worker, timestamps
// only grow); a version older than the newest one at or below the minimum
// of those can never be read again, and is freed whenever its row is
// accessed. A worker recomputes that minimum, its low-water mark, at its
// first begin, then skips `refresh_every` begins before the next
// recomputation (0: every begin). The same mark says when a removed row's
// index entries may go (the schemes' reclaim()).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "cc/common/atomic_timestamp.h"
#include "cc/common/to_row.h"
#include "common/types.h"
#include "platform/atomic.h"
#include "platform/latch.h"
#include "platform/touch.h"
#include "storage/row.h"
#include "txn/access.h"

namespace abyss::cc {

// An older version of a row; its data follows the struct.
struct Version {
  Timestamp wts;
  TxnId writer;
  Version* older;
  Timestamp sstamp;  // SSN only: π of the transaction that replaced it (set after keep())
  uint32_t size;
  char* data() { return reinterpret_cast<char*>(this + 1); }
};

struct VersionedRowMeta : ToRowMeta {
  Version* older = nullptr;  // older versions, newest first
};

// The access of a scheme that reads as of a timestamp and checks at commit
// what it read (HEKATON, SSN).
struct VersionedAccessMeta : ToAccessMeta {
  bool read = false;       // the access read a version
  Timestamp read_version;  // with `read`: that version's timestamp (the load's is 0)
};

// The rows a commit with a commit timestamp writes: those it holds a pending
// write of, and those it inserts.
inline bool commits_row(const auto& a) { return a.cc.prewrite || a.type == AccessType::Insert; }

// Commit, first step: latches every row the commit writes, so that no read
// copies one half installed. Only a pending write's owner, or an inserter
// (no other transaction has found the row yet), holds a row latch for
// longer than one access, so holding several cannot deadlock.
void latch_commit_rows(auto& t, platform::LatchKind latch) {
  for (auto& a : t.accesses()) {
    if (commits_row(a)) t.row_meta(a.row).latch.lock(latch, a.cc.node);
  }
}
// A refused commit's: its pending writes stay until the abort drops them.
void unlatch_commit_rows(auto& t, platform::LatchKind latch) {
  for (auto& a : t.accesses()) {
    if (commits_row(a)) t.row_meta(a.row).latch.unlock(latch, a.cc.node);
  }
}

class Versions {
 public:
  Versions(uint32_t workers, uint32_t refresh_every, platform::LatchKind latch)
      : refresh_every_(refresh_every), latch_(latch), slots_(workers) {}

  // Begins a transaction of `t` at a fresh timestamp (t.meta().ts), which
  // it reads as of.
  void begin(auto& t) {
    const Timestamp ts = t.worker().allocate_ts();
    t.meta().ts = ts;
    begin(t.worker().id.value, ts);
  }

  // A transaction of `worker` reads as of `ts` (or later) from now on.
  void begin(uint32_t worker, Timestamp ts) {
    Slot& s = slots_[worker];
    s.active.store(ts, platform::memory_order_release);
    if (s.until_refresh-- == 0) {
      s.until_refresh = refresh_every_;
      Timestamp low = ts;
      for (const Slot& o : slots_) low = std::min(low, o.active.load(platform::memory_order_acquire));
      s.low_water = low;
    }
  }

  // Below every timestamp a running transaction reads as of, as `worker`
  // last computed it.
  Timestamp low_water(uint32_t worker) const { return slots_[worker].low_water; }

  // The newest version no younger than `ts`: the row's own (nullptr, with
  // `in_row` true), an older one, or none (nullptr: the row was inserted
  // after `ts`). Row latch held.
  static Version* as_of(VersionedRowMeta& m, Timestamp ts, bool& in_row) {
    in_row = m.wts <= ts;
    if (in_row) return nullptr;
    Version* v = m.older;
    while (v != nullptr && v->wts > ts) v = v->older;
    return v;
  }

  // Reads the newest version no younger than `ts` (as_of()) into the
  // access and notes its timestamp in `a.cc` (VersionedAccessMeta); aborts
  // with VersionTooNew if there is none. Row latch held.
  static Rc read_as_of(auto& t, auto& a, VersionedRowMeta& m, Timestamp ts) {
    bool in_row = false;
    Version* v = as_of(m, ts, in_row);
    if (!in_row && v == nullptr) return t.abort_for(AbortCause::VersionTooNew);  // inserted after `ts`
    a.cc.read = true;
    if (in_row) {
      a.cc.read_version = m.wts;
      t.snapshot(a);
    } else {
      a.cc.read_version = v->wts;
      t.snapshot_version(a, v->data(), v->writer);
    }
    return Rc::Ok;
  }

  // Commit, second step, its rows latched (latch_commit_rows()): keeps the
  // version each pending write replaces, then calls `kept(m)`; installs;
  // stamps each row written or inserted with the commit timestamp `ts`, as
  // its wts and rts; ends the pending writes and unlatches.
  template <class Kept>
  void install_latched(auto& t, platform::LatchKind latch, Timestamp ts, Kept&& kept) {
    for (auto& a : t.accesses()) {
      if (!a.cc.prewrite) continue;
      auto& m = t.row_meta(a.row);
      keep(t, a, m);
      kept(m);
    }
    t.install_all();
    for (auto& a : t.accesses()) {
      if (!commits_row(a)) continue;
      auto& m = t.row_meta(a.row);
      m.wts = ts;
      m.rts = ts;
      if (a.cc.prewrite) m.pending.store(kNoTimestamp, platform::memory_order_release);
      a.cc.prewrite = false;
      m.latch.unlock(latch, a.cc.node);
    }
  }
  void install_latched(auto& t, platform::LatchKind latch, Timestamp ts) {
    install_latched(t, latch, ts, [](auto& /*m*/) {});
  }

  // Moves the version in the row to the head of its older versions. Row
  // latch held.
  void keep(auto& t, auto& a, VersionedRowMeta& m) {
    const uint32_t size = a.table->schema().size();
    Version* v = allocate(t, size);
    v->wts = m.wts;
    v->writer = RowLayout::header(a.row).writer;
    v->older = m.older;
    // The one copy of row data a scheme makes itself: the row is read, and the
    // version, which other workers' reads copy later, is written.
    platform::touch(t.layout().data(a.row), size, platform::Access::Read);
    platform::touch(v, sizeof(Version) + size, platform::Access::Write);
    std::memcpy(v->data(), t.layout().data(a.row), size);
    m.older = v;
  }

  // Frees the versions no transaction can read any more: those older than
  // the newest version at or below the low-water mark. Row latch held.
  void collect(auto& t, VersionedRowMeta& m) {
    const Timestamp low = low_water(t.worker().id.value);
    Version** link = &m.older;
    if (m.wts > low) {
      Version* keep = m.older;
      while (keep != nullptr && keep->wts > low) keep = keep->older;
      if (keep == nullptr) return;
      link = &keep->older;
    }
    Version* v = *link;
    *link = nullptr;
    while (v != nullptr) {
      Version* next = v->older;
      release(t, v);
      v = next;
    }
  }

  // A removed row's reclaim(): its index entries stay (older transactions
  // read its versions through them) until every transaction older than the
  // removal is over (its version is below the low-water mark) and no write
  // of it is pending. Then one entry goes: `unlink()` takes it out of its
  // index, and the entry after it, `next()`, takes over its gap. Readers of
  // the gap may have read the removed row as their next key, so the next
  // row's read timestamp rises to the removed row's: an older insert into
  // the joined gap writes the next row and is refused there, as it would
  // have been at the removed one; `unlinked(m)` lets the scheme mark the
  // removed row for the readers that have not committed yet. Both rows'
  // latches are held, and the next row must have no pending write and still
  // be next: no insert can then land between them unseen (txn/txn.h writes
  // next keys under the scheme). Answers whether it unlinked.
  template <class Unlinked>
  bool unlink_removed(auto& t, Row* row, auto&& next, auto&& unlink, platform::LatchKind latch, Unlinked&& unlinked) {
    auto& m = t.row_meta(row);
    const Timestamp low = low_water(t.worker().id.value);
    platform::Latch::Guard g(m.latch, latch);
    if (m.pending.load(platform::memory_order_relaxed) != kNoTimestamp || m.wts >= low) return false;
    Row* after = next();
    auto& n = t.row_meta(after);
    platform::Latch::Guard gn(n.latch, latch);
    if (n.pending.load(platform::memory_order_relaxed) != kNoTimestamp || next() != after) return false;
    n.rts = std::max(n.rts, m.rts);
    unlinked(m);
    unlink();
    return true;
  }

  // Versions held in rows' chains plus those free for reuse, for tests.
  uint64_t allocated() const {
    uint64_t n = 0;
    for (const Slot& s : slots_) n += s.allocated;
    return n;
  }

 private:
  struct FreeList {
    uint32_t size;
    Version* head;
    Version* tail;   // the last on the list, so a whole list moves at once
    uint64_t count;  // versions on the list
  };
  struct alignas(platform::kCacheLine) Slot {
    AtomicTimestamp active;              // timestamp of this worker's latest transaction
    Timestamp low_water = kNoTimestamp;  // owner only: lower bound of every active timestamp
    uint32_t until_refresh = 0;
    uint64_t allocated = 0;
    uint64_t free_count = 0;     // owner only: versions on its lists
    std::vector<FreeList> free;  // owner only: by version size
  };

  // A worker collects the versions of the rows it accesses and reuses them
  // for the versions its commits keep. A worker that collects more than it
  // keeps (one that mostly reads) would hold on to ever more of them while
  // the others allocate new ones; so past kSpillAt free versions a worker
  // hands its lists to a shared pool, and a worker whose list is empty
  // takes the pool's list of that size before it allocates.
  static constexpr uint64_t kSpillAt = 256;

  static FreeList& list_of(std::vector<FreeList>& lists, uint32_t size) {
    for (FreeList& f : lists) {
      if (f.size == size) return f;
    }
    return lists.emplace_back(FreeList{size, nullptr, nullptr, 0});
  }

  Version* allocate(auto& t, uint32_t size) {
    Slot& s = slots_[t.worker().id.value];
    FreeList& mine = list_of(s.free, size);
    if (mine.head == nullptr && pooled_.load(platform::memory_order_relaxed) > 0) {
      platform::Latch::Guard g(pool_latch_, latch_);
      FreeList& shared = list_of(pool_, size);
      mine = shared;
      s.free_count += shared.count;
      pooled_.store(pooled_.load(platform::memory_order_relaxed) - shared.count, platform::memory_order_relaxed);
      shared = FreeList{size, nullptr, nullptr, 0};
    }
    if (Version* v = mine.head; v != nullptr) {
      mine.head = v->older;
      if (mine.head == nullptr) mine.tail = nullptr;
      mine.count--;
      s.free_count--;
      return v;
    }
    s.allocated++;
    auto* v = static_cast<Version*>(t.worker().persistent.allocate(sizeof(Version) + size, alignof(Version)));
    v->size = size;
    return v;
  }

  void release(auto& t, Version* v) {
    Slot& s = slots_[t.worker().id.value];
    FreeList& mine = list_of(s.free, v->size);
    v->older = mine.head;
    mine.head = v;
    if (mine.tail == nullptr) mine.tail = v;
    mine.count++;
    if (++s.free_count < kSpillAt) return;
    platform::Latch::Guard g(pool_latch_, latch_);
    for (FreeList& f : s.free) {
      if (f.head == nullptr) continue;
      FreeList& shared = list_of(pool_, f.size);
      f.tail->older = shared.head;
      shared.head = f.head;
      if (shared.tail == nullptr) shared.tail = f.tail;
      shared.count += f.count;
      pooled_.store(pooled_.load(platform::memory_order_relaxed) + f.count, platform::memory_order_relaxed);
      f = FreeList{f.size, nullptr, nullptr, 0};
    }
    s.free_count = 0;
  }

  uint32_t refresh_every_;  // begins between two low-water recomputations
  platform::LatchKind latch_;
  std::vector<Slot> slots_;
  // The shared pool of free versions, by size, and how many it holds (read
  // without the latch as a hint).
  platform::Latch pool_latch_;
  std::vector<FreeList> pool_;
  platform::Atomic<uint64_t> pooled_{0};
};

}  // namespace abyss::cc
