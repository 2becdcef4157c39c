#pragma once
// HEKATON: multi-version optimistic concurrency control (Larson et al.,
// "High-Performance Concurrency Control Mechanisms for Main-Memory
// Databases", PVLDB 5(4), 2011, §3), the scheme DBx1000 ships as HEKATON.
//
// A transaction reads as of its begin timestamp and commits as of a second
// one, its commit timestamp; it commits if nothing it read changed between
// the two (Larson §3.2, serializable validation).
//   - A read takes the newest version committed at or before the begin
//     timestamp (versions kept as MVCC keeps them, cc/common/versions.h).
//     If the row has a pending write whose writer is committing under a
//     commit timestamp below this begin timestamp, the read must see that
//     write: it waits until the writer has installed it or aborted (Larson's
//     commit dependency, taken here as a wait). A writer still running, or
//     committing under a later timestamp, is not waited for.
//   - A write may only replace the newest version, and only if that version
//     is visible to the writer: it aborts if another write of the row is
//     pending (first updater wins: lock_conflict) or the newest version is
//     newer than the begin timestamp (version_too_new). Otherwise it marks
//     the row pending and writes a private copy.
//   - A transaction that changed no row commits as of its begin timestamp:
//     what it read is every commit below that and nothing else.
//   - Commit announces that the transaction is committing, takes the commit
//     timestamp, and checks every row it read: the newest version committed
//     before the commit timestamp must still be the one it read
//     (read_validation). A pending write there by a transaction committing
//     under a smaller timestamp is waited for; one by a transaction still
//     running, or committing later, is not (it will commit after this one).
//     Then it latches its written and inserted rows, keeps the versions they
//     replace, installs, stamps the rows with the commit timestamp, clears
//     their pending marks and unlatches.
// Only a transaction that holds a smaller commit timestamp than the waiter's
// begin or commit timestamp is waited for, and it waits for nothing but
// transactions with smaller commit timestamps still, so waits never form a
// cycle. Deciding who commits first by the timestamps needs timestamps that
// grow with time across workers (SchemeTraits::commit_timestamps).
//
// Where this departs from DBx1000's HEKATON: there a read whose overwriter is
// committing passes validation without waiting for its outcome, which
// admits non-serializable histories, and a row keeps a bounded ring of
// versions (a read older than all of them aborts); here the read waits, and
// the versions stay until no transaction can read them.
#include <cstdint>
#include <string_view>
#include <vector>

#include "cc/common/atomic_timestamp.h"
#include "cc/common/to_row.h"
#include "cc/common/versions.h"
#include "cc/common/wait.h"
#include "cc/traits.h"
#include "common/config.h"
#include "common/knob.h"
#include "common/types.h"
#include "platform/atomic.h"
#include "platform/latch.h"
#include "storage/row.h"
#include "txn/access.h"

namespace abyss::cc {

// HEKATON's setting (Hekaton::knobs); a run's is
// Config::settings<HekatonConfig>().
struct HekatonConfig {
  uint32_t refresh_every = 32;  // begins between low-water-mark recomputations
};

class Hekaton final {
 public:
  static constexpr SchemeTraits kTraits{
      .name = "hekaton",
      .summary = "multi-version optimistic: reads as of the begin timestamp, validated at a commit timestamp",
      .paper = "Larson et al., PVLDB 5(4) 2011, §3 (DBx1000's HEKATON)",
      .family = Family::MultiVersionOptimistic,
      .allocates_timestamps = true,  // a begin and a commit timestamp per attempt
      .commit_timestamps = true,     // commits are ordered by their timestamps
      .uses_latch = true,            // a row's versions and pending write sit behind a latch
      .waits = true,                 // a read or a validation waits for a writer committing earlier
      .keeps_versions = true,        // older versions stay readable until no transaction can see them
      .causes = abort_causes(
          {AbortCause::LockConflict, AbortCause::VersionTooNew, AbortCause::ReadValidation, AbortCause::Phantom}),
  };

  struct RowMeta : VersionedRowMeta {
    // With `pending`: the worker whose transaction wrote it. Written under the
    // latch, and read without it by a transaction looking whether to wait.
    platform::Atomic<uint32_t> pending_worker{0};
    bool unlinked = false;  // a removed row taken out of its indexes (reclaim())
  };
  // A version read is validated at commit.
  using AccessMeta = VersionedAccessMeta;
  struct TxnMeta : ToTxnMeta {  // ts: the begin timestamp
    Timestamp commit = kNoTimestamp;
  };

  static std::vector<Knob> knobs() {
    return {integer<uint32_t>(
        "hekaton-refresh-every", "hekaton_refresh_every", 0, 1'000'000,
        +[](Config& c) -> uint32_t& { return c.settings<HekatonConfig>().refresh_every; },
        "HEKATON: transactions a worker begins between two recomputations of its garbage-collection low-water "
        "mark (0: at every begin)")};
  }

  Hekaton(const Config& config, uint32_t workers)
      : latch_(config.latch),
        versions_(workers, config.settings<HekatonConfig>().refresh_every, config.latch),
        slots_(workers) {}

  // The fence orders the begin timestamp before every later look at another
  // worker's state: a writer seen running takes its commit timestamp later
  // (commit()).
  Rc begin(auto& t, bool /*restart*/) {
    Slot& s = slots_[t.worker().id.value];
    s.commit.store(kNoTimestamp, platform::memory_order_relaxed);
    s.committing.store(false, platform::memory_order_release);
    const Timestamp ts = t.worker().allocate_ts();
    platform::fence();
    t.meta().ts = ts;
    t.meta().commit = kNoTimestamp;
    versions_.begin(t.worker().id.value, ts);
    return Rc::Ok;
  }

