#pragma once
// SILO: epoch-based optimistic concurrency control (Tu et al., "Speedy
// Transactions in Multicore In-Memory Databases", SOSP 2013), as evaluated in
// the Tale of 1000 Cores (Tale §4.1, Table 1). Unlike OCC it takes no
// timestamp from the shared TsSource: no shared counter is touched per
// transaction, only the rows it accesses.
//
// Each row keeps a TID word: the commit epoch in the high bits, a sequence
// number below it and a lock bit at the bottom. A read waits while the row is
// locked, records the TID it saw and copies the row. Commit (Silo §4.4):
//   1. locks the write set in one global order (row address), so committers
//      cannot deadlock, then reads the global epoch, ordered after the locks;
//   2. validates the read set: every row read or written must still carry the
//      TID seen, and must not be locked by another committer;
//   3. picks a TID larger than every TID read or written and than the
//      worker's last one, in the epoch read at step 1, installs the writes
//      while the locks are held and stores the new TID, which unlocks.
// An upgrade needs nothing: the row was copied under its TID and step 2
// re-checks it. Inserts are invisible until the install indexes them; they
// are published locked and unlocked with the commit TID.
//
// The global epoch is advanced every --silo-epoch-ms (default 40, Silo §4.1)
// by worker 0 when it begins a transaction (cc/common/epoch_ticker.h). Epochs give the TIDs their coarse order; abyss
// has no logging, so they serve no recovery here.
//
// Reads write no shared memory: a reader copies the row between two reads of
// its TID word and copies again if a committer installed meanwhile (Silo
// §4.5; cc/common/version_word.h).
#include <algorithm>
#include <cstdint>
#include <string_view>
#include <vector>

#include "cc/common/epoch_ticker.h"
#include "cc/common/version_word.h"
#include "cc/common/wait.h"
#include "cc/common/write_set_locking.h"
#include "cc/traits.h"
#include "common/config.h"
#include "common/knob.h"
#include "common/types.h"
#include "platform/atomic.h"
#include "txn/access.h"

namespace abyss::cc {

// SILO's setting, one knob row (Silo::knobs); a run's is
// Config::settings<SiloConfig>().
struct SiloConfig {
  uint32_t epoch_ms = 40;  // Silo §4.1
};

class Silo final {
 public:
  static constexpr SchemeTraits kTraits{
      .name = "silo",
      .summary = "epoch-based optimistic: per-row TID words, no shared counter per transaction",
      .paper = "Tale §4.1 (Tu et al., SOSP 2013)",
      .family = Family::Optimistic,
      .allocates_timestamps = false,  // TIDs are derived from the rows read and the global epoch
      .uses_latch = false,            // the lock is a bit of the row's TID word
      .waits = true,                  // a read waits while a committer holds the row
      .causes = abort_causes({AbortCause::ReadValidation}),
  };

  // TID word layout (Silo §4.2: epoch | sequence | status bits; abyss keeps
  // only the lock bit, since deletion is the row header's flag and there are
  // no older versions). A TID is derived from the rows accessed and the epoch,
  // not allocated (abyss::Timestamp): it stays raw bits of the word.
  static constexpr uint64_t kLockBit = 1;
  static constexpr uint32_t kSeqShift = 1;
  static constexpr uint32_t kEpochShift = 32;  // 31 sequence bits: 2^31 commits per worker and epoch
  static constexpr uint64_t kSeqStep = uint64_t{1} << kSeqShift;

  static constexpr uint64_t epoch_of(uint64_t tid) { return tid >> kEpochShift; }
  static constexpr uint64_t sequence_of(uint64_t tid) {
    return (tid & ((uint64_t{1} << kEpochShift) - 1)) >> kSeqShift;
  }

  struct RowMeta {
    platform::Atomic<uint64_t> tid{0};  // the loaded data carries TID 0 (epoch 0)
  };
  using Word = VersionWord<&RowMeta::tid, kLockBit>;
  struct AccessMeta {
    uint64_t observed = 0;  // TID of the version copied (lock bit clear)
    bool locked = false;    // this transaction holds the row's lock bit
  };
  struct TxnMeta {
    uint64_t last_tid = 0;              // the worker's last commit TID (Silo's rule (b))
    std::vector<uint32_t> write_order;  // write set indexes, sorted by row address
  };

