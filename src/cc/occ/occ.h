#pragma once
// OCC: optimistic concurrency control (Abyss §2.2, Kung & Robinson) with
// private workspaces and parallel, per-tuple validation (Abyss §4.3: no global
// critical section).
//
// A transaction takes a start timestamp, copies every row it reads or writes
// into its workspace and records the version it copied. At commit it latches
// its write set in one global order (row address), takes a second timestamp
// (validation), and checks its read set: a row changed since it was copied, a
// row latched by another committer, or a row whose version was committed after
// this transaction started (Kung & Robinson's backward validation: a
// transaction that finished after our start wrote into our read set) aborts
// it. Otherwise it installs its writes tagged with the validation timestamp.
//
// Each row has a latch, which a committer holds from validation to install,
// and the version (the writer's validation timestamp). A reader takes neither:
// it copies the row between two reads of both, and copies again if a
// committer came in between.
#include <cstdint>
#include <string_view>
#include <vector>

#include "cc/common/atomic_timestamp.h"
#include "cc/common/wait.h"
#include "cc/common/write_set_locking.h"
#include "cc/traits.h"
#include "common/config.h"
#include "common/types.h"
#include "platform/atomic.h"
#include "platform/latch.h"
#include "txn/access.h"

namespace abyss::cc {

class Occ final {
 public:
  static constexpr SchemeTraits kTraits{
      .name = "occ",
      .summary = "optimistic (Kung & Robinson) with per-tuple parallel validation",
      .paper = "Abyss §2.2, §4.3",
      .family = Family::Optimistic,
      .allocates_timestamps = true,  // a start and a validation timestamp per attempt
      .uses_latch = false,           // the row word packs the version and a compare-and-swap latch
      .waits = true,                 // a read waits while a committer installs the row
      .causes = abort_causes({AbortCause::ReadValidation}),
  };

  struct RowMeta {
    platform::Atomic<uint32_t> latch{0};  // kExclusive while a committer validates and installs, else 0
    AtomicTimestamp wts;                  // validation timestamp of the version in the row
  };
  struct AccessMeta {
    Timestamp observed;   // wts of the version copied
    bool locked = false;  // latched exclusively for commit
  };
  struct TxnMeta {
    Timestamp start_ts;
    std::vector<uint32_t> write_order;  // write set indexes, sorted by row address
  };

  Occ(const Config& /*config*/, uint32_t /*workers*/) {}

  Rc begin(auto& t, bool /*restart*/) {
    t.meta().start_ts = t.worker().allocate_ts();
    return Rc::Ok;
  }

  Rc read(auto& t, auto& a) {
    copy(t, a);
    return Rc::Ok;
  }
  Rc write(auto& t, auto& a) {
    copy(t, a);
    return Rc::Ok;
  }
  // The copy taken by the read is what the write modifies; validation checks it.
  Rc upgrade(auto& /*t*/, auto& /*a*/) { return Rc::Ok; }
  Rc insert(auto& /*t*/, auto& /*a*/) { return Rc::Ok; }

  Rc commit(auto& t) {
    // The write set, inserts included, latched in address order (Abyss §4.3).
    auto& order = t.meta().write_order;
    lock_write_set<LockInserts::Yes>(t, order, [](RowMeta& m) {
      lock_exclusive(m);
      return true;
    });

    const Timestamp commit_ts = t.worker().allocate_ts();
    const Timestamp start_ts = t.meta().start_ts;
    for (auto& a : t.accesses()) {
      if (a.type == AccessType::Insert) continue;
      const auto& m = t.row_meta(a.row);
      // Sequentially consistent, as is the latching: two committers that each
      // latched a row the other read must not both see the other's row free.
      if (!a.cc.locked && m.latch.load(platform::memory_order_seq_cst) == kExclusive) {
        return t.abort_for(AbortCause::ReadValidation);
      }
      const Timestamp now = m.wts.load(platform::memory_order_seq_cst);
      if (now != a.cc.observed || now > start_ts) return t.abort_for(AbortCause::ReadValidation);
    }

    install_and_publish(t, [&](RowMeta& m) {
      m.wts.store(commit_ts, platform::memory_order_release);
      m.latch.store(0, platform::memory_order_release);
    });
    return Rc::Ok;
  }

  void abort(auto& t) {
    unlock_write_set(t, [](RowMeta& m) { m.latch.store(0, platform::memory_order_release); });
  }

 private:
  static constexpr uint32_t kExclusive = uint32_t{1} << 31;

  // Copies the row and records the version copied, writing no shared memory:
  // the copy is taken between two reads of the latch and wts, and again if a
  // committer latched or installed the row meanwhile (a seqlock,
  // platform/shared_copy.h): a latched row is waited for, charged to Wait;
  // one installed and released meanwhile is copied again at once.
  static void copy(auto& t, auto& a) {
    auto& m = t.row_meta(a.row);
    retry_until_done(t.worker(), [&] {
      if (m.latch.load(platform::memory_order_acquire) == kExclusive) return Attempt::Retry;
      const Timestamp before = m.wts.load(platform::memory_order_acquire);
      t.snapshot(a);  // acquire loads: the re-reads below cannot move above them
      // Acquire: a latch released since carries the wts installed under it.
      if (m.latch.load(platform::memory_order_acquire) == kExclusive) return Attempt::Retry;
      if (m.wts.load(platform::memory_order_relaxed) != before) return Attempt::Again;  // installed meanwhile
      a.cc.observed = before;
      return Attempt::Done;
    });
  }

  // Waits out other committers. Committers latch in address order and
  // readers hold nothing, so this cannot deadlock.
  static void lock_exclusive(RowMeta& m) {
    platform::SpinWait spin;
    uint32_t expected = 0;
    while (!m.latch.compare_exchange_weak(expected, kExclusive, platform::memory_order_seq_cst,
                                          platform::memory_order_relaxed)) {
      expected = 0;
      spin.once();
    }
  }
};

}  // namespace abyss::cc
