#pragma once
// MOCC: optimistic concurrency control with locks on hot records (Wang and
// Kimura, "Mostly-Optimistic Concurrency Control for Highly Contended Dynamic
// Workloads on a Thousand Cores", VLDB 2016). It is SILO (cc/silo/silo.h)
// where a record known to be contended is locked before it is read, so that
// a transaction that reads it does not abort at validation over and over.
//
//   - Temperature. Each row counts the validation failures it caused in the
//     current epoch, as an approximate counter: a failure raises a
//     temperature of k to k + 1 with probability 2^-k, up to --mocc-temp-max,
//     so the count costs a write only now and then. A row whose temperature
//     reaches --mocc-temp-threshold is hot until the epoch (--mocc-epoch-ms,
//     advanced as SILO's) ends, when every temperature starts again at 0.
//   - Locks. Each row has a reader-writer lock beside SILO's TID word. A
//     read of a hot row takes it shared, a write exclusive, before the row
//     is copied. The locks a transaction holds are kept in address order
//     (canonical mode): a lock above every one held is waited for, which
//     cannot deadlock. One below a held lock would break the order; with at
//     most --mocc-restore-max locks above it, those are released, the lock
//     is taken and they are taken again in order (what they guarded may
//     change meanwhile, and validation then aborts); with more, it is only
//     tried, and a refusal aborts (lock_conflict).
//   - Retrospective lock list. An attempt that aborts remembers the rows it
//     locked or failed on, with the mode it needed; the transaction's next
//     attempt locks them when it reaches them, hot or not.
//   - Commit is SILO's: the write set is locked exclusive in address order
//     (through the same canonical locks) and then its TID words, the read
//     set validated by TID, the writes installed under a TID above every one
//     seen, and every lock released. A row read under a shared lock, and not
//     released since to restore the order, passes validation.
//
// A read of a cold row is SILO's optimistic copy and ignores the locks:
// validation decides what commits, so every schedule MOCC commits is one
// SILO would. The locks only make a hot row's readers and writers take turns
// instead of aborting each other.
//
// Departures: MOCC keeps a temperature per page and queue-based (MCS) locks;
// abyss keeps one per row and spins on a counter. Its retrospective list
// takes every remembered lock that precedes the record being accessed; abyss
// takes each when the transaction reaches its row.
#include <algorithm>
#include <cstdint>
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

// MOCC's settings (Mocc::knobs); a run's are Config::settings<MoccConfig>().
struct MoccConfig {
  uint32_t temp_threshold = 10;  // the temperature at which a row is locked before it is read
  uint32_t temp_max = 20;        // the highest temperature a row reaches
  uint32_t epoch_ms = 40;        // period of the epoch: of the TIDs', and of the temperatures'
  uint32_t restore_max = 100;    // locks released to take one out of address order
};

class Mocc final {
 public:
  static constexpr SchemeTraits kTraits{
      .name = "mocc",
      .summary = "optimistic with locks on hot rows: per-row temperatures, address-ordered reader-writer locks",
      .paper = "Wang & Kimura, VLDB 2016 (MOCC)",
      .family = Family::Optimistic,
      .allocates_timestamps = false,  // TIDs are SILO's, derived from the rows read and the epoch
      .uses_latch = false,            // the locks are words of the row
      .waits = true,                  // for a hot row's lock; a read, while a committer installs the row
      .causes = abort_causes({AbortCause::ReadValidation, AbortCause::LockConflict}),
  };

  // SILO's TID word (cc/silo/silo.h): epoch | sequence | lock bit.
  static constexpr uint64_t kLockBit = 1;
  static constexpr uint32_t kSeqShift = 1;
  static constexpr uint32_t kEpochShift = 32;
  static constexpr uint64_t kSeqStep = uint64_t{1} << kSeqShift;

  // The reader-writer lock: the number of readers, or kExclusive.
  static constexpr int32_t kExclusive = -1;
  // The temperature word: the temperature in the low bits, above them the
  // (low bits of the) epoch it counts in.
  static constexpr uint32_t kTempBits = 8;
  static constexpr uint32_t kMaxTemperature = 63;

