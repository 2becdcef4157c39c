#pragma once
// CICADA: multi-version optimistic concurrency control at one timestamp per
// transaction (Lim, Kaminsky and Andersen, "Cicada: Dependably Fast
// Multi-Core In-Memory Transactions", SIGMOD 2017).
//
// A transaction takes one timestamp as it begins; every version carries its
// writer's. Cicada takes it from a clock of the worker's own, loosely
// synchronised with the others' (`--ts-alloc clock`); any allocator serves.
//   - A read takes the newest version no younger than the timestamp, as MVCC
//     does, waiting first for an older write being installed (pending) that
//     could become that version. It marks nothing: the version's read
//     timestamp is raised at commit.
//   - A write copies the newest version into the transaction's private copy
//     and installs nothing. It aborts at once when its version could never
//     go on top: the newest is younger than the transaction, or was read by
//     a younger one that committed (Cicada's early abort).
//   - Commit validates in Cicada's order. First each written row gets the
//     transaction's pending write, if the version it copied is still the
//     newest and no younger committed transaction read it, and no other
//     write is pending (else lock_conflict). Then each row only read: once
//     an older pending write there is installed or dropped, the version
//     visible at the timestamp must still be the one read (else
//     read_validation), and if it is the newest its read timestamp rises to
//     this one. Then the pending writes are installed, as versions of this
//     timestamp.
// A reader younger than a committer either read before the committer's
// pending write appeared, and then raised the read timestamp the committer
// checks or finds the new version when it validates, or it waits for the
// install. So every commit is serialized at its timestamp.
//
// Removed rows keep their index entries until no running transaction is
// older than the removal (the low-water mark of cc/common/versions.h);
// then, as in MVCC, the next row's read timestamp rises to the removed
// row's, and the removed row is marked: a transaction that read it as a
// range's next key and has not committed fails validation (phantom).
//
// Departures: Cicada's best-effort inlining is abyss's layout (the newest
// version always lives in the row); its contention regulation is the
// runner's backoff; its write set is validated in access order, not sorted
// by contention; a read-only transaction is validated like any other.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "cc/common/to_row.h"
#include "cc/common/versions.h"
#include "cc/traits.h"
#include "common/config.h"
#include "common/knob.h"
#include "common/types.h"
#include "platform/atomic.h"
#include "platform/latch.h"
#include "storage/row.h"
#include "txn/access.h"

namespace abyss::cc {

// CICADA's setting (Cicada::knobs); a run's is
// Config::settings<CicadaConfig>().
struct CicadaConfig {
  uint32_t refresh_every = 32;  // begins between low-water-mark recomputations
};

class Cicada final {
 public:
  static constexpr SchemeTraits kTraits{
      .name = "cicada",
      .summary =
          "multi-version optimistic at one timestamp: reads as of it, writes installed at commit after validation",
      .paper = "Lim et al., SIGMOD 2017 (Cicada)",
      .family = Family::MultiVersionOptimistic,
      .allocates_timestamps = true,  // one per attempt, at begin
      .uses_latch = true,            // a row's versions and pending write sit behind a latch
      .waits = true,                 // a read, and a commit's validation, for an older write being installed
      .keeps_versions = true,        // older versions stay readable until no transaction can see them
      .causes = abort_causes({AbortCause::TimestampOrder, AbortCause::LockConflict, AbortCause::VersionTooNew,
                              AbortCause::ReadValidation, AbortCause::Phantom}),
  };

  struct RowMeta : VersionedRowMeta {
    bool unlinked = false;  // a removed row taken out of its indexes (reclaim())
  };
  using AccessMeta = VersionedAccessMeta;
  using TxnMeta = ToTxnMeta;

  static std::vector<Knob> knobs() {
    return {integer<uint32_t>(
        "cicada-refresh-every", "cicada_refresh_every", 0, 1'000'000,
        +[](Config& c) -> uint32_t& { return c.settings<CicadaConfig>().refresh_every; },
        "CICADA: transactions a worker begins between two recomputations of its garbage-collection low-water "
        "mark (0: at every begin)")};
  }

  Cicada(const Config& config, uint32_t workers)
      : latch_(config.latch), versions_(workers, config.settings<CicadaConfig>().refresh_every, config.latch) {}

