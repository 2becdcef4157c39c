#pragma once
// POLARIS: optimistic concurrency control with transaction priorities (Ye et
// al., "Polaris: Enabling Transaction Priority in Optimistic Concurrency
// Control", SIGMOD 2023). It is SILO (cc/silo/silo.h) with one change: a
// transaction may reserve the rows it accesses at its priority, and a
// transaction of lower priority gives way to a reservation.
//
// Each row keeps one word: SILO's lock bit and version, and beside them the
// highest priority that reserves the row, how many transactions of that
// priority do, and a generation that changes whenever the reservations are
// dropped (so a late release cannot touch a newer generation's count).
//
//   - An access copies the row as SILO does. A transaction of priority above
//     0 reserves the row unless a higher priority holds it: the copy is then
//     taken under a compare-and-swap of the whole word, so the reservation
//     and the version copied are one. A write (or an upgrade) of a row that a
//     higher priority reserves aborts at once (lock_conflict); a read does
//     not, and reserves nothing.
//   - Commit locks the write set in address order without waiting. A row
//     locked by another committer, or reserved by a higher priority, refuses:
//     the committer releases what it locked and, unless a row it read or
//     wrote changed meanwhile (then it aborts: read_validation), waits and
//     tries the whole set again. So a lower priority yields to a reservation
//     at commit; transactions of one priority only ever retry, as in SILO.
//   - Validation and the version chosen are SILO's; publishing a written row
//     drops every reservation on it. A reservation of a row the transaction
//     did not write is released at its commit or abort.
//
// A transaction's priority is 0, or kHighPriority for the share
// --polaris-high-ratio of transactions (drawn when it first begins). It rises
// by one for every --polaris-inc-every restarts beyond the first
// --polaris-abort-threshold, up to --polaris-low-bound for a low transaction
// (kMaxPriority for a high one): the paper's abort-aware priority.
//
// Priorities change only which transaction aborts or waits: validation alone
// decides what commits, so every schedule it commits is one SILO would.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

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

// POLARIS's settings (Polaris::knobs); a run's are
// Config::settings<PolarisConfig>().
struct PolarisConfig {
  double high_ratio = 0;         // share of transactions that begin at kHighPriority
  uint32_t abort_threshold = 8;  // restarts before the priority rises
  uint32_t inc_every = 3;        // restarts per step of priority after that
  uint32_t low_bound = 15;       // the highest priority a low transaction reaches
};

class Polaris final {
 public:
  static constexpr SchemeTraits kTraits{
      .name = "polaris",
      .summary = "optimistic with priorities: rows reserved by a higher priority make a lower one abort or wait",
      .paper = "Ye et al., SIGMOD 2023 (Polaris)",
      .family = Family::Optimistic,
      .allocates_timestamps = false,  // versions are derived from the rows read, as SILO's TIDs
      .uses_latch = false,            // the lock is a bit of the row's word
      .waits = true,                  // a read waits while a committer holds the row; a commit, for a reservation
      .causes = abort_causes({AbortCause::ReadValidation, AbortCause::LockConflict}),
  };

  // The row's word, low bits first: lock (1), generation (4), priority (4),
  // reservers (10), version (45).
  static constexpr uint64_t kLockBit = 1;
  static constexpr unsigned kGenShift = 1;
  static constexpr unsigned kGenBits = 4;
  static constexpr unsigned kPrioShift = 5;
  static constexpr unsigned kPrioBits = 4;
  static constexpr unsigned kRefShift = 9;
  static constexpr unsigned kRefBits = 10;
  static constexpr unsigned kVersionShift = 19;
  static constexpr uint64_t kVersionMask = ~((uint64_t{1} << kVersionShift) - 1);
  static constexpr uint64_t kVersionStep = uint64_t{1} << kVersionShift;
  static constexpr uint32_t kMaxPriority = (1U << kPrioBits) - 1;
  static constexpr uint32_t kHighPriority = 8;
  static constexpr uint32_t kMaxReservers = (1U << kRefBits) - 1;

