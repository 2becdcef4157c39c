// TICTOC's rules (Yu et al., SIGMOD 2016, Algorithms 1-3 and §4.1), each
// pinned by an explicit interleaving of two transactions with their own
// workers, driven by one test thread. The rules TICTOC shares with OCC and
// SILO are typed over the family in to_schemes_test.cc; concurrent increments
// run under every scheme in txn_test.cc.
//
// Rows start at wts = rts = 0. A row's timestamps are written (wts, rts).
#include "cc/tictoc/tictoc.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "cc/occ/occ.h"
#include "common/config.h"
#include "platform/atomic.h"
#include "platform/thread.h"
#include "storage/database.h"
#include "txn/ts_source.h"
#include "txn/txn.h"

#include "scheme_fixture.h"

namespace abyss {
namespace {

using cc::Tictoc;

// Worker i runs txns[i].
using test::Fixture;

// TICTOC never allocates a timestamp: the fixture gives its workers no source,
// so allocate_ts() would crash, and every TICTOC test checks that too.
using TFixture = Fixture<Tictoc>;
static_assert(!Tictoc::kTraits.allocates_timestamps);

uint64_t word(TFixture& f, uint64_t key) { return f.meta(key).word.load(platform::memory_order_acquire); }
uint64_t wts(TFixture& f, uint64_t key) { return Tictoc::wts_of(word(f, key)); }
uint64_t rts(TFixture& f, uint64_t key) { return Tictoc::rts_of(word(f, key)); }
bool locked(TFixture& f, uint64_t key) { return Tictoc::is_locked(word(f, key)); }

// What another committer between its lock and its install looks like.
// A compare-and-swap loop, as the scheme's own lock, since a reader may be
// extending the row's rts meanwhile.
void set_lock_bit(TFixture& f, uint64_t key, bool locked) {
  platform::Atomic<uint64_t>& w = f.meta(key).word;
  uint64_t v = w.load(platform::memory_order_relaxed);
  while (!w.compare_exchange_weak(v, locked ? v | Tictoc::kLockBit : v & ~Tictoc::kLockBit,
                                  platform::memory_order_seq_cst)) {
  }
}
void lock_by_hand(TFixture& f, uint64_t key) { set_lock_bit(f, key, true); }
void unlock_by_hand(TFixture& f, uint64_t key) { set_lock_bit(f, key, false); }

// Gives row `read_key` rts 1 and row `write_key` wts = rts = 1: a transaction
// that reads the first and writes the second commits at 1 and extends the read.
void read_then_write(TFixture& f, Txn<Tictoc>& t, uint64_t read_key, uint64_t write_key) {
  const char* r = nullptr;
  char* w = nullptr;
  ASSERT_EQ(t.begin(false), Rc::Ok);
  ASSERT_EQ(t.read(*f.table, read_key, r), Rc::Ok);
  ASSERT_EQ(t.update(*f.table, write_key, w), Rc::Ok);
  set_int64(w, f.value, get_int64(w, f.value) + 1);
  ASSERT_EQ(t.commit(), Rc::Ok);
}

TEST(Tictoc, WordPacksWtsDeltaAndLock) {
  const uint64_t w = Tictoc::pack(7, 12);
  EXPECT_EQ(Tictoc::wts_of(w), 7U);
  EXPECT_EQ(Tictoc::delta_of(w), 5U);
  EXPECT_EQ(Tictoc::rts_of(w), 12U);
  EXPECT_FALSE(Tictoc::is_locked(w));
  EXPECT_TRUE(Tictoc::is_locked(w | Tictoc::kLockBit));
  EXPECT_EQ(Tictoc::rts_of(w | Tictoc::kLockBit), 12U);
  // The largest delta fits as it is.
  EXPECT_EQ(Tictoc::wts_of(Tictoc::pack(3, 3 + Tictoc::kDeltaMax)), 3U);
  EXPECT_EQ(Tictoc::delta_of(Tictoc::pack(3, 3 + Tictoc::kDeltaMax)), Tictoc::kDeltaMax);
}

// TicToc Algorithm 5: a delta that overflows 15 bits moves wts up by its high
// part; rts stays exact.
TEST(Tictoc, DeltaOverflowShiftsWtsAndKeepsRts) {
  const uint64_t over = Tictoc::kDeltaMax + 100;  // 32867: high part 32768, low part 99
  const uint64_t w = Tictoc::pack(0, over);
  EXPECT_EQ(Tictoc::wts_of(w), Tictoc::kDeltaMax + 1);
  EXPECT_EQ(Tictoc::delta_of(w), 99U);
  EXPECT_EQ(Tictoc::rts_of(w), over);
  const uint64_t far = Tictoc::pack(5, 5 + 3 * (Tictoc::kDeltaMax + 1) + 17);
  EXPECT_EQ(Tictoc::wts_of(far), 5 + 3 * (Tictoc::kDeltaMax + 1));
  EXPECT_EQ(Tictoc::delta_of(far), 17U);
  EXPECT_EQ(Tictoc::rts_of(far), 5 + 3 * (Tictoc::kDeltaMax + 1) + 17);
}

// The schedule where TicToc commits and OCC aborts. Set-up: a transaction
// reads 1 and writes 2, so row 1 is (0, 1) and row 2 is (1, 1).
//
//    T0      | T1      |
//    -------------------
//    BEGIN   |         |
//    R(1)    |         |   <- (0, 1), V = 101
//    R(2)    |         |   <- (1, 1)
//            | BEGIN   |
//            | W(1)    |
//            | COMMIT  |   <- at rts(1) + 1 = 2: row 1 becomes (2, 2)
//    COMMIT  |         |   <- commit_ts = max wts read = 1, covered by every
//                             rts read: commits at 1, before T1 (OCC: aborts,
//                             row 1 changed since T0 read it)
template <class CC>
Rc read_only_after_concurrent_writer(Fixture<CC>& f, int64_t& seen) {
  const char* r = nullptr;
  char* w = nullptr;
  EXPECT_EQ(f.t1->begin(false), Rc::Ok);
  EXPECT_EQ(f.t1->read(*f.table, 1, r), Rc::Ok);
  EXPECT_EQ(f.t1->update(*f.table, 2, w), Rc::Ok);
  EXPECT_EQ(f.t1->commit(), Rc::Ok);

  EXPECT_EQ(f.t0->begin(false), Rc::Ok);
  EXPECT_EQ(f.t0->read(*f.table, 1, r), Rc::Ok);
  seen = get_int64(r, f.value);
  EXPECT_EQ(f.t0->read(*f.table, 2, r), Rc::Ok);
  EXPECT_EQ(f.add(*f.t1, 1, 10), Rc::Ok);
  return f.t0->commit();
}

TEST(Tictoc, ReadOnlyCommitsBeforeConcurrentWriterWhereOccAborts) {
  TFixture f;
  int64_t seen = 0;
  ASSERT_EQ(read_only_after_concurrent_writer(f, seen), Rc::Ok);
  EXPECT_EQ(seen, 101);  // the version before T1's
  EXPECT_EQ(f.t0->meta().commit_ts, 1U);
  EXPECT_EQ(f.t1->meta().commit_ts, 2U);  // serialised after T0
  EXPECT_EQ(wts(f, 1), 2U);
  EXPECT_EQ(rts(f, 1), 2U);
  EXPECT_EQ(word(f, 2), Tictoc::pack(1, 1));  // T0 needed no extension
  EXPECT_EQ(f.committed_value(1), 111);

  Fixture<cc::Occ> occ;
  ASSERT_EQ(read_only_after_concurrent_writer(occ, seen), Rc::Abort);
  occ.t0->abort();
}

//    T0      | T1      |
//    -------------------
//    BEGIN   |         |
//    R(1)    |         |   <- (0, 0)
//    W(2)    |         |   <- (0, 0)
//    COMMIT  |         |   <- commit_ts = rts(2) + 1 = 1 > rts read of row 1:
//                             row 1 unchanged, its rts is extended to 1
//            | BEGIN   |
//            | R(1)    |   <- (0, 1)
//            | W(3)    |
//            | COMMIT  |   <- commit_ts 1 is covered: row 1 is not touched
TEST(Tictoc, ValidationExtendsRtsOfReadRow) {
  TFixture f;
  read_then_write(f, *f.t0, 1, 2);
  EXPECT_EQ(f.t0->meta().commit_ts, 1U);
  EXPECT_EQ(word(f, 1), Tictoc::pack(0, 1));  // wts kept, rts extended, unlocked
  EXPECT_EQ(word(f, 2), Tictoc::pack(1, 1));  // the write installed at commit_ts
  EXPECT_EQ(f.committed_value(1), 101);
  EXPECT_EQ(f.committed_value(2), 103);

  read_then_write(f, *f.t1, 1, 3);
  EXPECT_EQ(f.t1->meta().commit_ts, 1U);  // T0 and T1 only read row 1 in common
  EXPECT_EQ(word(f, 1), Tictoc::pack(0, 1));
  EXPECT_EQ(word(f, 3), Tictoc::pack(1, 1));

  // A write must come after every reader: row 1 is written at rts + 1.
  ASSERT_EQ(f.add(*f.t0, 1, 1), Rc::Ok);
  EXPECT_EQ(f.t0->meta().commit_ts, 2U);
  EXPECT_EQ(word(f, 1), Tictoc::pack(2, 2));
}

//    T0      | T1      |
//    -------------------
//    BEGIN   |         |
//    R(1)    |         |   <- (0, 0)
//            | BEGIN   |
//            | W(1)    |
//            | W(3)    |
//            | COMMIT  |   <- at 1: rows 1 and 3 become (1, 1)
//    R(3)    |         |   <- (1, 1): commit_ts must be >= 1 ...
//    COMMIT  |         |   <- ... beyond rts 0 read of row 1, whose wts
//                             changed: abort
TEST(Tictoc, AbortsWhenReadRowWtsChanged) {
  TFixture f;
  const char* r = nullptr;
  char* w = nullptr;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t0->read(*f.table, 1, r), Rc::Ok);

  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.t1->update(*f.table, 1, w), Rc::Ok);
  set_int64(w, f.value, 1);
  ASSERT_EQ(f.t1->update(*f.table, 3, w), Rc::Ok);
  set_int64(w, f.value, 3);
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
  EXPECT_EQ(word(f, 1), Tictoc::pack(1, 1));