  Rc begin(auto& t, bool /*restart*/) {
    versions_.begin(t);
    return Rc::Ok;
  }

  Rc read(auto& t, auto& a) {
    RowMeta& m = t.row_meta(a.row);
    return after_older_writes(t, m, latch_, [&] {
      versions_.collect(t, m);
      return Versions::read_as_of(t, a, m, t.meta().ts);
    });
  }

  Rc write(auto& t, auto& a) {
    RowMeta& m = t.row_meta(a.row);
    return after_older_writes(t, m, latch_, [&] {
      versions_.collect(t, m);
      if (Rc rc = doomed(t, m); rc != Rc::Ok) return rc;
      a.cc.read = true;
      a.cc.read_version = m.wts;
      t.snapshot(a);
      return Rc::Ok;
    });
  }

  // Only a read of the newest version can become a write.
  Rc upgrade(auto& t, auto& a) {
    RowMeta& m = t.row_meta(a.row);
    platform::Latch::Guard g(m.latch, latch_);
    if (m.wts != a.cc.read_version) return t.abort_for(AbortCause::TimestampOrder);
    return doomed(t, m);
  }

  // Its one version carries its inserter's timestamp; invisible until commit
  // indexes it.
  Rc insert(auto& t, auto& a) {
    stamp_insert(t, a);
    return Rc::Ok;
  }

  Rc commit(auto& t) {
    const Timestamp ts = t.meta().ts;
    // The pending writes: each row written must still carry the version
    // copied, unread by a younger committed transaction.
    for (auto& a : t.accesses()) {
      if (a.type == AccessType::Read || a.type == AccessType::Insert) continue;
      RowMeta& m = t.row_meta(a.row);
      platform::Latch::Guard g(m.latch, latch_);
      if (m.pending.load(platform::memory_order_relaxed) != kNoTimestamp) {
        return t.abort_for(AbortCause::LockConflict);
      }
      if (m.wts != a.cc.read_version) return t.abort_for(AbortCause::ReadValidation);
      if (m.rts > ts) return t.abort_for(AbortCause::TimestampOrder);
      m.pending.store(ts, platform::memory_order_release);
      a.cc.prewrite = true;
    }
    // The rows only read: still the version visible at the timestamp.
    for (auto& a : t.accesses()) {
      if (a.type != AccessType::Read || !a.cc.read) continue;
      RowMeta& m = t.row_meta(a.row);
      const Rc rc = after_older_writes(t, m, latch_, [&] {
        if (m.unlinked) return t.abort_for(AbortCause::Phantom);
        bool in_row = false;
        const Version* v = Versions::as_of(m, ts, in_row);
        const Timestamp visible = in_row ? m.wts : v != nullptr ? v->wts : kNoTimestamp;
        if ((!in_row && v == nullptr) || visible != a.cc.read_version) {
          return t.abort_for(AbortCause::ReadValidation);
        }
        if (in_row) m.rts = std::max(m.rts, ts);
        return Rc::Ok;
      });
      if (rc != Rc::Ok) return rc;
    }
    latch_commit_rows(t, latch_);
    versions_.install_latched(t, latch_, ts);
    return Rc::Ok;
  }

  void abort(auto& t) { drop_prewrites(t, latch_); }

  // Versions::unlink_removed(), which marks the removed row: a transaction
  // that read it (as a range's next key) and has not committed fails its
  // validation (phantom).
  bool reclaim(auto& t, Row* row, auto&& next, auto&& unlink) {
    return versions_.unlink_removed(t, row, next, unlink, latch_, [](RowMeta& m) { m.unlinked = true; });
  }

  // Versions held in rows' chains plus those free for reuse, for tests.
  uint64_t versions_allocated() const { return versions_.allocated(); }

 private:
  // Cicada's early abort: a version of this timestamp could not go on top
  // of the row's newest, which is younger, or which a younger committed
  // transaction read. Row latch held.
  static Rc doomed(auto& t, const RowMeta& m) {
    const Timestamp ts = t.meta().ts;
    if (m.wts > ts) return t.abort_for(AbortCause::VersionTooNew);
    if (m.rts > ts) return t.abort_for(AbortCause::TimestampOrder);
    return Rc::Ok;
  }

  platform::LatchKind latch_;
  Versions versions_;
};

}  // namespace abyss::cc
