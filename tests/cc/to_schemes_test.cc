// The rules of the timestamp-ordering, multi-version, optimistic and
// partition-locking schemes (Abyss §2.2; Silo and TicToc in silo_test.cc and
// tictoc_test.cc). Rules a family shares are typed over it (test::
// timestamp_ordering, test::optimistic) with a negative control each; what a
// scheme alone decides follows in its own section. Each rule is pinned by an
// explicit interleaving of two transactions with their own workers. One test
// thread drives both, except where a rule says a transaction must wait: there
// test::race plays the waiter on a second platform thread and the test
// asserts the order of events, never a duration.
//
// Timestamps come from one shared TsSource with the default (atomic) method,
// so the transaction that calls begin() first is the older one (one OCC test
// sets another method on purpose).
#include <gtest/gtest.h>

#include <stdexcept>

#include "cc/hstore/hstore.h"
#include "cc/mvcc/mvcc.h"
#include "cc/none/none.h"
#include "cc/occ/occ.h"
#include "cc/silo/silo.h"
#include "cc/tictoc/tictoc.h"
#include "cc/timestamp/timestamp.h"
#include "common/config.h"
#include "platform/atomic.h"
#include "platform/clock.h"
#include "platform/thread.h"
#include "storage/database.h"
#include "txn/ts_source.h"
#include "txn/txn.h"

#include "scheme_fixture.h"

namespace abyss {
namespace {

using test::First;
using test::Fixture;
using test::kLimitMs;
using test::kWaitMarginMs;
using test::race;

// ============================================================================
// Every timestamp-ordering scheme: TIMESTAMP and MVCC (Abyss §2.2)
// ============================================================================
//
// Both order transactions by the timestamps they take at begin and keep at
// most one pending write per row; they differ on a read that arrives late
// (TIMESTAMP aborts it, MVCC reads an older version: keeps_versions), which
// the scheme sections below pin.

template <class CC>
class TimestampOrdering : public ::testing::Test {};
TYPED_TEST_SUITE(TimestampOrdering, test::GtestTypes<test::SchemesWhere<test::timestamp_ordering>>, test::SchemeName);

//    T0 (older) | T1 (younger) |
//    ---------------------------
//    BEGIN      |              |
//               | BEGIN        |
//               | R(0)         |   rts(0) = ts(T1)
//    W(0)       |              |   <- would go under a version T1 read: aborts
// Answers T0's write.
template <class CC>
Rc older_write_after_a_younger_read(Fixture<CC>& f) {
  int64_t v = 0;
  EXPECT_EQ(f.t0->begin(false), Rc::Ok);
  EXPECT_EQ(f.t1->begin(false), Rc::Ok);
  EXPECT_EQ(f.read(*f.t1, 0, v), Rc::Ok);
  return f.write(*f.t0, 0, 1);
}

//    ...        |              |
//    ABORT      |              |
//               | W(0)=7       |   no pending write was left behind: T1 may write
//               | COMMIT       |
TYPED_TEST(TimestampOrdering, WriteOlderThanAYoungerReadAborts) {
  Fixture<TypeParam> f;
  EXPECT_EQ(older_write_after_a_younger_read(f), Rc::Abort);
  f.t0->abort();
  ASSERT_EQ(f.write(*f.t1, 0, 7), Rc::Ok);  // upgrade of T1's read
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
  EXPECT_EQ(f.committed_value(0), 7);
}

//    T0 (older) | T1 (younger) |
//    ---------------------------
//    BEGIN      |              |
//               | BEGIN        |
//    R(0)       |              |
//               | R(0)         |   rts(0) = ts(T1)
//    W(0)       |              |   <- upgrade older than a read: aborts
template <class CC>
Rc older_upgrade_after_a_younger_read(Fixture<CC>& f) {
  int64_t v = 0;
  EXPECT_EQ(f.t0->begin(false), Rc::Ok);
  EXPECT_EQ(f.t1->begin(false), Rc::Ok);
  EXPECT_EQ(f.read(*f.t0, 0, v), Rc::Ok);
  EXPECT_EQ(f.read(*f.t1, 0, v), Rc::Ok);
  return f.write(*f.t0, 0, 1);
}

TYPED_TEST(TimestampOrdering, UpgradeOlderThanAYoungerReadAborts) {
  Fixture<TypeParam> f;
  EXPECT_EQ(older_upgrade_after_a_younger_read(f), Rc::Abort);
  f.t0->abort();
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
  EXPECT_EQ(f.committed_value(0), 100);
}

//    T0 (older) | T1 (younger) |
//    ---------------------------
//    BEGIN      |              |
//               | BEGIN        |
//               | W(0)=42      |
//               | COMMIT       |
//    R(0)=100   |              |   only with versions: reading late is fine
//    W(0)       |              |   <- writing late is not: aborts (no Thomas write rule)
template <class CC>
Rc older_write_after_a_younger_commit(Fixture<CC>& f) {
  EXPECT_EQ(f.t0->begin(false), Rc::Ok);
  EXPECT_EQ(f.t1->begin(false), Rc::Ok);
  EXPECT_EQ(f.write(*f.t1, 0, 42), Rc::Ok);
  EXPECT_EQ(f.t1->commit(), Rc::Ok);
  if (CC::kTraits.keeps_versions) {
    int64_t v = 0;
    EXPECT_EQ(f.read(*f.t0, 0, v), Rc::Ok);
    EXPECT_EQ(v, 100);
  }
  return f.write(*f.t0, 0, 1);
}

TYPED_TEST(TimestampOrdering, WriteOlderThanAYoungerCommittedWriteAborts) {
  Fixture<TypeParam> f;
  EXPECT_EQ(older_write_after_a_younger_commit(f), Rc::Abort);
  f.t0->abort();
  EXPECT_EQ(f.committed_value(0), 42);
}

//    T0 (older) | T1 (younger) |
//    ---------------------------
//    BEGIN      |              |
//               | BEGIN        |
//               | W(0)=42      |   pending writes, younger than T0
//               | W(1)=43      |
//    R(0)       |              |   <- returns at once, with the installed 100
//    W(1)       |              |   <- returns at once: Abort, since T0 would
//    ABORT      |              |      have to install under T1's pending write
//               | COMMIT       |
TYPED_TEST(TimestampOrdering, OlderAccessDoesNotWaitForAYoungerPendingWrite) {
  Fixture<TypeParam> f;
  int64_t v = 0;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.write(*f.t1, 0, 42), Rc::Ok);
  ASSERT_EQ(f.write(*f.t1, 1, 43), Rc::Ok);
  ASSERT_EQ(f.read(*f.t0, 0, v), Rc::Ok);
  EXPECT_EQ(v, 100);
  EXPECT_EQ(f.write(*f.t0, 1, 1), Rc::Abort);
  f.t0->abort();
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
  EXPECT_EQ(f.committed_value(0), 42);
  EXPECT_EQ(f.committed_value(1), 43);
}

//    T0 (older) | T1 (younger) |
//    ---------------------------
//    BEGIN      |              |
//               | BEGIN        |
//               | W(0)=42      |   pending write
//    R(0)=100   |              |   rts(0) = ts(T0) < ts(T1): T1 may still install
//               | COMMIT       |
//    COMMIT     |              |
//               | BEGIN        |   (youngest)
//               | R(0)         |   <- sees 42
TYPED_TEST(TimestampOrdering, OlderReadSeesTheOldValueAndAYoungerOneTheCommittedWrite) {
  Fixture<TypeParam> f;
  int64_t v = 0;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.write(*f.t1, 0, 42), Rc::Ok);
  ASSERT_EQ(f.read(*f.t0, 0, v), Rc::Ok);
  EXPECT_EQ(v, 100);
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
  EXPECT_EQ(f.committed_value(0), 42);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.read(*f.t1, 0, v), Rc::Ok);
  EXPECT_EQ(v, 42);
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
}