  ASSERT_EQ(f.t0->read(*f.table, 3, r), Rc::Ok);
  EXPECT_EQ(get_int64(r, f.value), 3);
  EXPECT_EQ(f.t0->commit(), Rc::Abort);
  f.t0->abort();
  EXPECT_EQ(word(f, 1), Tictoc::pack(1, 1));  // a failed validation leaves rows alone
  EXPECT_EQ(word(f, 3), Tictoc::pack(1, 1));
}

// An upgrade is checked like a read: the copy being modified must still be
// the row's version.
TEST(Tictoc, UpgradeOfOverwrittenRowAborts) {
  TFixture f;
  const char* r = nullptr;
  char* w = nullptr;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t0->read(*f.table, 1, r), Rc::Ok);
  ASSERT_EQ(f.add(*f.t1, 1, 10), Rc::Ok);
  ASSERT_EQ(f.t0->update(*f.table, 1, w), Rc::Ok);  // upgrade answers Ok
  set_int64(w, f.value, 0);
  EXPECT_EQ(f.t0->commit(), Rc::Abort);
  EXPECT_TRUE(locked(f, 1));  // commit locked the row; abort() releases it
  f.t0->abort();
  EXPECT_FALSE(locked(f, 1));
  EXPECT_EQ(f.committed_value(1), 111);  // T1's write survives
}