  static constexpr uint32_t field(uint64_t w, unsigned shift, unsigned bits) {
    return static_cast<uint32_t>((w >> shift) & ((uint64_t{1} << bits) - 1));
  }
  static constexpr uint64_t with_field(uint64_t w, unsigned shift, unsigned bits, uint32_t v) {
    const uint64_t mask = ((uint64_t{1} << bits) - 1) << shift;
    return (w & ~mask) | ((uint64_t{v} << shift) & mask);
  }
  static constexpr uint32_t generation(uint64_t w) { return field(w, kGenShift, kGenBits); }
  static constexpr uint32_t priority(uint64_t w) { return field(w, kPrioShift, kPrioBits); }
  static constexpr uint32_t reservers(uint64_t w) { return field(w, kRefShift, kRefBits); }
  // The word with no reservation: priority 0, no reservers, the next generation.
  static constexpr uint64_t unreserved(uint64_t w) {
    w = with_field(w, kPrioShift, kPrioBits, 0);
    w = with_field(w, kRefShift, kRefBits, 0);
    return with_field(w, kGenShift, kGenBits, (generation(w) + 1) & ((1U << kGenBits) - 1));
  }

  struct RowMeta {
    platform::Atomic<uint64_t> word{0};  // the loaded data: version 0, unreserved
  };
  using Word = VersionWord<&RowMeta::word, kLockBit, kVersionMask>;
  struct AccessMeta {
    uint64_t observed = 0;    // the version copied (the word's version bits)
    uint8_t reserved_at = 0;  // with `reserved`: the priority and generation it reserved
    uint8_t generation = 0;
    bool reserved = false;  // this transaction counts among the row's reservers
    bool locked = false;    // this transaction holds the row's lock bit
  };
  struct TxnMeta {
    uint64_t last_version = 0;          // the worker's last commit version (SILO's rule (b))
    std::vector<uint32_t> write_order;  // write set indexes, sorted by row address
  };

  static std::vector<Knob> knobs() {
    return {
        real(
            "polaris-high-ratio", "polaris_high_ratio", 0, 1,
            +[](Config& c) -> double& { return c.settings<PolarisConfig>().high_ratio; },
            "POLARIS: share of transactions that begin at high priority (8 of 15)"),
        integer<uint32_t>(
            "polaris-abort-threshold", "polaris_abort_threshold", 0, 1'000'000,
            +[](Config& c) -> uint32_t& { return c.settings<PolarisConfig>().abort_threshold; },
            "POLARIS: restarts of a transaction before its priority starts to rise"),
        integer<uint32_t>(
            "polaris-inc-every", "polaris_inc_every", 1, 1'000'000,
            +[](Config& c) -> uint32_t& { return c.settings<PolarisConfig>().inc_every; },
            "POLARIS: restarts per step of priority once it rises"),
        integer<uint32_t>(
            "polaris-low-bound", "polaris_low_bound", 0, kMaxPriority,
            +[](Config& c) -> uint32_t& { return c.settings<PolarisConfig>().low_bound; },
            "POLARIS: the highest priority a low-priority transaction rises to"),
    };
  }

  Polaris(const Config& config, uint32_t workers)
      : settings_(config.settings<PolarisConfig>()), slots_(new Slot[workers]) {}

  // This attempt's priority (for tests).
  uint32_t priority_of(auto& t) const { return slot(t).priority; }

  Rc begin(auto& t, bool restart) {
    Slot& s = slot(t);
    if (!restart) {
      s.restarts = 0;
      s.base = settings_.high_ratio > 0 && t.worker().rng.unit() < settings_.high_ratio ? kHighPriority : 0;
    } else {
      s.restarts++;
    }
    uint32_t p = s.base;
    if (s.restarts > settings_.abort_threshold) {
      const uint32_t bound = s.base > 0 ? kMaxPriority : settings_.low_bound;
      p = std::max(p, std::min(bound, s.base + (s.restarts - settings_.abort_threshold) / settings_.inc_every));
    }
    s.priority = static_cast<uint8_t>(p);
    return Rc::Ok;
  }