  Rc read(auto& t, auto& a) {
    RowMeta& m = t.row_meta(a.row);
    Rc rc = Rc::Ok;
    retry_until_done(t.worker(), [&] {
      if (before(t, m, t.meta().ts) != Order::After) return Attempt::Retry;
      platform::Latch::Guard g(m.latch, latch_);
      if (before(t, m, t.meta().ts) != Order::After) return Attempt::Retry;
      versions_.collect(t, m);
      rc = Versions::read_as_of(t, a, m, t.meta().ts);
      return Attempt::Done;
    });
    return rc;
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

  // A transaction that changed no row read one consistent state, that of
  // every commit below its begin timestamp (a read waits for any writer
  // committing below it): it is serialized there, and commits without a
  // commit timestamp or validation.
  Rc commit(auto& t) {
    if (t.changes() == 0) {
      t.install_all();  // installs nothing: names the commit
      return Rc::Ok;
    }
    Slot& s = slots_[t.worker().id.value];
    s.committing.store(true, platform::memory_order_seq_cst);
    platform::fence();
    const Timestamp ts = t.worker().allocate_ts();
    s.commit.store(ts, platform::memory_order_seq_cst);
    platform::fence();
    t.meta().commit = ts;
    for (auto& a : t.accesses()) {
      if (!a.cc.read || a.cc.prewrite) continue;  // a row it holds pending cannot change
      if (!still_newest(t, a)) return t.abort_for(AbortCause::ReadValidation);
    }
    latch_commit_rows(t, latch_);
    versions_.install_latched(t, latch_, ts);
    return Rc::Ok;
  }

  void abort(auto& t) { drop_prewrites(t, latch_); }

  // A removed row keeps its index entries (older transactions read its
  // versions through them) until every running transaction began after the
  // removal (its version is below the low-water mark) and no write of it is
  // pending; then `unlink()` takes them out. A transaction that read the
  // removed row as the end of a range (its next key) may still be running,
  // and an insert into the joined gap now writes the row after it instead:
  // the row is marked unlinked, and a validation of a read of it fails.
  bool reclaim(auto& t, Row* row, auto&& /*next*/, auto&& unlink) {
    RowMeta& m = t.row_meta(row);
    const Timestamp low = versions_.low_water(t.worker().id.value);
    platform::Latch::Guard g(m.latch, latch_);
    if (m.pending.load(platform::memory_order_relaxed) != kNoTimestamp || m.wts >= low) return false;
    m.unlinked = true;
    unlink();
    return true;
  }

  // Versions held in rows' chains plus those free for reuse, for tests.
  uint64_t versions_allocated() const { return versions_.allocated(); }

 private:
  // Per worker: whether its transaction is committing, and its commit
  // timestamp once taken (kNoTimestamp before).
  struct alignas(platform::kCacheLine) Slot {
    platform::Atomic<bool> committing{false};
    AtomicTimestamp commit;
  };

  // Where the row's pending write, if any, falls beside timestamp `ts`:
  // After (no pending write, or its writer runs or commits after `ts`: it
  // will commit after), Before (its writer commits before `ts`: what it
  // installs counts), or Unknown (its writer is taking its commit timestamp).
  // Exact under the row latch. A waiter looks without it first, and takes
  // it only once the wait looks over (as T/O's waits do, cc/common/to_row.h):
  // a waiter that took the latch at every look would write its line each
  // time, and could keep the writer it waits for from taking the latch to
  // install.
  enum class Order : uint8_t { After, Before, Unknown };
  Order before(auto& t, RowMeta& m, Timestamp ts) {
    if (m.pending.load(platform::memory_order_acquire) == kNoTimestamp) return Order::After;
    const uint32_t writer = m.pending_worker.load(platform::memory_order_acquire);
    if (writer == t.worker().id.value) return Order::After;  // this transaction's own
    const Slot& w = slots_[writer];
    if (!w.committing.load(platform::memory_order_seq_cst)) return Order::After;
    const Timestamp c = w.commit.load(platform::memory_order_seq_cst);
    if (c == kNoTimestamp) return Order::Unknown;
    return c < ts ? Order::Before : Order::After;
  }

  // The write registers as the row's pending write. Row latch held.
  Rc prewrite(auto& t, auto& a, RowMeta& m) {
    if (m.pending.load(platform::memory_order_relaxed) != kNoTimestamp) return t.abort_for(AbortCause::LockConflict);
    if (m.wts > t.meta().ts) return t.abort_for(AbortCause::VersionTooNew);
    m.pending_worker.store(t.worker().id.value, platform::memory_order_relaxed);
    m.pending.store(t.meta().ts, platform::memory_order_release);
    a.cc.prewrite = true;
    return Rc::Ok;
  }

  // Whether the version the access read is still the newest committed
  // before the commit timestamp, once a writer committing before it has
  // installed or aborted.
  bool still_newest(auto& t, auto& a) {
    RowMeta& m = t.row_meta(a.row);
    bool valid = false;
    retry_until_done(t.worker(), [&] {
      if (before(t, m, t.meta().commit) != Order::After) return Attempt::Retry;
      platform::Latch::Guard g(m.latch, latch_);
      if (before(t, m, t.meta().commit) != Order::After) return Attempt::Retry;
      bool in_row = false;
      const Version* v = Versions::as_of(m, t.meta().commit, in_row);
      const Timestamp newest = in_row ? m.wts : v != nullptr ? v->wts : Timestamp{};
      valid = !m.unlinked && (in_row || v != nullptr) && newest == a.cc.read_version;
      return Attempt::Done;
    });
    return valid;
  }

  platform::LatchKind latch_;
  Versions versions_;
  std::vector<Slot> slots_;
};

}  // namespace abyss::cc