// What a younger access met when an older write to its row was pending.
struct Waited {
  First first = First::WaiterReturned;
  Rc rc = Rc::Abort;
  int64_t seen = 0;
  Rc holder_commit = Rc::Abort;
};

//    T0 (older) | T1 (younger), another thread |
//    -------------------------------------------
//    BEGIN      |                              |
//               | BEGIN                        |
//    W(0)=42    |                              |   pending write, older
//               | R(0) or W(0)                 |   <- waits: it could become T1's version
//    COMMIT     |                              |
//               |   ... returns, with 42       |
template <class CC>
Waited younger_access_after_an_older_pending_write(Fixture<CC>& f, bool write) {
  Waited w;
  EXPECT_EQ(f.t0->begin(false), Rc::Ok);
  EXPECT_EQ(f.t1->begin(false), Rc::Ok);
  EXPECT_EQ(f.write(*f.t0, 0, 42), Rc::Ok);
  w.first = race(
      kWaitMarginMs, [&] { w.rc = write ? f.write(*f.t1, 0, 43, w.seen) : f.read(*f.t1, 0, w.seen); },
      [&] { w.holder_commit = f.t0->commit(); });
  return w;
}

TYPED_TEST(TimestampOrdering, YoungerReadWaitsForAnOlderPendingWrite) {
  Fixture<TypeParam> f;
  const Waited w = younger_access_after_an_older_pending_write(f, false);
  EXPECT_EQ(w.first, First::ReleaseCalled) << "the read returned while the older write was pending";
  ASSERT_EQ(w.holder_commit, Rc::Ok);
  ASSERT_EQ(w.rc, Rc::Ok);
  EXPECT_EQ(w.seen, 42);
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
}

// As above for a write: it waits for the older pending write, then writes
// over the version that one installed.
TYPED_TEST(TimestampOrdering, YoungerWriteWaitsForAnOlderPendingWrite) {
  Fixture<TypeParam> f;
  const Waited w = younger_access_after_an_older_pending_write(f, true);
  EXPECT_EQ(w.first, First::ReleaseCalled) << "the write returned while the older write was pending";
  ASSERT_EQ(w.holder_commit, Rc::Ok);
  ASSERT_EQ(w.rc, Rc::Ok);
  EXPECT_EQ(w.seen, 42);
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
  EXPECT_EQ(f.committed_value(0), 43);
}

//    T0 (older) | T1 (younger) |
//    ---------------------------
//    BEGIN      |              |
//               | BEGIN        |
//               | W(0)=42      |   pending write
//               | ABORT        |   <- drops it, and its data
//    W(0)=5     |              |   would abort on a pending younger write
//    ABORT      |              |
//               | BEGIN        |   (younger than T0 again)
//               | W(0)=6       |   would wait forever on T0's pending write
//               | COMMIT       |
TYPED_TEST(TimestampOrdering, AbortDropsThePendingWrite) {
  Fixture<TypeParam> f;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.write(*f.t1, 0, 42), Rc::Ok);
  f.t1->abort();
  EXPECT_EQ(f.committed_value(0), 100);
  ASSERT_EQ(f.write(*f.t0, 0, 5), Rc::Ok) << "T1's aborted pending write is still pending";
  f.t0->abort();
  ASSERT_EQ(f.t1->begin(true), Rc::Ok);
  ASSERT_EQ(f.write(*f.t1, 0, 6), Rc::Ok);
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
  EXPECT_EQ(f.committed_value(0), 6);
}

//    T0 (older)   | T1 (younger) |
//    -----------------------------
//    BEGIN        |              |
//                 | BEGIN        |
//                 | W(0)=42      |
//                 | COMMIT       |
//    R(0): abort  |              |   (without versions; with them T0 aborts for another reason)
//    BEGIN(restart)              |   <- a new timestamp, younger than T1
//    R(0)=42      |              |
TYPED_TEST(TimestampOrdering, RestartTakesANewTimestamp) {
  Fixture<TypeParam> f;
  int64_t v = 0;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  const Timestamp first = f.t0->meta().ts;
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.write(*f.t1, 0, 42), Rc::Ok);
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
  if (!TypeParam::kTraits.keeps_versions) {
    ASSERT_EQ(f.read(*f.t0, 0, v), Rc::Abort);
  }
  f.t0->abort();
  ASSERT_EQ(f.t0->begin(true), Rc::Ok);
  EXPECT_GT(f.t0->meta().ts, first);
  EXPECT_GT(f.t0->meta().ts, f.t1->meta().ts);
  ASSERT_EQ(f.read(*f.t0, 0, v), Rc::Ok);
  EXPECT_EQ(v, 42) << "the restart kept a timestamp older than the version";
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
}