  Rc read(auto& t, auto& a) {
    (void)copy(t, a, false);  // a read never gives way
    return Rc::Ok;
  }
  Rc write(auto& t, auto& a) {
    if (!copy(t, a, true)) return t.abort_for(AbortCause::LockConflict);
    return Rc::Ok;
  }
  // The row was copied and perhaps reserved by the read; a higher priority
  // reserving it since makes the write give way.
  Rc upgrade(auto& t, auto& a) {
    const uint64_t w = t.row_meta(a.row).word.load(platform::memory_order_acquire);
    if (priority(w) > slot(t).priority) return t.abort_for(AbortCause::LockConflict);
    return Rc::Ok;
  }
  // Invisible to others until install_all() indexes it; its RowMeta is fresh.
  Rc insert(auto& /*t*/, auto& /*a*/) { return Rc::Ok; }

  Rc commit(auto& t) {
    const uint32_t mine = slot(t).priority;
    auto& order = t.meta().write_order;
    // Phase 1: lock the write set, or give way and try it all again.
    bool changed = false;
    retry_until_done(t.worker(), [&] {
      const bool all = lock_write_set<LockInserts::No>(t, order, [&](RowMeta& m) { return try_lock(m, mine); });
      if (all) return Attempt::Done;
      unlock_write_set(t, unlock_keeping_reservations);
      changed = any_changed(t);
      return changed ? Attempt::Done : Attempt::Retry;
    });
    if (changed) return t.abort_for(AbortCause::ReadValidation);

    // Phase 2 (SILO's): validate every row read or written, after the locks
    // (the lock CASes and these loads are sequentially consistent).
    uint64_t newest = t.meta().last_version;
    for (auto& a : t.accesses()) {
      if (a.type == AccessType::Insert) continue;
      const uint64_t now = t.row_meta(a.row).word.load(platform::memory_order_seq_cst);
      if ((now & kVersionMask) != a.cc.observed) return t.abort_for(AbortCause::ReadValidation);
      if ((now & kLockBit) != 0 && !a.cc.locked) return t.abort_for(AbortCause::ReadValidation);
      newest = std::max(newest, a.cc.observed);
    }

    // Phase 3: a version above every one read or written and the worker's
    // last; publishing it unlocks the row and drops its reservations.
    const uint64_t version = newest + kVersionStep;
    Word::prepare_install(t);
    install_and_publish(t, [&](RowMeta& m) {
      const uint64_t w = m.word.load(platform::memory_order_relaxed);
      m.word.store(unreserved(w & ~kVersionMask & ~kLockBit) | version, platform::memory_order_release);
    });
    t.meta().last_version = version;
    release_reservations(t);
    return Rc::Ok;
  }

  // Releases the locks a failed commit took (their reservations dropped, as
  // a commit's publish drops them) and the reservations the attempt holds.
  void abort(auto& t) {
    unlock_write_set(t, [](RowMeta& m) {
      const uint64_t w = m.word.load(platform::memory_order_relaxed);
      m.word.store(unreserved(w & ~kLockBit), platform::memory_order_release);
    });
    release_reservations(t);
  }

 private:
  // Each worker's priority bookkeeping, its own (kept across the restarts
  // of one transaction).
  struct alignas(platform::kCacheLine) Slot {
    uint32_t restarts = 0;
    uint8_t base = 0;
    uint8_t priority = 0;
  };
  Slot& slot(auto& t) const { return slots_[t.worker().id.value]; }