  enum class Mode : uint8_t { Shared, Exclusive };

  struct RowMeta {
    platform::Atomic<uint64_t> tid{0};   // the loaded data carries TID 0
    platform::Atomic<int32_t> lock{0};   // readers holding it, or kExclusive
    platform::Atomic<uint32_t> temp{0};  // epoch << kTempBits | temperature
  };
  using Word = VersionWord<&RowMeta::tid, kLockBit>;
  struct AccessMeta {
    uint64_t observed = 0;  // TID of the version copied (lock bit clear)
    bool locked = false;    // this transaction holds the row's TID lock bit
    bool failed = false;    // the row failed validation, or its lock was refused
  };
  struct Held {
    RowMeta* row;
    Mode mode;
  };
  struct Remembered {
    const Table* table;
    uint64_t key;
    Mode mode;
  };
  struct TxnMeta {
    uint64_t last_tid = 0;               // the worker's last commit TID (SILO's rule (b))
    std::vector<uint32_t> write_order;   // write set indexes, sorted by row address
    std::vector<Held> held;              // the row locks held, in address order
    std::vector<Held> retaking;          // locks released to restore the order, to take again
    std::vector<Remembered> retrospect;  // the retrospective lock list of this attempt
    const RowMeta* refused = nullptr;    // a row whose lock a commit was refused
  };

  static std::vector<Knob> knobs() {
    return {
        integer<uint32_t>(
            "mocc-temp-threshold", "mocc_temp_threshold", 0, kMaxTemperature,
            +[](Config& c) -> uint32_t& { return c.settings<MoccConfig>().temp_threshold; },
            "MOCC: temperature at which a row is locked before it is read (0: every row; above "
            "--mocc-temp-max: none)"),
        integer<uint32_t>(
            "mocc-temp-max", "mocc_temp_max", 1, kMaxTemperature,
            +[](Config& c) -> uint32_t& { return c.settings<MoccConfig>().temp_max; },
            "MOCC: the highest temperature a row reaches"),
        integer<uint32_t>(
            "mocc-epoch-ms", "mocc_epoch_ms", 1, 10'000,
            +[](Config& c) -> uint32_t& { return c.settings<MoccConfig>().epoch_ms; },
            "MOCC: period of the epoch, milliseconds; temperatures start again at 0 each epoch"),
        integer<uint32_t>(
            "mocc-restore-max", "mocc_restore_max", 0, 4096,
            +[](Config& c) -> uint32_t& { return c.settings<MoccConfig>().restore_max; },
            "MOCC: a lock below held ones releases and retakes at most this many; with more it is only tried"),
    };
  }

  Mocc(const Config& config, uint32_t /*workers*/)
      : settings_(config.settings<MoccConfig>()), epochs_(settings_.epoch_ms) {}

  // The row's temperature in the current epoch, and whether it is hot (for
  // tests and reports).
  uint32_t temperature(const RowMeta& m) const {
    const uint32_t w = m.temp.load(platform::memory_order_relaxed);
    return (w >> kTempBits) == epoch_tag() ? w & ((1U << kTempBits) - 1) : 0;
  }
  bool hot(const RowMeta& m) const { return temperature(m) >= settings_.temp_threshold; }

  Rc begin(auto& t, bool restart) {
    epochs_.tick(t.worker().id);
    if (!restart) t.meta().retrospect.clear();
    t.meta().refused = nullptr;
    return Rc::Ok;
  }

  Rc read(auto& t, auto& a) { return access(t, a, Mode::Shared); }
  // Every write starts from a copy of the row, which commit validates.
  Rc write(auto& t, auto& a) { return access(t, a, Mode::Exclusive); }
  // A hot row read under a shared lock is written under an exclusive one.
  Rc upgrade(auto& t, auto& a) {
    Mode mode = Mode::Exclusive;
    if (!locks(t, a, mode)) return Rc::Ok;
    if (!lock(t, t.row_meta(a.row), Mode::Exclusive)) {
      a.cc.failed = true;
      return t.abort_for(AbortCause::LockConflict);
    }
    return Rc::Ok;
  }
  // Invisible to others until install_all() indexes it; its RowMeta is fresh.
  Rc insert(auto& /*t*/, auto& /*a*/) { return Rc::Ok; }