// An inserted row carries its inserter's timestamp. Were it stamped 0, an
// older transaction would read a row a younger one inserted although it read
// an older version of another row that younger transaction wrote: T0 would
// see T1's insert but not T1's write, which no serial order explains.
//    T0 (older) | T1 (younger) |
//    ---------------------------
//    BEGIN      |              |
//               | BEGIN        |
//    R(1)=101   |              |   without versions: T0 before T1
//               | W(1)=42      |   allowed: T1 is younger than the read
//               | INSERT(10)   |
//               | COMMIT       |
//    R(1)=101   |              |   with versions: the version before T1
//    R(10)      |              |   <- T1 before T0: must not answer Ok
// Answers T0's read of row 10.
template <class CC>
Rc older_read_of_a_younger_insert(Fixture<CC>& f) {
  int64_t v = 0;
  EXPECT_EQ(f.t0->begin(false), Rc::Ok);
  EXPECT_EQ(f.t1->begin(false), Rc::Ok);
  if (!CC::kTraits.keeps_versions) {
    EXPECT_EQ(f.read(*f.t0, 1, v), Rc::Ok);
    EXPECT_EQ(v, 101);
  }
  EXPECT_EQ(f.write(*f.t1, 1, 42), Rc::Ok);
  EXPECT_EQ(f.insert(*f.t1, 10, 1010), Rc::Ok);
  EXPECT_EQ(f.t1->commit(), Rc::Ok);
  if (CC::kTraits.keeps_versions) {
    EXPECT_EQ(f.read(*f.t0, 1, v), Rc::Ok);
    EXPECT_EQ(v, 101);
  }
  return f.read(*f.t0, 10, v);
}

TYPED_TEST(TimestampOrdering, OlderReadDoesNotSeeAYoungerInsert) {
  Fixture<TypeParam> f;
  EXPECT_NE(older_read_of_a_younger_insert(f), Rc::Ok) << "T0 sees T1's insert but the version of row 1 before T1";
  f.t0->abort();
}

// The negative control: with no concurrency control the same schedules break
// each rule above, so these tests can fail.
TEST(TimestampOrderingControl, NoneBreaksEveryRule) {
  {
    Fixture<cc::None> f;
    EXPECT_EQ(older_write_after_a_younger_read(f), Rc::Ok);
  }
  {
    Fixture<cc::None> f;
    EXPECT_EQ(older_upgrade_after_a_younger_read(f), Rc::Ok);
  }
  {
    Fixture<cc::None> f;
    EXPECT_EQ(older_write_after_a_younger_commit(f), Rc::Ok);
  }
  {
    Fixture<cc::None> f;
    const Waited w = younger_access_after_an_older_pending_write(f, false);
    EXPECT_EQ(w.first, First::WaiterReturned);
    EXPECT_EQ(w.seen, 42) << "none writes in place: the read sees the pending write's data";
  }
  {
    Fixture<cc::None> f;
    EXPECT_EQ(older_read_of_a_younger_insert(f), Rc::Ok);
  }
}

// ============================================================================
// TIMESTAMP: basic T/O (timestamp.h)
// ============================================================================

//    T0 (older) | T1 (younger) |
//    ---------------------------
//    BEGIN      |              |
//               | BEGIN        |
//               | W(0)=42      |
//               | COMMIT       |   wts(0) = ts(T1)
//    R(0)       |              |   <- older than the installed version: aborts
TEST(TimestampScheme, ReadOlderThanTheInstalledVersionAborts) {
  Fixture<cc::BasicTimestampOrdering> f;
  int64_t v = 0;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_LT(f.t0->meta().ts, f.t1->meta().ts);
  ASSERT_EQ(f.write(*f.t1, 0, 42), Rc::Ok);
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
  EXPECT_EQ(f.read(*f.t0, 0, v), Rc::Abort);
  f.t0->abort();
  // A row T1 did not write is still readable at T0's age.
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.read(*f.t0, 0, v), Rc::Ok);
  EXPECT_EQ(v, 42);
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
}

// ============================================================================
// MVCC: multi-version T/O (mvcc.h)
// ============================================================================

//    T0 (older) | T1 (younger) |
//    ---------------------------
//    BEGIN      |              |
//    W(0)=7     |              |
//    COMMIT     |              |   version c0
//    BEGIN      |              |
//               | BEGIN        |
//               | W(0)=42      |
//               | COMMIT       |   version c1, newer than T0
//    R(0)       |              |   <- 7, the version c0 (never rejected late)
TEST(MvccScheme, OlderReaderSeesTheVersionBeforeAYoungerCommit) {
  Fixture<cc::Mvcc> f;
  int64_t v = 0;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.write(*f.t0, 0, 7), Rc::Ok);
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
  const TxnId c0 = f.t0->commit_id();
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.write(*f.t1, 0, 42), Rc::Ok);
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
  const TxnId c1 = f.t1->commit_id();
  ASSERT_EQ(RowLayout::header(f.row(0)).writer, c1);

  ASSERT_EQ(f.read(*f.t0, 0, v), Rc::Ok);
  EXPECT_EQ(v, 7);
  EXPECT_EQ(f.committed_value(0), 42);
  const Access<cc::Mvcc>* a = Fixture<cc::Mvcc>::access(*f.t0, 0);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->seen, c0) << "history must name the writer of the version read, not the row's newest";
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
}

// A worker recomputes its low-water mark on its first begin, then skips
// --mvcc-refresh-every (default 32) begins before the next recomputation.
// Twice that many begins between two writes make W0 refresh at least once in
// between.
const int kBeginsBetweenRefreshes = 2 * static_cast<int>(cc::MvccConfig{}.refresh_every);

// Runs `n` empty transactions on `t`: each publishes a new timestamp.
template <class CC>
void idle(Txn<CC>& t, int n) {
  for (int i = 0; i < n; i++) {
    ASSERT_EQ(t.begin(false), Rc::Ok);
    ASSERT_EQ(t.commit(), Rc::Ok);
  }
}

