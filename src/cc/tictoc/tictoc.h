#pragma once
// TICTOC: time traveling optimistic concurrency control (Yu, Pavlo, Sanchez,
// Devadas, "TicToc: Time Traveling Optimistic Concurrency Control", SIGMOD
// 2016), as evaluated in the Tale of 1000 Cores (Tale §4.1, Table 1).
//
// No transaction takes a timestamp from a shared source: timestamps live in
// the rows, and each transaction computes its commit timestamp from the rows
// it touched (TicToc §3.1, "data-driven timestamp management"). A row's
// version is valid over [wts, rts]: wts is the commit timestamp of its writer,
// rts the largest commit timestamp at which a reader relied on it.
//
//   Read phase (TicToc Algorithm 1): copy the row together with a consistent
//   (wts, rts) pair; a row locked by a committer is waited for.
//   Validation phase (Algorithm 2):
//     1. lock the write set in one global order (row address), no-wait: a row
//        locked by another committer aborts at once;
//     2. commit_ts = max(max over writes of current rts + 1,
//                        max over reads of the wts read);
//     3. for each read whose recorded rts < commit_ts: abort if the row's wts
//        changed, or if it is locked by another committer and its rts is still
//        below commit_ts (that committer may install before commit_ts);
//        otherwise extend the row's rts to commit_ts with a CAS.
//   Write phase (Algorithm 3): install while the write set is locked, then
//   store wts = rts = commit_ts, which unlocks.
// A read-only transaction whose reads overlap in time commits even if rows it
// read were overwritten meanwhile: it serialises before their writers, where
// OCC would abort it.
//
// The row's timestamp word (TicToc §3.6) packs the lock bit, delta = rts - wts
// (15 bits) and wts (48 bits), so one CAS reads or extends both timestamps and
// observes the lock. When an rts extension makes delta overflow, wts is moved
// up by the overflowing high part of delta (Algorithm 5): rts is kept exactly,
// the version's interval loses its oldest part, and a reader that recorded
// the old wts then aborts if it needs to validate (conservative, never wrong).
//
// Optimisations of TicToc §4:
//   - §4.1 no-wait locking in the validation phase: yes. The global lock
//     order is kept although no-wait cannot deadlock: two committers that
//     share rows then meet at the same first row, and only one of them aborts.
//   - §4.2 preemptive aborts: no. Validation always takes the write locks
//     first and decides with the exact commit timestamp.
//   - §4.3 timestamp history: no. A read whose row's wts changed aborts even
//     where an older version's interval would have covered commit_ts.
//   - §4.4 lower isolation levels: no; every run is serializable.
//
// Reads write no shared memory: a reader copies the row between two reads of
// its word and copies again if the wts changed or the row was locked
// meanwhile (Algorithm 4; cc/common/version_word.h, shared with `silo`).
//
// Inserts are invisible until the install indexes them; they are published
// locked and unlocked with wts = rts = commit_ts, so no reader can see an
// insert with a timestamp older than its writer's.
#include <algorithm>
#include <cstdint>
#include <string_view>
#include <vector>

#include "cc/common/version_word.h"
#include "cc/common/write_set_locking.h"
#include "cc/traits.h"
#include "common/config.h"
#include "common/types.h"
#include "platform/atomic.h"
#include "txn/access.h"

namespace abyss::cc {

class Tictoc final {
 public:
  static constexpr SchemeTraits kTraits{
      .name = "tictoc",
      .summary = "optimistic with data-driven timestamps: each row keeps a [wts, rts] interval",
      .paper = "Tale §4.1 (Yu et al., SIGMOD 2016)",
      .family = Family::Optimistic,
      .allocates_timestamps = false,  // commit timestamps are computed from the rows accessed
      .uses_latch = false,            // the lock is a bit of the row's timestamp word
      .waits = true,                  // a read waits while a committer holds the row
      .causes = abort_causes({AbortCause::ReadValidation, AbortCause::WriteValidation}),
  };

  // Timestamp word layout (TicToc §3.6): [lock:1][delta:15][wts:48]. A row's
  // wts grows by at least one per install, so 48 bits outlast any run. These
  // are logical timestamps computed from the data, packed into one word, not
  // allocated ones (abyss::Timestamp): they stay raw bits of the word.
  static constexpr uint32_t kWtsBits = 48;
  static constexpr uint32_t kDeltaBits = 15;
  static constexpr uint64_t kWtsMask = (uint64_t{1} << kWtsBits) - 1;
  static constexpr uint64_t kDeltaMax = (uint64_t{1} << kDeltaBits) - 1;
  static constexpr uint64_t kLockBit = uint64_t{1} << (kWtsBits + kDeltaBits);

  static constexpr uint64_t wts_of(uint64_t word) { return word & kWtsMask; }
  static constexpr uint64_t delta_of(uint64_t word) { return (word >> kWtsBits) & kDeltaMax; }
  static constexpr uint64_t rts_of(uint64_t word) { return wts_of(word) + delta_of(word); }
  static constexpr bool is_locked(uint64_t word) { return (word & kLockBit) != 0; }

  // An unlocked word for the interval [wts, rts] (rts >= wts). A delta that
  // does not fit in 15 bits moves wts up by its high part (TicToc Algorithm 5):
  // rts is exact, wts may grow.
  static constexpr uint64_t pack(uint64_t wts, uint64_t rts) {
    uint64_t delta = rts - wts;
    if (delta > kDeltaMax) {
      const uint64_t shift = delta - (delta & kDeltaMax);
      wts += shift;
      delta -= shift;
    }
    return (wts & kWtsMask) | (delta << kWtsBits);
  }