  Rc commit(auto& t) {
    // SILO's phase 1: the write set locked exclusive, in address order, and
    // only then its TID words: a reader waits for a TID word while it may
    // hold a lock the committer waits for. No one else changes a TID word
    // held exclusive; the stores are sequentially consistent, so that the
    // validation loads below come after them.
    auto& meta = t.meta();
    const bool all = lock_write_set<LockInserts::No>(t, meta.write_order, [&](RowMeta& m) {
      if (lock(t, m, Mode::Exclusive)) return true;
      meta.refused = &m;
      return false;
    });
    if (!all) return t.abort_for(AbortCause::LockConflict);
    for (uint32_t i : meta.write_order) {
      auto& tid = t.row_meta(t.accesses()[i].row).tid;
      tid.store(tid.load(platform::memory_order_relaxed) | kLockBit, platform::memory_order_seq_cst);
    }
    const uint64_t epoch = epochs_.epoch(platform::memory_order_seq_cst);

    // Phase 2: every row read or written must carry the TID it was copied
    // under and not be held by another committer. Each row that fails is
    // heated, so that enough failures make it hot.
    uint64_t max_seen = meta.last_tid;
    bool valid = true;
    for (auto& a : t.accesses()) {
      if (a.type == AccessType::Insert) continue;
      RowMeta& m = t.row_meta(a.row);
      const uint64_t now = m.tid.load(platform::memory_order_seq_cst);
      if ((now & ~kLockBit) != a.cc.observed || ((now & kLockBit) != 0 && !a.cc.locked)) {
        a.cc.failed = true;
        heat(t, m);
        valid = false;
      }
      max_seen = std::max(max_seen, a.cc.observed);
    }
    if (!valid) return t.abort_for(AbortCause::ReadValidation);

    // Phase 3: SILO's TID, the install, and every lock released.
    const uint64_t tid = std::max(max_seen + kSeqStep, epoch << kEpochShift);
    Word::prepare_install(t);
    install_and_publish(t, [&](RowMeta& m) { m.tid.store(tid, platform::memory_order_release); });
    meta.last_tid = tid;
    release_all(meta);
    return Rc::Ok;
  }

  // Releases what the attempt holds and remembers, for the next one, each
  // row it locked or failed on, in the mode its access needs.
  void abort(auto& t) {
    unlock_write_set(t, [](RowMeta& m) { Word::unlock(m); });
    auto& meta = t.meta();
    meta.retrospect.clear();
    for (auto& a : t.accesses()) {
      if (a.type == AccessType::Insert) continue;
      const RowMeta* m = &t.row_meta(a.row);
      if (a.cc.failed || m == meta.refused || holds(meta.held, m)) {
        meta.retrospect.push_back({a.table, a.key, a.type == AccessType::Read ? Mode::Shared : Mode::Exclusive});
      }
    }
    release_all(meta);
  }

 private:
  uint32_t epoch_tag() const {
    return static_cast<uint32_t>(epochs_.epoch(platform::memory_order_relaxed)) & ((1U << (32 - kTempBits)) - 1);
  }

  // Whether the access locks its row before copying it (the row is hot, or
  // the retrospective list names it), and in which mode.
  bool locks(auto& t, auto& a, Mode& mode) const {
    if (hot(t.row_meta(a.row))) return true;
    for (const Remembered& r : t.meta().retrospect) {
      if (r.table == a.table && r.key == a.key) {
        mode = std::max(mode, r.mode);
        return true;
      }
    }
    return false;
  }

  Rc access(auto& t, auto& a, Mode mode) {
    if (locks(t, a, mode) && !lock(t, t.row_meta(a.row), mode)) {
      a.cc.failed = true;
      return t.abort_for(AbortCause::LockConflict);
    }
    Word::copy(t, a, [&](uint64_t tid) { a.cc.observed = tid; });
    return Rc::Ok;
  }