// Per round: W1 publishes a fresh timestamp (so it holds back no version
// written so far); W0 refreshes its low-water mark, which is now above every
// version but the newest; then W0 writes row 0, which collects the versions
// below it. Without collection every commit would keep one more version.
TEST(MvccScheme, OldVersionsAreCollectedWhenNoTransactionCanReadThem) {
  Fixture<cc::Mvcc> f;
  constexpr int kCommits = 200;
  for (int i = 0; i < kCommits; i++) {
    idle(*f.t1, 1);
    idle(*f.t0, kBeginsBetweenRefreshes);
    ASSERT_EQ(f.t0->begin(false), Rc::Ok);
    ASSERT_EQ(f.write(*f.t0, 0, i), Rc::Ok);
    ASSERT_EQ(f.t0->commit(), Rc::Ok);
  }
  EXPECT_GT(f.cc.versions_allocated(), 0u) << "a commit keeps the superseded version";
  EXPECT_LT(f.cc.versions_allocated(), 8u) << "superseded versions are not collected";
  int64_t v = 0;
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.read(*f.t1, 0, v), Rc::Ok);
  EXPECT_EQ(v, kCommits - 1);
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
}

// With --mvcc-refresh-every 0 every begin recomputes the low-water mark, so
// one begin of W1 between W0's writes is enough to collect; with the default
// W0's mark lags and the superseded versions pile up in between.
TEST(MvccScheme, RefreshEveryBeginCollectsWithoutIdleTransactions) {
  Config every_begin;
  every_begin.settings<cc::MvccConfig>().refresh_every = 0;
  Fixture<cc::Mvcc> eager(every_begin);
  Fixture<cc::Mvcc> lagging;
  for (auto* f : {&eager, &lagging}) {
    for (int i = 0; i < 100; i++) {
      idle(*f->t1, 1);
      ASSERT_EQ(f->t0->begin(false), Rc::Ok);
      ASSERT_EQ(f->write(*f->t0, 0, i), Rc::Ok);
      ASSERT_EQ(f->t0->commit(), Rc::Ok);
    }
  }
  EXPECT_LT(eager.cc.versions_allocated(), 8u) << "superseded versions are not collected";
  EXPECT_GT(lagging.cc.versions_allocated(), 8u) << "the default refreshed at every begin";
}

// The other side of collection: while T0 (older) is active, every version
// committed after it started stays, and the one T0 must read is not freed.
//    T0 (older) | T1, many rounds               |
//    --------------------------------------------
//    BEGIN      |                               |
//               | (refresh) BEGIN W(0)=i COMMIT |
//    R(0)=100   |                               |   <- the loaded version
TEST(MvccScheme, VersionsAnActiveOlderTransactionCanReadAreKept) {
  Fixture<cc::Mvcc> f;
  constexpr int kCommits = 50;
  int64_t v = 0;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  for (int i = 0; i < kCommits; i++) {
    idle(*f.t1, kBeginsBetweenRefreshes);
    ASSERT_EQ(f.t1->begin(false), Rc::Ok);
    ASSERT_EQ(f.write(*f.t1, 0, i), Rc::Ok);
    ASSERT_EQ(f.t1->commit(), Rc::Ok);
  }
  EXPECT_GE(f.cc.versions_allocated(), static_cast<uint64_t>(kCommits));
  ASSERT_EQ(f.read(*f.t0, 0, v), Rc::Ok) << "the version T0 must read was collected";
  EXPECT_EQ(v, 100);
  const Access<cc::Mvcc>* a = Fixture<cc::Mvcc>::access(*f.t0, 0);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->seen, kLoadTxn);
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
}

// The row header says deleted, but for an older reader MVCC picks the version
// from before the delete, which exists: the read must find it.
//    T0 (older) | T1 (younger) |
//    ---------------------------
//    BEGIN      |              |
//               | BEGIN        |
//               | W(1)=42      |
//               | REMOVE(2)    |
//               | COMMIT       |
//    R(1)=101   |              |   the version before T1
//    R(2)       |              |   <- must not be NotFound: before T1, row 2 exists
TEST(MvccScheme, OlderReaderSeesARowAYoungerTransactionRemoved) {
  Fixture<cc::Mvcc> f;
  int64_t v = 0;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.write(*f.t1, 1, 42), Rc::Ok);
  ASSERT_EQ(f.t1->remove(*f.table, 2), Rc::Ok);
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
  ASSERT_EQ(f.read(*f.t0, 1, v), Rc::Ok);
  EXPECT_EQ(v, 101);
  ASSERT_EQ(f.read(*f.t0, 2, v), Rc::Ok) << "T0 reads row 1 from before T1, so row 2 too: not missing, not aborted";
  EXPECT_EQ(v, 102);
  f.t0->abort();
}

// ----------------------------------------------------------------------------
// MVCC's weaker levels (--isolation snapshot | read-committed)
// ----------------------------------------------------------------------------

Config isolated(Isolation level) {
  Config c;
  c.isolation = level;
  return c;
}

// Write skew: each reads both rows and writes the one the other does not.
//    T0             | T1
//    BEGIN          |
//                   | BEGIN
//    R(0) R(1)      |
//                   | R(0) R(1)
//    W(0)           |                <- serializable: T1 (younger) read row 0, T0 aborts
//                   | W(1)
//    COMMIT         | COMMIT         <- snapshot: both commit (G2-item)
TEST(MvccIsolation, SnapshotAdmitsWriteSkewSerializableDoesNot) {
  for (Isolation level : {Isolation::Serializable, Isolation::Snapshot}) {
    SCOPED_TRACE(std::string(name_of(kIsolationNames, level)));
    Fixture<cc::Mvcc> f(isolated(level));
    int64_t v = 0;
    ASSERT_EQ(f.t0->begin(false), Rc::Ok);
    ASSERT_EQ(f.t1->begin(false), Rc::Ok);
    for (Txn<cc::Mvcc>* t : {f.t0, f.t1}) {
      ASSERT_EQ(f.read(*t, 0, v), Rc::Ok);
      ASSERT_EQ(f.read(*t, 1, v), Rc::Ok);
    }
    const Rc w0 = f.write(*f.t0, 0, 7);
    if (level == Isolation::Serializable) {
      EXPECT_EQ(w0, Rc::Abort);
      f.t0->abort();
      f.t1->abort();
      continue;
    }
    ASSERT_EQ(w0, Rc::Ok);
    ASSERT_EQ(f.write(*f.t1, 1, 8), Rc::Ok);
    EXPECT_EQ(f.t0->commit(), Rc::Ok);
    EXPECT_EQ(f.t1->commit(), Rc::Ok);
    EXPECT_EQ(f.committed_value(0), 7);
    EXPECT_EQ(f.committed_value(1), 8);
  }
}

