#pragma once
// A row guarded by a version word that carries a lock bit, as in SILO (the TID
// word) and TICTOC (the timestamp word), with the race-free copy both use.
//
// Silo's and TicToc's readers copy the row optimistically and re-read the word
// afterwards, which races with the installer's writes by design. abyss is
// checked with ThreadSanitizer, so a reader instead registers in the row's
// `copying` count for the length of its copy, and a committer drains that
// count (after it holds the lock bit) before it installs. The lock bit stays
// the only thing validation looks at. The price: a read writes the row's
// count twice, where the papers' reads write no shared memory.
//
// `kWord` points to the RowMeta's platform::Atomic<uint64_t> word; the RowMeta
// also has a platform::Atomic<uint32_t> `copying`.
#include <cstdint>
#include <vector>

#include "cc/common/wait.h"
#include "platform/atomic.h"
#include "txn/access.h"

namespace abyss::cc {

template <auto kWord, uint64_t kLockBit>
struct VersionWord {
  static bool is_locked(uint64_t word) { return (word & kLockBit) != 0; }

  // Silo §4.5: copies the row and passes `record` the word it was copied
  // under; a locked row is waited for, charged to Wait. The reader registers
  // in `copying` before it checks the lock bit and the committer checks
  // `copying` after it set the bit; both sides use sequentially consistent
  // operations, so either the committer waits for the copy or the reader sees
  // the lock and backs off (Dekker's pattern).
  template <class Record>
  static void copy(auto& t, auto& a, Record&& record) {
    auto& m = t.row_meta(a.row);
    auto& word = m.*kWord;
    retry_until_done(t.worker(), [&] {
      // Wait without registering, so spinning readers do not hold off the
      // committer's drain.
      if (is_locked(word.load(platform::memory_order_relaxed))) return Attempt::Retry;
      m.copying.fetch_add(1, platform::memory_order_seq_cst);
      const uint64_t v = word.load(platform::memory_order_seq_cst);
      if (!is_locked(v)) {
        record(v);
        t.snapshot(a);
      }
      m.copying.fetch_sub(1, platform::memory_order_release);
      return is_locked(v) ? Attempt::Retry : Attempt::Done;
    });
  }

  // Before the install, with the write set locked: readers that registered
  // before our lock bits finish their copies, and each insert is published
  // locked, so a reader that finds it through the index waits for its word;
  // nothing else can reach it before that.
  static void prepare_install(auto& t, const std::vector<uint32_t>& write_order) {
    auto& accesses = t.accesses();
    for (uint32_t i : write_order) drain_readers(t, t.row_meta(accesses[i].row));
    for (auto& a : accesses) {
      if (a.type == AccessType::Insert) (t.row_meta(a.row).*kWord).store(kLockBit, platform::memory_order_relaxed);
    }
  }

  // Releases a lock taken for a commit that failed; no one else changes a
  // locked word, so the row keeps its version.
  static void unlock(auto& m) {
    auto& word = m.*kWord;
    word.store(word.load(platform::memory_order_relaxed) & ~kLockBit, platform::memory_order_release);
  }

 private:
  static void drain_readers(auto& t, auto& m) {
    retry_until_done(t.worker(), [&] {
      return m.copying.load(platform::memory_order_seq_cst) == 0 ? Attempt::Done : Attempt::Retry;
    });
  }
};

}  // namespace abyss::cc
