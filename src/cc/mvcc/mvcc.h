#pragma once
// MVCC: multi-version timestamp ordering (Abyss §2.2).
//
// Every committed write creates a version tagged with its writer's timestamp.
// The newest version stays in the row; older ones hang off the row's metadata,
// newest first. A transaction's timestamp picks what it sees:
//   - A read takes the newest version no younger than itself and is never
//     rejected for arriving late. If an older pending write could still become
//     that version, the read waits for it.
//   - A write supersedes the newest version. It aborts when a younger
//     transaction has already read that version or written the row (its
//     version would have to go under theirs), and waits for an older pending
//     write first. As in TIMESTAMP, at most one write is pending per row.
// Old versions are garbage-collected whenever a row is accessed
// (cc/common/versions.h); a worker recomputes its low-water mark every
// --mvcc-refresh-every (default 32) begins. The same mark lets a removed
// row's index entries go (reclaim()).
//
// --isolation snapshot and read-committed (docs/schemes.md, "Isolation
// levels") keep the versions but order them by commit: a committer latches
// its written and inserted rows, then takes a second timestamp, its commit
// timestamp, installs, and tags its versions with it.
//   - A snapshot read takes the newest version committed at or before the
//     transaction's begin timestamp; a read-committed read takes the newest
//     committed one. Neither marks the row read nor waits for a pending
//     write (it is not committed); a read finds a committing row latched,
//     so it sees all of a commit or none of it.
//   - A write aborts when another write of the row is pending (first
//     updater wins) and, under snapshot, when a version newer than the
//     snapshot was committed (first committer wins). Read committed lets it
//     overwrite: its lost updates are what that level allows.
// Versions stay ordered by commit, and a reader's snapshot is never below
// the low-water mark, so garbage collection is unchanged.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "cc/common/to_row.h"
#include "cc/common/versions.h"
#include "cc/traits.h"
#include "common/config.h"
#include "common/knob.h"
#include "common/types.h"
#include "platform/atomic.h"
#include "platform/latch.h"
#include "platform/touch.h"
#include "storage/row.h"
#include "txn/access.h"

namespace abyss::cc {

// MVCC's setting, one knob row (Mvcc::knobs); a run's is
// Config::settings<MvccConfig>().
struct MvccConfig {
  uint32_t refresh_every = 32;  // begins between low-water-mark recomputations
};

class Mvcc final {
 public:
  static constexpr SchemeTraits kTraits{
      .name = "mvcc",
      .summary = "multi-version timestamp ordering: reads pick the version of their timestamp",
      .paper = "Abyss §2.2",
      .family = Family::TimestampOrdering,
      .allocates_timestamps = true,  // every attempt takes a new timestamp that picks its versions
      .uses_latch = true,            // a row's versions and pending write sit behind a latch
      .waits = true,                 // an access waits for an older pending write
      .keeps_versions = true,        // older versions stay readable until no transaction can see them
      .weaker_isolation = true,      // snapshot and read committed read versions ordered by commit
      .causes = abort_causes(
          {AbortCause::TimestampOrder, AbortCause::LockConflict, AbortCause::VersionTooNew, AbortCause::Phantom}),
  };

  using RowMeta = VersionedRowMeta;
  using AccessMeta = ToAccessMeta;
  using TxnMeta = ToTxnMeta;

  static std::vector<Knob> knobs() {
    return {integer<uint32_t>(
        "mvcc-refresh-every", "mvcc_refresh_every", 0, 1'000'000,
        +[](Config& c) -> uint32_t& { return c.settings<MvccConfig>().refresh_every; },
        "MVCC: transactions a worker begins between two recomputations of its garbage-collection low-water mark "
        "(0: at every begin; Abyss §2.2)")};
  }

  Mvcc(const Config& config, uint32_t workers)
      : latch_(config.latch),
        isolation_(config.isolation),
        versions_(workers, config.settings<MvccConfig>().refresh_every, config.latch) {}

  Rc begin(auto& t, bool /*restart*/) {
    versions_.begin(t);
    return Rc::Ok;
  }

  // A read older than the newest version reads the newest older one no
  // younger than itself, and is never rejected for arriving late.
  Rc read(auto& t, auto& a) {
    const Timestamp ts = t.meta().ts;
    auto& m = t.row_meta(a.row);
    if (isolation_ != Isolation::Serializable) {
      platform::Latch::Guard g(m.latch, latch_);
      versions_.collect(t, m);
      return read_as_of(t, a, m, isolation_ == Isolation::Snapshot ? ts : kNewest, false);
    }
    return after_older_writes(t, m, latch_, [&] {
      versions_.collect(t, m);
      return read_as_of(t, a, m, ts, true);
    });
  }