// TicToc §4.1: a write-set row locked by another committer aborts the
// transaction at once (the test would hang if commit waited for the lock),
// and abort() releases the rows it had locked, never the other's.
//
//    T0      | other   |
//    -------------------
//    BEGIN   |         |
//    W(0)    |         |
//    W(2)    |         |
//            | LOCK(2) |   <- another committer in its validation phase
//    COMMIT  |         |   <- locks 0, finds 2 locked: abort
//    ABORT   |         |   <- unlocks 0, leaves 2 to its holder
TEST(Tictoc, NoWaitLockingAbortsOnLockedWriteRow) {
  TFixture f;
  ASSERT_LT(f.row(0), f.row(2)) << "the test relies on rows allocated in key order";
  char* w = nullptr;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t0->update(*f.table, 0, w), Rc::Ok);
  set_int64(w, f.value, 7);
  ASSERT_EQ(f.t0->update(*f.table, 2, w), Rc::Ok);
  set_int64(w, f.value, 9);
  const uint64_t word0 = word(f, 0);
  lock_by_hand(f, 2);

  EXPECT_EQ(f.t0->commit(), Rc::Abort);
  EXPECT_TRUE(locked(f, 0));  // taken in address order before row 2
  f.t0->abort();
  EXPECT_EQ(word(f, 0), word0);  // released, timestamps unchanged
  EXPECT_TRUE(locked(f, 2));     // still the other committer's
  EXPECT_EQ(f.committed_value(0), 100);
  EXPECT_EQ(f.committed_value(2), 102);

  unlock_by_hand(f, 2);
  ASSERT_EQ(f.t0->begin(true), Rc::Ok);  // the retry succeeds
  ASSERT_EQ(f.t0->update(*f.table, 0, w), Rc::Ok);
  set_int64(w, f.value, 7);
  ASSERT_EQ(f.t0->update(*f.table, 2, w), Rc::Ok);
  set_int64(w, f.value, 9);
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
  EXPECT_EQ(f.committed_value(0), 7);
  EXPECT_EQ(f.committed_value(2), 9);
  EXPECT_FALSE(locked(f, 0));
  EXPECT_FALSE(locked(f, 2));
}