// A snapshot is what was committed when it began: a write committed later,
// by a transaction that began earlier, is not in it; under serializable
// MVCC the younger reader sees it (versions are ordered by begin).
//    T0 (older)     | T1
//    BEGIN          |
//                   | BEGIN
//    W(0)=42 COMMIT |
//                   | R(0)      <- snapshot: 100; serializable: 42
TEST(MvccIsolation, SnapshotIsTheCommitsBeforeItsBegin) {
  for (Isolation level : {Isolation::Serializable, Isolation::Snapshot}) {
    SCOPED_TRACE(std::string(name_of(kIsolationNames, level)));
    Fixture<cc::Mvcc> f(isolated(level));
    int64_t v = 0;
    ASSERT_EQ(f.t0->begin(false), Rc::Ok);
    ASSERT_EQ(f.t1->begin(false), Rc::Ok);
    ASSERT_EQ(f.write(*f.t0, 0, 42), Rc::Ok);
    ASSERT_EQ(f.t0->commit(), Rc::Ok);
    ASSERT_EQ(f.read(*f.t1, 0, v), Rc::Ok);
    EXPECT_EQ(v, level == Isolation::Snapshot ? 100 : 42);
    ASSERT_EQ(f.t1->commit(), Rc::Ok);
  }
}

// First committer wins: a write of a row committed since the snapshot, and
// a write beside another pending one, abort; read committed only refuses
// the second.
TEST(MvccIsolation, SnapshotWriteAbortsOverANewerCommitReadCommittedOverwrites) {
  for (Isolation level : {Isolation::Snapshot, Isolation::ReadCommitted}) {
    SCOPED_TRACE(std::string(name_of(kIsolationNames, level)));
    Fixture<cc::Mvcc> f(isolated(level));
    ASSERT_EQ(f.t0->begin(false), Rc::Ok);
    ASSERT_EQ(f.t1->begin(false), Rc::Ok);
    ASSERT_EQ(f.write(*f.t1, 0, 42), Rc::Ok);
    EXPECT_EQ(f.write(*f.t0, 0, 7), Rc::Abort) << "first updater wins";
    f.t0->abort();
    ASSERT_EQ(f.t1->commit(), Rc::Ok);
    ASSERT_EQ(f.t0->begin(false), Rc::Ok);
    ASSERT_EQ(f.t1->begin(false), Rc::Ok);
    ASSERT_EQ(f.write(*f.t1, 1, 43), Rc::Ok);
    ASSERT_EQ(f.t1->commit(), Rc::Ok);
    int64_t seen = 0;
    const Rc rc = f.write(*f.t0, 1, 7, seen);
    if (level == Isolation::Snapshot) {
      EXPECT_EQ(rc, Rc::Abort) << "T1 committed row 1 after T0's snapshot: first committer wins";
      f.t0->abort();
    } else {
      ASSERT_EQ(rc, Rc::Ok);
      EXPECT_EQ(seen, 43) << "read committed writes over the newest committed version";
      ASSERT_EQ(f.t0->commit(), Rc::Ok);
      EXPECT_EQ(f.committed_value(1), 7);
    }
  }
}

// Neither weaker level waits for a pending write, nor sees it: a read takes
// the committed version at once (serializable MVCC would wait for the older
// writer).
TEST(MvccIsolation, AReadNeitherWaitsForNorSeesAPendingWrite) {
  for (Isolation level : {Isolation::Snapshot, Isolation::ReadCommitted}) {
    SCOPED_TRACE(std::string(name_of(kIsolationNames, level)));
    Fixture<cc::Mvcc> f(isolated(level));
    int64_t v = 0;
    ASSERT_EQ(f.t0->begin(false), Rc::Ok);
    ASSERT_EQ(f.write(*f.t0, 0, 42), Rc::Ok);
    ASSERT_EQ(f.t1->begin(false), Rc::Ok);
    ASSERT_EQ(f.read(*f.t1, 0, v), Rc::Ok);
    EXPECT_EQ(v, 100);
    ASSERT_EQ(f.t1->commit(), Rc::Ok);
    ASSERT_EQ(f.t0->commit(), Rc::Ok);
  }
}

// Read committed reads the newest committed version, even one committed
// after it began; a snapshot does not.
TEST(MvccIsolation, ReadCommittedSeesCommitsAfterItsBegin) {
  for (Isolation level : {Isolation::Snapshot, Isolation::ReadCommitted}) {
    SCOPED_TRACE(std::string(name_of(kIsolationNames, level)));
    Fixture<cc::Mvcc> f(isolated(level));
    int64_t v = 0;
    ASSERT_EQ(f.t0->begin(false), Rc::Ok);
    ASSERT_EQ(f.t1->begin(false), Rc::Ok);
    ASSERT_EQ(f.write(*f.t1, 0, 42), Rc::Ok);
    ASSERT_EQ(f.t1->commit(), Rc::Ok);
    ASSERT_EQ(f.read(*f.t0, 0, v), Rc::Ok);
    EXPECT_EQ(v, level == Isolation::ReadCommitted ? 42 : 100);
    ASSERT_EQ(f.t0->commit(), Rc::Ok);
  }
}

// A row inserted by a transaction that commits after a snapshot began is
// not in it: its version carries the commit timestamp, not the begin.
TEST(MvccIsolation, AnInsertCommittedAfterASnapshotIsNotInIt) {
  Fixture<cc::Mvcc> f(isolated(Isolation::Snapshot));
  int64_t v = 0;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.insert(*f.t0, test::kFixtureRows, 5), Rc::Ok);
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
  EXPECT_EQ(f.read(*f.t1, test::kFixtureRows, v), Rc::Abort);
  f.t1->abort();
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.read(*f.t1, test::kFixtureRows, v), Rc::Ok);
  EXPECT_EQ(v, 5);
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
}

// ============================================================================
// Every optimistic scheme: OCC, SILO and TICTOC
// ============================================================================
//
// All three read without blocking writers and validate the read set at
// commit; they differ on what validation compares (OCC: a start timestamp and
// the row's version; SILO: TIDs; TICTOC: [wts, rts] intervals, which let some
// schedules commit that the others abort), which the scheme sections pin.