  // Copies the row as SILO does; reserves it at this transaction's priority
  // unless a higher one holds it, in one compare-and-swap with the copy's
  // version. A write of a row a higher priority holds gives way: false.
  bool copy(auto& t, auto& a, bool write) {
    const uint32_t mine = slot(t).priority;
    auto& word = t.row_meta(a.row).word;
    bool refused = false;
    retry_until_done(t.worker(), [&] {
      uint64_t before = word.load(platform::memory_order_acquire);
      if (Word::is_locked(before)) return Attempt::Retry;
      const uint32_t held = priority(before);
      if (write && held > mine) {
        refused = true;
        return Attempt::Done;
      }
      // A row copied again (read_with's copy when the row is next used)
      // keeps the reservation its first copy took.
      const bool reserve =
          !a.cc.reserved && mine > 0 && (held < mine || (held == mine && reservers(before) < kMaxReservers));
      t.snapshot(a);
      if (reserve) {
        const uint64_t reserved = with_field(with_field(before, kPrioShift, kPrioBits, mine), kRefShift, kRefBits,
                                             held == mine ? reservers(before) + 1 : 1);
        if (!word.compare_exchange_strong(before, reserved, platform::memory_order_acq_rel,
                                          platform::memory_order_relaxed)) {
          return Attempt::Again;  // the version, a lock or the reservations changed: copy again
        }
        a.cc.reserved = true;
        a.cc.reserved_at = static_cast<uint8_t>(mine);
        a.cc.generation = static_cast<uint8_t>(generation(reserved));
      } else {
        const uint64_t after = word.load(platform::memory_order_relaxed);
        if (Word::is_locked(after)) return Attempt::Retry;
        if (((before ^ after) & kVersionMask) != 0) return Attempt::Again;
      }
      a.cc.observed = before & kVersionMask;
      return Attempt::Done;
    });
    return !refused;
  }

  // Clears the lock bit alone: readers may have left their reservations on
  // the row meanwhile.
  static void unlock_keeping_reservations(RowMeta& m) {
    uint64_t w = m.word.load(platform::memory_order_relaxed);
    while (!m.word.compare_exchange_weak(w, w & ~kLockBit, platform::memory_order_release,
                                         platform::memory_order_relaxed)) {
    }
  }

  // Takes the row's lock bit unless another committer holds it or a higher
  // priority reserves it.
  static bool try_lock(RowMeta& m, uint32_t mine) {
    uint64_t w = m.word.load(platform::memory_order_relaxed);
    while (!Word::is_locked(w) && priority(w) <= mine) {
      if (m.word.compare_exchange_weak(w, w | kLockBit, platform::memory_order_seq_cst,
                                       platform::memory_order_relaxed)) {
        return true;
      }
    }
    return false;
  }

  // Whether a row the transaction read or wrote has a new version: waiting
  // for the write set would then end in a failed validation.
  static bool any_changed(auto& t) {
    for (auto& a : t.accesses()) {
      if (a.type == AccessType::Insert) continue;
      const uint64_t now = t.row_meta(a.row).word.load(platform::memory_order_acquire);
      if ((now & kVersionMask) != a.cc.observed) return true;
    }
    return false;
  }

  // Leaves the reservations this attempt holds, unless they were dropped
  // since (a commit published the row, or the count emptied and another
  // generation began).
  static void release_reservations(auto& t) {
    for (auto& a : t.accesses()) {
      if (!a.cc.reserved) continue;
      a.cc.reserved = false;
      auto& word = t.row_meta(a.row).word;
      uint64_t w = word.load(platform::memory_order_relaxed);
      while (priority(w) == a.cc.reserved_at && generation(w) == a.cc.generation && reservers(w) > 0) {
        const uint32_t left = reservers(w) - 1;
        const uint64_t next = left == 0 ? unreserved(w) : with_field(w, kRefShift, kRefBits, left);
        if (word.compare_exchange_weak(w, next, platform::memory_order_acq_rel, platform::memory_order_relaxed)) break;
      }
    }
  }

  const PolarisConfig settings_;
  std::unique_ptr<Slot[]> slots_;
};

}  // namespace abyss::cc