  static std::vector<Knob> knobs() {
    return {integer<uint32_t>(
        "silo-epoch-ms", "silo_epoch_ms", 1, 10'000,
        +[](Config& c) -> uint32_t& { return c.settings<SiloConfig>().epoch_ms; },
        "SILO: period of the global epoch, milliseconds (Silo §4.1)")};
  }

  Silo(const Config& config, uint32_t /*workers*/) : epochs_(config.settings<SiloConfig>().epoch_ms) {}

  // The current global epoch (for tests and reports).
  uint64_t epoch() const { return epochs_.epoch(); }

  Rc begin(auto& t, bool /*restart*/) {
    epochs_.tick(t.worker().id);
    return Rc::Ok;
  }

  // Silo §4.5: a locked row is waited for.
  Rc read(auto& t, auto& a) {
    Word::copy(t, a, [&](uint64_t tid) { a.cc.observed = tid; });
    return Rc::Ok;
  }
  // Every write starts from a copy of the row, so it is also a read that
  // commit validates.
  Rc write(auto& t, auto& a) { return read(t, a); }
  // The copy taken by the read is what the write modifies; commit locks the
  // row and re-checks the TID it was copied under.
  Rc upgrade(auto& /*t*/, auto& /*a*/) { return Rc::Ok; }
  // Invisible to others until install_all() indexes it; its RowMeta is fresh.
  Rc insert(auto& /*t*/, auto& /*a*/) { return Rc::Ok; }

  Rc commit(auto& t) {
    // Phase 1 (Silo §4.4): lock the write set: updates and removals, found or
    // not (install_all() writes both). Inserts are private until installed.
    auto& order = t.meta().write_order;
    lock_write_set<LockInserts::No>(t, order, [&](RowMeta& m) {
      lock(t, m);
      return true;
    });
    // Silo §4.4 puts a fence here: the epoch read and the validation reads
    // must come after the lock bits are visible, so that of two committers
    // that each lock a row the other read, at least one sees the other's
    // lock. The lock CASes and these loads are sequentially consistent, which
    // gives that order (on x86 the locked CAS is the fence and the loads stay
    // plain moves) and, unlike a standalone fence, is understood by TSan.
    const uint64_t epoch = epochs_.epoch(platform::memory_order_seq_cst);

    // Phase 2: validate every row read or written (a write read the row first).
    uint64_t max_seen = t.meta().last_tid;
    for (auto& a : t.accesses()) {
      if (a.type == AccessType::Insert) continue;
      const uint64_t now = t.row_meta(a.row).tid.load(platform::memory_order_seq_cst);
      if ((now & ~kLockBit) != a.cc.observed) return t.abort_for(AbortCause::ReadValidation);  // changed since copied
      // Being changed by another committer.
      if ((now & kLockBit) != 0 && !a.cc.locked) return t.abort_for(AbortCause::ReadValidation);
      max_seen = std::max(max_seen, a.cc.observed);
    }

    // Phase 3: the commit TID satisfies Silo's rules (a) larger than every
    // TID read or written, (b) larger than the worker's last TID, (c) in the
    // current epoch. A row's TID cannot come from a later epoch than the one
    // read above (its writer read that epoch before we read the row), so the
    // max only guards the sequence from ever going backwards.
    const uint64_t tid = std::max(max_seen + kSeqStep, epoch << kEpochShift);
    Word::prepare_install(t);
    install_and_publish(t, [&](RowMeta& m) { m.tid.store(tid, platform::memory_order_release); });
    t.meta().last_tid = tid;
    return Rc::Ok;
  }

  // Releases the locks a failed commit took.
  void abort(auto& t) {
    unlock_write_set(t, [](RowMeta& m) { Word::unlock(m); });
  }

 private:
  // Takes the row's lock bit, waiting for another committer to finish.
  // Committers lock in address order and readers hold nothing while they
  // wait, so this cannot deadlock.
  static void lock(auto& t, RowMeta& m) {
    retry_until_done(t.worker(), [&] {
      uint64_t v = m.tid.load(platform::memory_order_relaxed);
      if ((v & kLockBit) != 0) return Attempt::Retry;
      if (m.tid.compare_exchange_weak(v, v | kLockBit, platform::memory_order_seq_cst,
                                      platform::memory_order_relaxed)) {
        return Attempt::Done;
      }
      // Lost to another committer: wait while it holds the row, else (it
      // has installed already, or the CAS failed spuriously) try at once.
      return (v & kLockBit) != 0 ? Attempt::Retry : Attempt::Again;
    });
  }

  EpochTicker epochs_;
};

}  // namespace abyss::cc