  Rc write(auto& t, auto& a) {
    if (isolation_ != Isolation::Serializable) {
      auto& m = t.row_meta(a.row);
      platform::Latch::Guard g(m.latch, latch_);
      versions_.collect(t, m);
      if (Rc rc = prewrite_committed(t, a, m); rc != Rc::Ok) return rc;
      t.snapshot(a);
      return Rc::Ok;
    }
    return write_after_older_writes(t, a, latch_, [&](RowMeta& m) { versions_.collect(t, m); });
  }

  // Only a read of the newest version can become a write, and only if nothing
  // younger has read or written the row since (serializable), or nothing was
  // committed since the snapshot (snapshot).
  Rc upgrade(auto& t, auto& a) {
    if (isolation_ != Isolation::Serializable) {
      auto& m = t.row_meta(a.row);
      platform::Latch::Guard g(m.latch, latch_);
      return prewrite_committed(t, a, m);
    }
    return upgrade_to_prewrite(t, a, latch_);
  }

  // Its one version carries its inserter's timestamp, so an older transaction
  // finds no version it may read (and aborts), and cannot write under it.
  Rc insert(auto& t, auto& a) {
    stamp_insert(t, a);
    return Rc::Ok;
  }

  // Keeps each superseded version, then installs; the new version has been
  // read by no one younger than its writer.
  Rc commit(auto& t) {
    if (isolation_ != Isolation::Serializable) {
      commit_in_order(t);
      return Rc::Ok;
    }
    install_prewrites(
        t, latch_, [&](auto& a, RowMeta& m) { versions_.keep(t, a, m); }, [&](RowMeta& m) { m.rts = t.meta().ts; });
    return Rc::Ok;
  }

  void abort(auto& t) { drop_prewrites(t, latch_); }

  // Versions::unlink_removed(). A transaction that found the removed row's
  // entry before reads the row either first, and its read timestamp moves
  // on, or after, and then finds the entry gone when it looks again
  // (txn/txn.h, scans).
  bool reclaim(auto& t, Row* row, auto&& next, auto&& unlink) {
    return versions_.unlink_removed(t, row, next, unlink, latch_, [](ToRowMeta& /*m*/) {});
  }

  // Versions held in rows' chains plus those free for reuse, for tests.
  uint64_t versions_allocated() const { return versions_.allocated(); }

 private:
  // Newer than any timestamp: read committed's reads see the newest version.
  static constexpr Timestamp kNewest{~uint64_t{0}};

  // Reads the newest version no younger than `ts`; `mark` records the read
  // at `ts` when it is of the newest (serializable). A row with no such
  // version was inserted after `ts`. Row latch held.
  Rc read_as_of(auto& t, auto& a, RowMeta& m, Timestamp ts, bool mark) {
    bool in_row = false;
    Version* v = Versions::as_of(m, ts, in_row);
    if (in_row) {
      if (mark) {
        read_newest(t, a, m);
      } else {
        t.snapshot(a);
      }
      return Rc::Ok;
    }
    if (v == nullptr) return t.abort_for(AbortCause::VersionTooNew);  // inserted after this transaction's timestamp
    t.snapshot_version(a, v->data(), v->writer);
    return Rc::Ok;
  }

  // Snapshot and read committed: a write registers as the row's pending
  // write unless another is pending (first updater wins) or, under
  // snapshot, a version newer than the snapshot is committed (first
  // committer wins). Row latch held.
  Rc prewrite_committed(auto& t, auto& a, RowMeta& m) {
    if (m.pending.load(platform::memory_order_relaxed) != kNoTimestamp) return t.abort_for(AbortCause::LockConflict);
    if (isolation_ == Isolation::Snapshot && m.wts > t.meta().ts) return t.abort_for(AbortCause::VersionTooNew);
    m.pending.store(t.meta().ts, platform::memory_order_relaxed);
    a.cc.prewrite = true;
    return Rc::Ok;
  }

  // Snapshot and read committed's commit: latches every written and
  // inserted row, then takes the commit timestamp, so a transaction whose
  // snapshot is younger finds each of them latched until the install is
  // done; keeps each superseded version, installs, and tags the versions
  // with the commit timestamp. Only a pending write's owner or an
  // inserter, which no other transaction has found yet, latches a row for
  // longer than one access: no deadlock.
  void commit_in_order(auto& t) {
    latch_commit_rows(t, latch_);
    t.meta().ts = t.worker().allocate_ts();
    versions_.install_latched(t, latch_, t.meta().ts);
  }

  platform::LatchKind latch_;
  Isolation isolation_;
  Versions versions_;
};

}  // namespace abyss::cc
