#pragma once
// SSN: ERMIA's snapshot isolation (Kim et al., SIGMOD 2016) made
// serializable by the serial safety net (Wang et al., "Efficiently making
// (almost) any concurrency control mechanism serializable", VLDB J 26(4)
// 2017), in its serial-commit form.
//
// Reads and writes are snapshot isolation's:
//   - A read takes the newest version committed at or before the begin
//     timestamp (versions kept as MVCC keeps them, cc/common/versions.h). A
//     committer latches the rows it writes before it takes its commit
//     timestamp and until they are installed, so a reader sees all of a
//     commit below its begin or none of it; a read never waits otherwise.
//   - A write may only replace the newest version, and only one the writer
//     can see: it aborts if another write of the row is pending (first
//     updater wins: lock_conflict) or the newest version is newer than the
//     begin timestamp (first committer wins: version_too_new).
// The safety net certifies each commit against the dependencies snapshot
// isolation leaves unchecked. Each version carries its commit timestamp
// (`wts`), the largest commit timestamp of a committed transaction that
// read it (η, kept in the row's `rts`: only the newest version can still be
// overwritten), and, once replaced, the π of its replacer (Version::sstamp).
// At commit, under one latch every committer takes (commits are certified
// one at a time):
//   - η(T) = the largest of the commit timestamps of the versions T read and
//     the η of the versions T replaces (the transactions that must come
//     before T);
//   - π(T) = the smallest of T's commit timestamp and the π of the
//     replacers of versions T read that were replaced before T commits (the
//     transactions that must come after T, and those they must precede);
//   - T aborts if π(T) <= η(T) (certifier): a transaction that must follow
//     T committed no later than one that must precede it, the shape every
//     cycle of a history under snapshot isolation takes (the safety net's theorem).
//   - Otherwise T raises η of each newest version it read to its commit
//     timestamp, sets π of each version it replaces to π(T), and installs.
// A transaction that read a removed row as the end of a range (its next
// key) after the row's entries were taken out (reclaim()) aborts (phantom):
// an insert into the joined gap writes the row after it, where the edge
// from the reader to the inserter would not be seen.
//
// --isolation snapshot leaves the certifier out: ERMIA's snapshot isolation,
// which admits write skew. --isolation read-committed reads the newest
// committed version instead and lets a write overwrite a version newer than
// the begin timestamp (docs/schemes.md, "Isolation levels").
//
// Where this departs from ERMIA: storage, logging and the epoch-based
// reclamation are abyss's own; the safety net's latch-free parallel commit
// is not built, and a read-only transaction is certified like any
// other.
#include <algorithm>
#include <cstdint>
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
#include "storage/row.h"
#include "txn/access.h"

namespace abyss::cc {

// SSN's setting (Ssn::knobs); a run's is Config::settings<SsnConfig>().
struct SsnConfig {
  uint32_t refresh_every = 32;  // begins between low-water-mark recomputations
};

class Ssn final {
 public:
  static constexpr SchemeTraits kTraits{
      .name = "ssn",
      .summary = "snapshot isolation (ERMIA) with the serial safety net's certifier at commit",
      .paper = "Wang et al., VLDB J 26(4) 2017 (SSN) over Kim et al., SIGMOD 2016 (ERMIA)",
      .family = Family::MultiVersionOptimistic,
      .allocates_timestamps = true,  // a begin and a commit timestamp per attempt
      .commit_timestamps = true,     // commits are ordered by their timestamps
      .uses_latch = true,            // a row's versions and pending write sit behind a latch; one commit latch
      .waits = false,                // only on latches
      .keeps_versions = true,        // older versions stay readable until no transaction can see them
      .weaker_isolation = true,      // snapshot: the certifier left out; read committed
      .causes = abort_causes(
          {AbortCause::LockConflict, AbortCause::VersionTooNew, AbortCause::Certifier, AbortCause::Phantom}),
  };

  struct RowMeta : VersionedRowMeta {  // rts: η of the version in the row
    bool unlinked = false;             // a removed row taken out of its indexes (reclaim())
  };
  // A version read is certified at commit.
  using AccessMeta = VersionedAccessMeta;
  struct TxnMeta : ToTxnMeta {  // ts: the begin timestamp
    platform::McsLatch::Node node;
  };

  static std::vector<Knob> knobs() {
    return {integer<uint32_t>(
        "ssn-refresh-every", "ssn_refresh_every", 0, 1'000'000,
        +[](Config& c) -> uint32_t& { return c.settings<SsnConfig>().refresh_every; },
        "SSN: transactions a worker begins between two recomputations of its garbage-collection low-water "
        "mark (0: at every begin)")};
  }

  Ssn(const Config& config, uint32_t workers)
      : latch_(config.latch),
        isolation_(config.isolation),
        versions_(workers, config.settings<SsnConfig>().refresh_every, config.latch) {}

  Rc begin(auto& t, bool /*restart*/) {
    versions_.begin(t);
    return Rc::Ok;
  }

  Rc read(auto& t, auto& a) {
    RowMeta& m = t.row_meta(a.row);
    platform::Latch::Guard g(m.latch, latch_);
    versions_.collect(t, m);
    return Versions::read_as_of(t, a, m, isolation_ == Isolation::ReadCommitted ? kNewest : t.meta().ts);
  }