template <class CC>
class Optimistic : public ::testing::Test {};
TYPED_TEST_SUITE(Optimistic, test::GtestTypes<test::SchemesWhere<test::optimistic>>, test::SchemeName);

//    T0      | T1      |
//    -------------------
//    BEGIN   |         |
//    R(1)    |         |
//            | BEGIN   |
//            | W(1)    |
//            | COMMIT  |   <- changes row 1
//    W(2)    |         |
//    COMMIT  |         |   <- row 1 changed since T0 read it: abort
// Answers T0's commit.
template <class CC>
Rc commit_after_a_read_row_changed(Fixture<CC>& f) {
  int64_t v = 0;
  EXPECT_EQ(f.t0->begin(false), Rc::Ok);
  EXPECT_EQ(f.read(*f.t0, 1, v), Rc::Ok);
  EXPECT_EQ(v, 101);
  EXPECT_EQ(f.add(*f.t1, 1, 10), Rc::Ok);
  EXPECT_EQ(f.committed_value(1), 111);
  EXPECT_EQ(f.write(*f.t0, 2, 7), Rc::Ok);
  return f.t0->commit();
}

//    ...     |         |
//    ABORT   |         |   releases whatever the commit took on row 2
//            | BEGIN   |
//            | W(1), W(2)
//            | COMMIT  |   <- would spin or abort on a leaked lock
TYPED_TEST(Optimistic, ValidationFailsWhenAReadRowChanged) {
  Fixture<TypeParam> f;
  EXPECT_EQ(commit_after_a_read_row_changed(f), Rc::Abort);
  f.t0->abort();
  EXPECT_EQ(f.committed_value(2), 102) << "a failed validation installed its write";
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.write(*f.t1, 1, 8), Rc::Ok);
  ASSERT_EQ(f.write(*f.t1, 2, 9), Rc::Ok);
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
  EXPECT_EQ(f.committed_value(1), 8);
  EXPECT_EQ(f.committed_value(2), 9);
}

//    T0         | T1           |
//    ---------------------------
//    BEGIN      |              |
//    W(0)=1     |              |
//               | BEGIN        |
//               | W(0)=2       |
//               | COMMIT       |
//    COMMIT     |              |   <- would lose T1's update: Abort
template <class CC>
Rc second_of_two_writers_commits(Fixture<CC>& f) {
  EXPECT_EQ(f.t0->begin(false), Rc::Ok);
  EXPECT_EQ(f.write(*f.t0, 0, 1), Rc::Ok);
  EXPECT_EQ(f.t1->begin(false), Rc::Ok);
  EXPECT_EQ(f.write(*f.t1, 0, 2), Rc::Ok);
  EXPECT_EQ(f.t1->commit(), Rc::Ok);
  return f.t0->commit();
}

TYPED_TEST(Optimistic, SecondOfTwoWritersToARowAborts) {
  Fixture<TypeParam> f;
  EXPECT_EQ(second_of_two_writers_commits(f), Rc::Abort);
  f.t0->abort();
  EXPECT_EQ(f.committed_value(0), 2);
}

// An unchanged read set validates, and reading a row then updating it (an
// upgrade) needs nothing beyond the commit's re-check.
//    T0      | T1      |
//    R(1)    |         |
//            | W(1)    |
//            | COMMIT  |
//    W(1)    |         |   <- upgrade answers Ok ...
//    COMMIT  |         |   <- ... and validation catches T1's write
TYPED_TEST(Optimistic, UpgradeIsRecheckedAtCommit) {
  Fixture<TypeParam> f;
  int64_t v = 0;
  int64_t seen = 0;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.read(*f.t0, 1, v), Rc::Ok);
  ASSERT_EQ(f.write(*f.t0, 1, v + 1), Rc::Ok);  // upgrade
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
  EXPECT_EQ(f.committed_value(1), 102);

  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.read(*f.t0, 1, v), Rc::Ok);
  ASSERT_EQ(f.add(*f.t1, 1, 10), Rc::Ok);
  ASSERT_EQ(f.write(*f.t0, 1, 0, seen), Rc::Ok);
  EXPECT_EQ(seen, 102) << "the upgrade did not keep the copy read";
  EXPECT_EQ(f.t0->commit(), Rc::Abort);
  f.t0->abort();
  EXPECT_EQ(f.committed_value(1), 112);  // T1's write survives
}

// The control for the tests above: reads that nothing changed validate.
//    T0         | T1           |
//    ---------------------------
//               | BEGIN        |
//               | W(0)=42      |
//               | COMMIT       |
//    BEGIN      |              |
//    R(0), W(1) |              |
//               | BEGIN, R(0)  |   a concurrent reader changes nothing
//    COMMIT     |              |   <- Ok
//               | COMMIT       |   <- Ok
TYPED_TEST(Optimistic, ReadsUnchangedSinceTheStartValidate) {
  Fixture<TypeParam> f;
  int64_t v = 0;
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.write(*f.t1, 0, 42), Rc::Ok);
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.read(*f.t0, 0, v), Rc::Ok);
  ASSERT_EQ(f.write(*f.t0, 1, 11), Rc::Ok);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.read(*f.t1, 0, v), Rc::Ok);
  EXPECT_EQ(f.t0->commit(), Rc::Ok);
  EXPECT_EQ(f.t1->commit(), Rc::Ok);
  EXPECT_EQ(f.committed_value(1), 11);
}

// The negative control: with no concurrency control the same schedules
// commit, so the rules above can fail.
TEST(OptimisticControl, NoneCommitsWhatValidationRejects) {
  {
    Fixture<cc::None> f;
    EXPECT_EQ(commit_after_a_read_row_changed(f), Rc::Ok);
  }
  {
    Fixture<cc::None> f;
    EXPECT_EQ(second_of_two_writers_commits(f), Rc::Ok);
  }
}

// ============================================================================
// OCC: Kung & Robinson with parallel per-tuple validation (occ.h)
// ============================================================================