  struct RowMeta {
    platform::Atomic<uint64_t> word{0};  // the load's version: wts = rts = 0, unlocked
  };
  // Every install raises wts; an rts extension changes only the delta.
  using Word = VersionWord<&RowMeta::word, kLockBit, kWtsMask>;
  struct AccessMeta {
    uint64_t wts = 0;     // the copied version's wts
    uint64_t rts = 0;     // its rts when copied
    bool locked = false;  // this transaction holds the row's lock bit
  };
  struct TxnMeta {
    uint64_t commit_ts = 0;             // the last commit timestamp computed (for tests and reports)
    std::vector<uint32_t> write_order;  // write set indexes, sorted by row address
  };

  Tictoc(const Config& /*config*/, uint32_t /*workers*/) {}

  // Nothing to take: no timestamp is allocated at begin (TicToc §3.1).
  Rc begin(auto& /*t*/, bool /*restart*/) { return Rc::Ok; }

  // TicToc Algorithm 1: copies the row with the (wts, rts) of the version
  // copied; a locked row is waited for. rts extensions change the word but
  // not the data, so they need no exclusion.
  Rc read(auto& t, auto& a) {
    Word::copy(t, a, [&](uint64_t word) {
      a.cc.wts = wts_of(word);
      a.cc.rts = rts_of(word);
    });
    return Rc::Ok;
  }
  // Every write starts from a copy of the row, so it is also a read: commit
  // checks that the version copied is still the row's.
  Rc write(auto& t, auto& a) { return read(t, a); }
  // The copy taken by the read is what the write modifies; commit locks the
  // row and re-checks the wts it was copied under.
  Rc upgrade(auto& /*t*/, auto& /*a*/) { return Rc::Ok; }
  // Invisible to others until install_all() indexes it; its RowMeta is fresh.
  Rc insert(auto& /*t*/, auto& /*a*/) { return Rc::Ok; }

  Rc commit(auto& t) {
    // Step 1 (TicToc Algorithm 2, §4.1): lock the write set, no-wait: updates
    // and removals, found or not (install_all() writes both). Inserts are
    // private until installed.
    auto& order = t.meta().write_order;
    uint64_t commit_ts = 0;
    const bool locked = lock_write_set<LockInserts::No>(t, order, [&](RowMeta& m) {
      uint64_t word = 0;
      if (!try_lock(m, word)) return false;
      // Step 2, writes: later than every reader of the version replaced. The
      // rts is frozen while we hold the lock (extensions CAS an unlocked word).
      commit_ts = std::max(commit_ts, rts_of(word) + 1);
      return true;
    });
    if (!locked) return t.abort_for(AbortCause::WriteValidation);  // abort() releases what was taken
    // Step 2, reads: no earlier than any version read (written rows were
    // copied too, but their wts <= rts < commit_ts already).
    for (auto& a : t.accesses()) {
      if (a.type == AccessType::Read) commit_ts = std::max(commit_ts, a.cc.wts);
    }

    // Step 3: validate every row read or written.
    for (auto& a : t.accesses()) {
      if (a.type == AccessType::Insert) continue;
      if (!validate(t.row_meta(a.row), a.cc, commit_ts)) return t.abort_for(AbortCause::ReadValidation);
    }
    t.meta().commit_ts = commit_ts;

    // Write phase (Algorithm 3): storing wts = rts = commit_ts publishes the
    // data and clears the lock bit.
    Word::prepare_install(t);
    const uint64_t installed = pack(commit_ts, commit_ts);
    install_and_publish(t, [&](RowMeta& m) { m.word.store(installed, platform::memory_order_release); });
    return Rc::Ok;
  }

  // Releases the locks a failed commit took.
  void abort(auto& t) {
    unlock_write_set(t, [](RowMeta& m) { Word::unlock(m); });
  }

 private:
  // Sets the row's lock bit and answers the word it replaced, or answers
  // false at once if another committer holds it (no-wait, TicToc §4.1). A
  // CAS that lost a race with an rts extension retries; only the lock bit
  // makes it give up. Sequentially consistent, as validation's loads are: of
  // two committers that each lock a row the other read, one sees the other's
  // lock.
  static bool try_lock(RowMeta& m, uint64_t& word) {
    word = m.word.load(platform::memory_order_relaxed);
    while (!is_locked(word)) {
      if (m.word.compare_exchange_weak(word, word | kLockBit, platform::memory_order_seq_cst,
                                       platform::memory_order_relaxed)) {
        return true;
      }
    }
    return false;
  }

  // TicToc Algorithm 2, step 3 (with Algorithm 5's packed word): may the
  // version this access copied be read at commit_ts?
  static bool validate(RowMeta& m, AccessMeta& c, uint64_t commit_ts) {
    if (c.locked) {
      // Ours: rts is frozen and below commit_ts, so only the version matters.
      return wts_of(m.word.load(platform::memory_order_relaxed)) == c.wts;
    }
    if (c.rts >= commit_ts) return true;  // the version read is valid at commit_ts already
    // Sequentially consistent, like the lock CASes: a committer that locks
    // this row after our extension also sees the lock bits we hold, and the
    // loads cost nothing extra on x86.
    uint64_t v = m.word.load(platform::memory_order_seq_cst);
    for (;;) {
      if (wts_of(v) != c.wts) return false;     // overwritten (or wts shifted) since copied
      if (rts_of(v) >= commit_ts) return true;  // another reader extended it far enough
      // A committer holds it with rts < commit_ts: it may install a version
      // at rts + 1 <= commit_ts, so ours may not extend past it.
      if (is_locked(v)) return false;
      if (m.word.compare_exchange_weak(v, pack(wts_of(v), commit_ts), platform::memory_order_seq_cst,
                                       platform::memory_order_seq_cst)) {
        return true;
      }
    }
  }
};

}  // namespace abyss::cc