// A read row locked by another committer fails validation only while its rts
// is below commit_ts: the committer will install at rts + 1 or later.
//
//    T0      | T1      | other   |
//    -----------------------------
//    R(1)    |         |         |   <- (0, 0)
//    W(2)    |         |         |
//            | R(1), W(3), COMMIT|   <- at 1: row 1 extended to (0, 1)
//            |         | LOCK(1) |
//    COMMIT  |         |         |   <- commit_ts 1 <= rts 1: commits,
//                                       although row 1 is locked
TEST(Tictoc, LockedReadRowAbortsOnlyBelowCommitTs) {
  TFixture f;
  const char* r = nullptr;
  char* w = nullptr;

  // rts 0 < commit_ts 1 and locked: abort.
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t0->read(*f.table, 1, r), Rc::Ok);
  ASSERT_EQ(f.t0->update(*f.table, 2, w), Rc::Ok);
  lock_by_hand(f, 1);
  EXPECT_EQ(f.t0->commit(), Rc::Abort);
  f.t0->abort();
  EXPECT_FALSE(locked(f, 2));
  unlock_by_hand(f, 1);
  EXPECT_EQ(word(f, 1), Tictoc::pack(0, 0));

  // The schedule drawn above: rts 1 >= commit_ts 1, locked or not.
  ASSERT_EQ(f.t0->begin(true), Rc::Ok);
  ASSERT_EQ(f.t0->read(*f.table, 1, r), Rc::Ok);
  ASSERT_EQ(f.t0->update(*f.table, 2, w), Rc::Ok);
  set_int64(w, f.value, 22);
  read_then_write(f, *f.t1, 1, 3);
  EXPECT_EQ(word(f, 1), Tictoc::pack(0, 1));
  lock_by_hand(f, 1);
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
  EXPECT_EQ(f.t0->meta().commit_ts, 1U);
  EXPECT_EQ(word(f, 1), Tictoc::pack(0, 1) | Tictoc::kLockBit);  // untouched
  EXPECT_EQ(f.committed_value(2), 22);
  unlock_by_hand(f, 1);
}

// After a failed commit, abort() releases every lock the commit took, and the
// transaction's insert never becomes visible.
//
//    T0      | T1      |
//    -------------------
//    BEGIN   |         |
//    R(1)    |         |
//    W(2)    |         |
//    W(3)    |         |
//    I(9)    |         |
//            | W(1), COMMIT
//    COMMIT  |         |   <- locks 2 and 3, then fails validation on row 1
//    ABORT   |         |   <- must unlock 2 and 3
//            | W(2), W(3), COMMIT   <- succeeds
TEST(Tictoc, AbortAfterFailedCommitReleasesEverything) {
  TFixture f;
  const char* r = nullptr;
  char* w = nullptr;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t0->read(*f.table, 1, r), Rc::Ok);
  ASSERT_EQ(f.t0->update(*f.table, 2, w), Rc::Ok);
  set_int64(w, f.value, 7);
  ASSERT_EQ(f.t0->update(*f.table, 3, w), Rc::Ok);
  set_int64(w, f.value, 8);
  ASSERT_EQ(f.t0->insert(*f.table, 9, w), Rc::Ok);
  set_int64(w, f.value, 900);
  ASSERT_EQ(f.add(*f.t1, 1, 10), Rc::Ok);

  ASSERT_EQ(f.t0->commit(), Rc::Abort);
  EXPECT_TRUE(locked(f, 2));
  EXPECT_TRUE(locked(f, 3));
  f.t0->abort();
  EXPECT_EQ(word(f, 2), Tictoc::pack(0, 0));
  EXPECT_EQ(word(f, 3), Tictoc::pack(0, 0));
  EXPECT_EQ(f.committed_value(2), 102);
  EXPECT_EQ(f.committed_value(3), 103);
  EXPECT_EQ(f.row(9), nullptr);

  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.t1->update(*f.table, 2, w), Rc::Ok);
  set_int64(w, f.value, 20);
  ASSERT_EQ(f.t1->update(*f.table, 3, w), Rc::Ok);
  set_int64(w, f.value, 30);
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
  EXPECT_EQ(f.committed_value(2), 20);
  EXPECT_EQ(f.committed_value(3), 30);
}

