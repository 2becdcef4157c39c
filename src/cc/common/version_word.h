#pragma once
// A row guarded by a version word that carries a lock bit, as in SILO (the TID
// word) and TICTOC (the timestamp word), with the optimistic copy both use.
//
// A reader copies the row without writing anything shared: it reads the word,
// copies, and re-reads the word (Silo §4.5, TicToc Algorithm 4). The copy is
// the version of the first read if the word was unlocked both times and its
// version bits did not change; otherwise a committer was installing, and the
// copy is taken again. platform/shared_copy.h makes the overlapping copy and
// install well-defined and gives the ordering; validation at commit still
// looks only at the word.
//
// `kWord` points to the RowMeta's platform::Atomic<uint64_t> word;
// `kVersionMask` selects the bits every install changes (all of them for
// Silo's TID; TicToc's wts, since a reader's rts extension changes the word
// but not the data).
#include <cstdint>
#include <vector>

#include "cc/common/wait.h"
#include "platform/atomic.h"
#include "txn/access.h"

namespace abyss::cc {

template <auto kWord, uint64_t kLockBit, uint64_t kVersionMask = ~uint64_t{0}>
struct VersionWord {
  static bool is_locked(uint64_t word) { return (word & kLockBit) != 0; }

  // Copies the row and passes `record` the word it was copied under. A locked
  // row is waited for and copied again, charged to Wait; one installed and
  // unlocked while it was copied is copied again at once.
  template <class Record>
  static void copy(auto& t, auto& a, Record&& record) {
    const auto& word = t.row_meta(a.row).*kWord;
    retry_until_done(t.worker(), [&] {
      const uint64_t before = word.load(platform::memory_order_acquire);
      if (is_locked(before)) return Attempt::Retry;
      t.snapshot(a);  // acquire loads: the re-read below cannot move above them
      const uint64_t after = word.load(platform::memory_order_relaxed);
      if (is_locked(after)) return Attempt::Retry;
      if (((before ^ after) & kVersionMask) != 0) return Attempt::Again;
      record(before);
      return Attempt::Done;
    });
  }

  // Before the install, with the write set locked: each insert is published
  // locked, so a reader that finds it through the index waits for its word;
  // nothing else can reach it before that.
  static void prepare_install(auto& t) {
    if (t.changes() == 0) return;
    for (auto& a : t.accesses()) {
      if (a.type == AccessType::Insert) (t.row_meta(a.row).*kWord).store(kLockBit, platform::memory_order_relaxed);
    }
  }

  // Releases a lock taken for a commit that failed; no one else changes a
  // locked word, so the row keeps its version.
  static void unlock(auto& m) {
    auto& word = m.*kWord;
    word.store(word.load(platform::memory_order_relaxed) & ~kLockBit, platform::memory_order_release);
  }
};

}  // namespace abyss::cc