  // The approximate counter: a temperature of k rises with probability 2^-k.
  void heat(auto& t, RowMeta& m) const {
    const uint32_t tag = epoch_tag();
    uint32_t w = m.temp.load(platform::memory_order_relaxed);
    const uint32_t k = (w >> kTempBits) == tag ? w & ((1U << kTempBits) - 1) : 0;
    if (k >= settings_.temp_max) return;
    if (k > 0 && (t.worker().rng.next() & ((uint64_t{1} << k) - 1)) != 0) return;
    // A lost race loses one count of an approximate counter.
    (void)m.temp.compare_exchange_strong(w, tag << kTempBits | (k + 1), platform::memory_order_relaxed);
  }

  // Whether the held locks (in address order) include the row's.
  static bool holds(const std::vector<Held>& held, const RowMeta* m) {
    const auto at =
        std::lower_bound(held.begin(), held.end(), m, [](const Held& h, const RowMeta* r) { return h.row < r; });
    return at != held.end() && at->row == m;
  }

  // Takes the row's lock in `mode` (or finds it held so), keeping the held
  // locks in address order; false if it was only tried and refused.
  bool lock(auto& t, RowMeta& m, Mode mode) {
    auto& meta = t.meta();
    auto& held = meta.held;
    auto at = std::lower_bound(held.begin(), held.end(), &m, [](const Held& h, const RowMeta* r) { return h.row < r; });
    const bool have = at != held.end() && at->row == &m;
    if (have && (at->mode == Mode::Exclusive || mode == Mode::Shared)) return true;
    if (have) {  // an upgrade: the only reader takes it at once
      int32_t one = 1;
      if (m.lock.compare_exchange_strong(one, kExclusive, platform::memory_order_acquire,
                                         platform::memory_order_relaxed)) {
        at->mode = Mode::Exclusive;
        return true;
      }
    }
    const auto above = static_cast<std::size_t>(held.end() - at) - (have ? 1 : 0);
    if (above == 0) {  // canonical: above every lock held (an upgrade's own shared lock released first)
      if (have) {
        release(m, Mode::Shared);
        held.pop_back();
      }
      acquire(t, m, mode);
      held.push_back({&m, mode});
      return true;
    }
    if (above > settings_.restore_max) {
      if (have || try_acquire(m, mode) != Attempt::Done) return false;
      held.insert(at, {&m, mode});
      return true;
    }
    // Restore the order: release the locks from this row up, take them
    // again in address order with this one among them.
    auto& retaking = meta.retaking;
    retaking.assign(at, held.end());
    held.erase(at, held.end());
    for (const Held& h : retaking) release(*h.row, h.mode);
    if (have) {
      retaking.front().mode = Mode::Exclusive;
    } else {
      retaking.insert(retaking.begin(), {&m, mode});
    }
    for (const Held& h : retaking) {
      acquire(t, *h.row, h.mode);
      held.push_back(h);
    }
    return true;
  }

  // Takes the lock if no one holds it in a conflicting mode; Retry if one does.
  static Attempt try_acquire(RowMeta& m, Mode mode) {
    int32_t v = m.lock.load(platform::memory_order_relaxed);
    while (mode == Mode::Exclusive ? v == 0 : v != kExclusive) {
      const int32_t next = mode == Mode::Exclusive ? kExclusive : v + 1;
      if (m.lock.compare_exchange_weak(v, next, platform::memory_order_acquire, platform::memory_order_relaxed)) {
        return Attempt::Done;
      }
    }
    return Attempt::Retry;
  }
  // Waits for the lock: only ever for one above every lock the transaction
  // holds, so waits cannot form a cycle.
  static void acquire(auto& t, RowMeta& m, Mode mode) {
    retry_until_done(t.worker(), [&] { return try_acquire(m, mode); });
  }
  static void release(RowMeta& m, Mode mode) {
    if (mode == Mode::Exclusive) {
      m.lock.store(0, platform::memory_order_release);
    } else {
      m.lock.fetch_sub(1, platform::memory_order_release);
    }
  }
  static void release_all(TxnMeta& meta) {
    for (const Held& h : meta.held) release(*h.row, h.mode);
    meta.held.clear();
  }

  const MoccConfig settings_;
  EpochTicker epochs_;
};

}  // namespace abyss::cc