// An insert is published with its writer's commit timestamp, so a reader that
// finds it can never be ordered before its writer.
TEST(Tictoc, InsertCarriesCommitTs) {
  TFixture f;
  ASSERT_EQ(f.add(*f.t1, 2, 1), Rc::Ok);
  ASSERT_EQ(f.add(*f.t1, 2, 1), Rc::Ok);
  EXPECT_EQ(word(f, 2), Tictoc::pack(2, 2));

  const char* r = nullptr;
  char* w = nullptr;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t0->read(*f.table, 2, r), Rc::Ok);
  ASSERT_EQ(f.t0->insert(*f.table, 9, w), Rc::Ok);
  set_int64(w, f.value, 900);
  EXPECT_EQ(f.row(9), nullptr);
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
  EXPECT_EQ(f.t0->meta().commit_ts, 2U);
  ASSERT_NE(f.row(9), nullptr);
  EXPECT_EQ(word(f, 9), Tictoc::pack(2, 2));
  EXPECT_EQ(f.committed_value(9), 900);

  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.t1->read(*f.table, 9, r), Rc::Ok);
  EXPECT_EQ(get_int64(r, f.value), 900);
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
  EXPECT_GE(f.t1->meta().commit_ts, 2U);
}

// Delta overflow in a running system. T1 writes row 2 until its wts exceeds
// what 15 bits of delta can span from row 1's wts 0; then T0 reads rows 1 and
// 2 and commits at wts(2), extending row 1's rts that far: row 1's wts moves
// up (Algorithm 5), its data stays. T1, which copied row 1 before the shift,
// must validate it and aborts (conservative); a later writer of row 1 still
// commits after every reader.
//
//    T0      | T1      |
//    -------------------
//            | W(2) x N, COMMIT each   <- row 2: (N, N)
//            | BEGIN   |
//            | R(1)    |   <- (0, 0)
//    BEGIN   |         |
//    R(1)    |         |
//    R(2)    |         |
//    COMMIT  |         |   <- at N: row 1's rts extended to N, wts shifted
//            | W(3)    |
//            | COMMIT  |   <- commit_ts 1 > rts 0 read, wts changed: abort
TEST(Tictoc, DeltaOverflowInValidationShiftsWts) {
  TFixture f;
  const uint64_t n = Tictoc::kDeltaMax + 100;
  for (uint64_t i = 0; i < n; i++) ASSERT_EQ(f.add(*f.t1, 2, 1), Rc::Ok);
  EXPECT_EQ(word(f, 2), Tictoc::pack(n, n));

  const char* r = nullptr;
  char* w = nullptr;
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.t1->read(*f.table, 1, r), Rc::Ok);

  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t0->read(*f.table, 1, r), Rc::Ok);
  ASSERT_EQ(f.t0->read(*f.table, 2, r), Rc::Ok);
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
  EXPECT_EQ(f.t0->meta().commit_ts, n);
  EXPECT_EQ(rts(f, 1), n);                       // exact
  EXPECT_EQ(wts(f, 1), Tictoc::kDeltaMax + 1);   // shifted by delta's high part
  EXPECT_EQ(Tictoc::delta_of(word(f, 1)), 99U);  // its low part
  EXPECT_FALSE(locked(f, 1));
  EXPECT_EQ(f.committed_value(1), 101);  // a shift is not a write
  EXPECT_EQ(RowLayout::header(f.row(1)).writer, kLoadTxn);

  ASSERT_EQ(f.t1->update(*f.table, 3, w), Rc::Ok);
  EXPECT_EQ(f.t1->commit(), Rc::Abort);
  f.t1->abort();

  ASSERT_EQ(f.add(*f.t1, 1, 1), Rc::Ok);
  EXPECT_EQ(f.t1->meta().commit_ts, n + 1);
  EXPECT_EQ(word(f, 1), Tictoc::pack(n + 1, n + 1));
}

}  // namespace
}  // namespace abyss