  Rc write(auto& t, auto& a) {
    RowMeta& m = t.row_meta(a.row);
    platform::Latch::Guard g(m.latch, latch_);
    versions_.collect(t, m);
    if (Rc rc = prewrite(t, a, m); rc != Rc::Ok) return rc;
    t.snapshot(a);
    return Rc::Ok;
  }

  Rc upgrade(auto& t, auto& a) {
    RowMeta& m = t.row_meta(a.row);
    platform::Latch::Guard g(m.latch, latch_);
    return prewrite(t, a, m);
  }

  // Invisible until commit indexes it, then stamped with the commit
  // timestamp: a transaction that began earlier finds no version of it.
  Rc insert(auto& t, auto& a) {
    stamp_insert(t, a);
    return Rc::Ok;
  }

  // Latches the written and inserted rows (only their writer latches them
  // for longer than one access, and only one transaction at a time holds
  // the commit latch with them: no deadlock), takes the commit timestamp,
  // certifies, and installs.
  Rc commit(auto& t) {
    if (t.accesses().empty()) {
      t.install_all();  // installs nothing: names the commit
      return Rc::Ok;
    }
    const bool certify = isolation_ == Isolation::Serializable;
    if (certify) commit_latch_.lock(latch_, t.meta().node);
    latch_commit_rows(t, latch_);
    const Timestamp commit = t.worker().allocate_ts();
    Timestamp pi = commit;
    if (certify) {
      const Rc rc = certify_and_mark(t, commit, pi);
      if (rc != Rc::Ok) {
        unlatch_commit_rows(t, latch_);
        commit_latch_.unlock(latch_, t.meta().node);
        return rc;
      }
    }
    versions_.install_latched(t, latch_, commit, [&](RowMeta& m) { m.older->sstamp = pi; });
    if (certify) commit_latch_.unlock(latch_, t.meta().node);
    return Rc::Ok;
  }

  void abort(auto& t) { drop_prewrites(t, latch_); }

  // Versions::unlink_removed(): the next row's η (its rts) rises to the
  // removed row's (the committed readers of the gap come before an
  // inserter into it), and the removed row is marked, so that a running
  // reader of it aborts at commit. Under the commit latch, which a committer
  // holds with several row latches, so taking two here cannot deadlock.
  bool reclaim(auto& t, Row* row, auto&& next, auto&& unlink) {
    platform::Latch::Guard c(commit_latch_, latch_);
    return versions_.unlink_removed(t, row, next, unlink, latch_, [](RowMeta& m) { m.unlinked = true; });
  }

  // Versions held in rows' chains plus those free for reuse, for tests.
  uint64_t versions_allocated() const { return versions_.allocated(); }

 private:
  // Newer than any timestamp: read committed's reads see the newest version.
  static constexpr Timestamp kNewest{~uint64_t{0}};

  // Snapshot and serializable: a write registers as the row's pending write
  // unless another is pending (first updater wins) or a version newer than
  // the begin timestamp is committed (first committer wins); read committed
  // lets it overwrite that version. Row latch held.
  Rc prewrite(auto& t, auto& a, RowMeta& m) {
    if (m.pending.load(platform::memory_order_relaxed) != kNoTimestamp) return t.abort_for(AbortCause::LockConflict);
    if (isolation_ != Isolation::ReadCommitted && m.wts > t.meta().ts) return t.abort_for(AbortCause::VersionTooNew);
    m.pending.store(t.meta().ts, platform::memory_order_relaxed);
    a.cc.prewrite = true;
    return Rc::Ok;
  }

  // The safety net's test, then its marks on the versions read (the
  // commit latch and the written rows' latches held): computes η and π
  // (`pi`), aborts if π <= η, and otherwise raises η of each newest version
  // read to `commit`. Between the two passes nothing certified can change:
  // only a committer changes a row's stamps, and only under the commit latch.
  Rc certify_and_mark(auto& t, Timestamp commit, Timestamp& pi) {
    Timestamp eta = kNoTimestamp;
    bool phantom = false;
    for (auto& a : t.accesses()) {
      RowMeta& m = t.row_meta(a.row);
      if (a.cc.prewrite) {
        eta = std::max(eta, m.rts);  // the readers of the version replaced
        continue;
      }
      if (!a.cc.read) continue;
      eta = std::max(eta, a.cc.read_version);  // its writer
      platform::Latch::Guard g(m.latch, latch_);
      phantom |= m.unlinked;
      if (m.wts == a.cc.read_version) continue;  // still the newest: nothing replaced it yet
      const Version* v = m.older;
      while (v != nullptr && v->wts != a.cc.read_version) v = v->older;
      // Not found: collected, which the low-water mark rules out; treated as
      // replaced by a transaction that must precede everything.
      pi = std::min(pi, v != nullptr ? v->sstamp : kNoTimestamp);
    }
    if (phantom) return t.abort_for(AbortCause::Phantom);
    if (pi <= eta) return t.abort_for(AbortCause::Certifier);
    for (auto& a : t.accesses()) {
      if (a.cc.prewrite || !a.cc.read) continue;
      RowMeta& m = t.row_meta(a.row);
      platform::Latch::Guard g(m.latch, latch_);
      if (m.wts == a.cc.read_version) m.rts = std::max(m.rts, commit);
    }
    return Rc::Ok;
  }

  platform::LatchKind latch_;
  Isolation isolation_;
  Versions versions_;
  platform::Latch commit_latch_;  // certifies one commit at a time
};

}  // namespace abyss::cc