//    T0         | T1           |
//    ---------------------------
//    BEGIN      |              |
//    R(0)       |              |   copies version 0
//    W(1)=5     |              |
//               | BEGIN        |
//               | W(0)=42      |
//               | COMMIT       |
//    COMMIT     |              |   <- row 0 changed since the copy: Abort
//    ABORT      |              |   releases the write latch on row 1
//               | BEGIN        |
//               | W(0), W(1)   |
//               | COMMIT       |   <- would spin forever on a leaked latch
TEST(OccScheme, ReadChangedByACommittedWriterFailsCommitAndAbortReleasesLatches) {
  Fixture<cc::Occ> f;
  int64_t v = 0;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.read(*f.t0, 0, v), Rc::Ok);
  ASSERT_EQ(f.write(*f.t0, 1, 5), Rc::Ok);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.write(*f.t1, 0, 42), Rc::Ok);
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
  EXPECT_EQ(f.t0->commit(), Rc::Abort);
  f.t0->abort();
  EXPECT_EQ(f.committed_value(1), 101) << "a failed validation installed its write";
  for (const uint64_t key : {uint64_t{0}, uint64_t{1}}) {
    ASSERT_EQ(f.t0->row_meta(f.row(key)).latch.load(platform::memory_order_acquire), 0u)
        << "row " << key << " is still latched after abort";
  }
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.write(*f.t1, 0, 8), Rc::Ok);
  ASSERT_EQ(f.write(*f.t1, 1, 9), Rc::Ok);
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
  EXPECT_EQ(f.committed_value(0), 8);
  EXPECT_EQ(f.committed_value(1), 9);
}

//    T0         | T1           |
//    ---------------------------
//    BEGIN      |              |   start_ts(T0)
//               | BEGIN        |
//               | W(0)=42      |
//               | COMMIT       |   wts(0) = T1's validation ts > start_ts(T0)
//    R(0)=42    |              |   the copy matches the row...
//    COMMIT     |              |   <- ...but T1 finished after T0 started: Abort
//    BEGIN(restart)            |   a new start_ts, after T1
//    R(0)=42, COMMIT           |   <- Ok
TEST(OccScheme, ReadOfAVersionCommittedAfterTheStartAborts) {
  Fixture<cc::Occ> f;
  int64_t v = 0;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.write(*f.t1, 0, 42), Rc::Ok);
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
  ASSERT_EQ(f.read(*f.t0, 0, v), Rc::Ok);
  EXPECT_EQ(v, 42);
  EXPECT_GT(f.t0->row_meta(f.row(0)).wts.load(platform::memory_order_acquire), f.t0->meta().start_ts);
  EXPECT_EQ(f.t0->commit(), Rc::Abort);
  f.t0->abort();
  ASSERT_EQ(f.t0->begin(true), Rc::Ok);
  ASSERT_EQ(f.read(*f.t0, 0, v), Rc::Ok);
  EXPECT_EQ(v, 42);
  EXPECT_EQ(f.t0->commit(), Rc::Ok);
}

// With --ts-alloc batch:N timestamps are monotonic only per worker, so a
// writer can validate with a timestamp older than a reader's start: the
// start-time rule misses the change and the version check alone catches it.
//    T0 (W0)            | T1 (W1)                |
//    --------------------------------------------
//                       | BEGIN                  |   W1 takes the batch 1..N
//    BEGIN              |                        |   W0 takes N+1..2N
//    R(0)               |                        |   copies version 0
//                       | W(0)=42, COMMIT        |   wts(0) <= N < start_ts(T0)
//    COMMIT             |                        |   <- changed since the copy: Abort
TEST(OccScheme, ReadChangedSinceTheCopyAbortsEvenWithAnOlderVersion) {
  Config c;
  c.ts_alloc = TsAllocConfig{TsMethod::Batch, 100};
  Fixture<cc::Occ> f(c);
  int64_t v = 0;
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.read(*f.t0, 0, v), Rc::Ok);
  ASSERT_EQ(f.write(*f.t1, 0, 42), Rc::Ok);
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
  ASSERT_LT(f.t0->row_meta(f.row(0)).wts.load(platform::memory_order_acquire), f.t0->meta().start_ts)
      << "the scenario needs a version older than T0's start";
  EXPECT_EQ(f.t0->commit(), Rc::Abort);
  f.t0->abort();
}

// A committed transaction takes two timestamps: one at begin, one at
// validation, and its writes carry the second.
TEST(OccScheme, ValidationTakesASecondTimestamp) {
  Fixture<cc::Occ> f;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  const uint64_t start = f.t0->meta().start_ts.value;
  ASSERT_EQ(f.write(*f.t0, 0, 1), Rc::Ok);
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
  EXPECT_EQ(f.t0->row_meta(f.row(0)).wts.load(platform::memory_order_acquire).value, start + 1);
  EXPECT_EQ(f.probe_ts(), start + 2);

  // Read-only transactions validate too, and interleaved ones each take two.
  //    T0         | T1           |
  //    BEGIN      |              |   s
  //               | BEGIN        |   s+1
  //               | R(0), COMMIT |   s+2
  //    W(1), COMMIT              |   s+3: row 1's version
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  const uint64_t s = f.t0->meta().start_ts.value;
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  int64_t v = 0;
  ASSERT_EQ(f.read(*f.t1, 0, v), Rc::Ok);
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
  ASSERT_EQ(f.write(*f.t0, 1, 2), Rc::Ok);
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
  EXPECT_EQ(f.t0->row_meta(f.row(1)).wts.load(platform::memory_order_acquire).value, s + 3);
  EXPECT_EQ(f.probe_ts(), s + 4);
}

// ============================================================================
// H-STORE: partition locks granted oldest first (hstore.h)
// ============================================================================

Config four_partitions() {
  Config c;
  c.partitions = 4;
  return c;
}

// The scheme reads the partition count once, when it is constructed.
TEST(HstoreScheme, PartitionIdsAreCheckedAgainstTheConfiguredCount) {
  Fixture<cc::Hstore> f(four_partitions());
  f.t0->partitions() = {3};
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
  f.t0->partitions() = {4};
  EXPECT_THROW((void)f.t0->begin(false), std::runtime_error);
}

//    T0 {0,2}   | T1 {1,3}, another thread |
//    ---------------------------------------
//    BEGIN      |                          |
//    W(0)=1     |                          |
//               | BEGIN                    |   <- granted at once
//               | W(1)=2, COMMIT           |
//    COMMIT     |                          |
TEST(HstoreScheme, DisjointPartitionsDoNotWait) {
  Fixture<cc::Hstore> f(four_partitions());
  f.t0->partitions() = {0, 2};
  f.t1->partitions() = {1, 3};
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.write(*f.t0, 0, 1), Rc::Ok);
  Rc begin_rc = Rc::Abort;
  Rc write_rc = Rc::Abort;
  Rc commit_rc = Rc::Abort;
  Rc t0_commit_rc = Rc::Abort;
  const First first = race(
      kLimitMs,
      [&] {
        begin_rc = f.t1->begin(false);
        write_rc = f.write(*f.t1, 1, 2);
        commit_rc = f.t1->commit();
      },
      [&] { t0_commit_rc = f.t0->commit(); });
  EXPECT_EQ(first, First::WaiterReturned) << "T1 waited for partitions it does not share with T0";
  EXPECT_EQ(begin_rc, Rc::Ok);
  EXPECT_EQ(write_rc, Rc::Ok);
  EXPECT_EQ(commit_rc, Rc::Ok);
  EXPECT_EQ(t0_commit_rc, Rc::Ok);
  EXPECT_EQ(f.committed_value(0), 1);
  EXPECT_EQ(f.committed_value(1), 2);
}

//    T0 {1}     | T1 {1}, another thread |
//    -------------------------------------
//    BEGIN      |                        |
//    W(1)=42    |                        |
//               | BEGIN                  |   <- waits for partition 1
//    COMMIT     |                        |
//               |   ... granted          |
//               | R(1)=42                |
TEST(HstoreScheme, SharedPartitionIsGrantedOnlyWhenTheHolderCommits) {
  Fixture<cc::Hstore> f(four_partitions());
  f.t0->partitions() = {1};
  f.t1->partitions() = {1};
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.write(*f.t0, 1, 42), Rc::Ok);
  Rc begin_rc = Rc::Abort;
  Rc commit_rc = Rc::Abort;
  const First first = race(
      kWaitMarginMs, [&] { begin_rc = f.t1->begin(false); }, [&] { commit_rc = f.t0->commit(); });
  EXPECT_EQ(first, First::ReleaseCalled) << "T1 was granted partition 1 while T0 held it";
  ASSERT_EQ(begin_rc, Rc::Ok);
  ASSERT_EQ(commit_rc, Rc::Ok);
  int64_t v = 0;
  ASSERT_EQ(f.read(*f.t1, 1, v), Rc::Ok);
  EXPECT_EQ(v, 42);
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
}

// As above, released by an abort: the waiter is granted, the write is gone.
TEST(HstoreScheme, AbortHandsThePartitionOn) {
  Fixture<cc::Hstore> f(four_partitions());
  f.t0->partitions() = {1, 2};
  f.t1->partitions() = {2};
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.write(*f.t0, 2, 42), Rc::Ok);
  Rc begin_rc = Rc::Abort;
  const First first = race(
      kWaitMarginMs, [&] { begin_rc = f.t1->begin(false); }, [&] { f.t0->abort(); });
  EXPECT_EQ(first, First::ReleaseCalled) << "T1 was granted partition 2 while T0 held it";
  ASSERT_EQ(begin_rc, Rc::Ok);
  int64_t v = 0;
  ASSERT_EQ(f.read(*f.t1, 2, v), Rc::Ok);
  EXPECT_EQ(v, 102);
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
}

// Two waiters on one partition: the older is granted first, whichever queued
// last. The waiters' queue is a stack, so the younger one, queued last, is at
// its head: granting the head would fail this test.
//    T0 {1}      | T1 {1}, thread 1 | T2 {1}, thread 2 |
//    ---------------------------------------------------
//    BEGIN       |                  |                  |
//                | BEGIN (waits)    |                  |
//                |                  | BEGIN (waits)    |
//    COMMIT      |                  |                  |
//                | granted, COMMIT  |                  |   the older of T1, T2
//                |                  | granted, COMMIT  |
TEST(HstoreScheme, ReleaseGrantsTheOldestWaiter) {
  Fixture<cc::Hstore> f(four_partitions(), 3);
  for (auto& t : f.txns) t->partitions() = {1};
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);

  platform::Atomic<uint32_t> events{0};
  platform::Atomic<bool> t1_started{false};
  platform::Atomic<bool> t2_started{false};
  uint32_t release_at = 0;
  uint32_t granted_at[3] = {0, 0, 0};
  Rc rc[3] = {Rc::Abort, Rc::Abort, Rc::Abort};
  platform::run_threads(3, false, [&](uint32_t i) {
    switch (i) {
      case 0:  // the holder: releases once both waiters have had time to queue
        while (!t2_started.load(platform::memory_order_acquire)) platform::yield_thread();
        platform::sleep_ms(kWaitMarginMs);
        release_at = events.fetch_add(1, platform::memory_order_acq_rel);
        rc[0] = f.t0->commit();
        return;
      case 1:
        t1_started.store(true, platform::memory_order_release);
        break;
      case 2:  // starts well after T1, so it is almost surely younger and queued last
        while (!t1_started.load(platform::memory_order_acquire)) platform::yield_thread();
        platform::sleep_ms(kWaitMarginMs / 4);
        t2_started.store(true, platform::memory_order_release);
        break;
    }
    Txn<cc::Hstore>& t = *f.txns[i];
    if (t.begin(false) != Rc::Ok) return;
    granted_at[i] = events.fetch_add(1, platform::memory_order_acq_rel);
    rc[i] = t.commit();
  });
  for (Rc r : rc) ASSERT_EQ(r, Rc::Ok);
  // Which waiter is older is read back, not assumed: the order of the two
  // begins across threads is only likely, and the rule is about timestamps.
  const Timestamp ts1 = f.t1->meta().requests[0].ts;
  const Timestamp ts2 = f.t2->meta().requests[0].ts;
  ASSERT_NE(ts1, ts2);
  const uint32_t older = ts1 < ts2 ? 1 : 2;
  const uint32_t younger = 3 - older;
  EXPECT_LT(release_at, granted_at[older]) << "a waiter was granted while T0 held the partition";
  EXPECT_LT(granted_at[older], granted_at[younger]) << "the younger waiter was granted first";
}

}  // namespace
}  // namespace abyss
