// The rules of the 2PL schemes that lock single rows (Abyss §2.1;
// docs/schemes.md): first the rule they share, typed over the family
// (test::row_locking: NO_WAIT, WAIT_DIE, DL_DETECT, WOUND_WAIT), then what
// each scheme's policy decides on a conflict, each pinned by an explicit
// interleaving of transactions with their own workers. A transaction that
// must wait runs on its own platform thread; the test learns that it has
// queued by looking at the row lock, then releases what it waits for, and
// asserts the order of events. The one duration asserted is a lower bound the
// scheme guarantees by its own clock: a DL_DETECT wait ended by --dl-timeout
// lasted at least that long (and, with a timeout far beyond the test, one
// ended by detection did not).
//
// Timestamps come from one shared TsSource with the default (atomic) method,
// so the transaction that calls begin() first is the older one.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cc/dl_detect/dl_detect.h"
#include "cc/lock/row_lock.h"
#include "cc/no_wait/no_wait.h"
#include "cc/none/none.h"
#include "cc/occ/occ.h"
#include "cc/wait_die/wait_die.h"
#include "cc/wound_wait/wound_wait.h"
#include "common/config.h"
#include "platform/atomic.h"
#include "platform/clock.h"
#include "platform/thread.h"
#include "stats/stats.h"
#include "storage/database.h"
#include "txn/ts_source.h"
#include "txn/txn.h"

#include "scheme_fixture.h"

namespace abyss {
namespace {

using test::await;
using test::First;
using test::Fixture;
using test::kLimitMs;
using test::kWaitMarginMs;
using test::race;

// How many requests (owners and waiters) the lock of `key` holds, counted
// under its latch by a probe that asks to queue and is refused: tells the
// test that a transaction on another thread has queued. Asked only while some
// transaction owns the row, so the exclusive probe is never granted.
template <class CC>
uint32_t requests_on(Fixture<CC>& f, uint64_t key) {
  cc::RowLock& lock = static_cast<typename CC::RowMeta*>(f.db.layout().meta(f.row(key)))->lock;
  cc::LockRequest probe;
  uint32_t n = 0;
  const auto outcome = lock.acquire(probe, cc::LockMode::Exclusive, f.cfg.latch, [&](const cc::RowLock& l) {
    l.for_each_request([&](const cc::LockRequest& /*r*/) { n++; });
    return false;
  });
  if (outcome == cc::RowLock::Outcome::Granted) {
    ADD_FAILURE() << "requests_on(" << key << ") asked of a row no transaction owns";
    lock.release(probe, f.cfg.latch);
  }
  return n;
}

template <class CC>
uint64_t waited_cycles(const Fixture<CC>& f, uint32_t worker) {
  return f.workers[worker]->attempt[static_cast<std::size_t>(TimeCat::Wait)];
}

// DL_DETECT's --dl-timeout in cycles, computed as the scheme computes it.
template <class CC>
uint64_t timeout_cycles(const Fixture<CC>& f) {
  return static_cast<uint64_t>(f.cfg.template settings<cc::DlDetectConfig>().timeout_us * 1000.0 *
                               platform::cycles_per_ns());
}

// ============================================================================
// Every row-locking 2PL scheme
// ============================================================================

// What a conflicting write request on a row another transaction has written
// came to: its answer, whether it returned before the holder committed, and
// the value it read when granted.
struct Conflict {
  Rc rc = Rc::Abort;
  First first = First::WaiterReturned;
  int64_t seen = 0;
  Rc holder_commit = Rc::Abort;
};

//    T0 (older)  | T1 (younger), another thread |
//    --------------------------------------------
//    BEGIN       |                              |
//                | BEGIN                        |
//    W(0)=42     |                              |
//                | W(0)                         |   <- refused, or waits
//    COMMIT      |                              |
//                |   ... if granted, reads 42   |
// The holder commits once the request returns or after kWaitMarginMs. A
// policy decides whether the requester aborts (NO_WAIT, WAIT_DIE: younger
// dies) or waits (WOUND_WAIT; DL_DETECT until its timeout); no policy grants
// the lock while the holder has it.
template <class CC>
Conflict write_on_a_written_row(Fixture<CC>& f) {
  Conflict c;
  EXPECT_EQ(f.t0->begin(false), Rc::Ok);
  EXPECT_EQ(f.t1->begin(false), Rc::Ok);
  EXPECT_EQ(f.write(*f.t0, 0, 42), Rc::Ok);
  c.first = race(
      kWaitMarginMs, [&] { c.rc = f.write(*f.t1, 0, 43, c.seen); }, [&] { c.holder_commit = f.t0->commit(); });
  return c;
}

// The rule: the request was refused, or granted only after the commit and
// with the committed value.
bool isolated(const Conflict& c) {
  if (c.rc == Rc::Abort) return true;
  return c.rc == Rc::Ok && c.first == First::ReleaseCalled && c.seen == 42;
}

template <class CC>
class RowLocking : public ::testing::Test {};
TYPED_TEST_SUITE(RowLocking, test::GtestTypes<test::SchemesWhere<test::row_locking>>, test::SchemeName);

TYPED_TEST(RowLocking, ConflictingWriteIsNeverGrantedWhileTheHolderHoldsTheRow) {
  Fixture<TypeParam> f;
  const Conflict c = write_on_a_written_row(f);
  ASSERT_EQ(c.holder_commit, Rc::Ok);
  EXPECT_TRUE(isolated(c)) << "T1 was granted row 0 while T0 held it";
  if (c.rc == Rc::Abort) {
    f.t1->abort();
    ASSERT_EQ(f.t1->begin(true), Rc::Ok);
    int64_t seen = 0;
    ASSERT_EQ(f.write(*f.t1, 0, 43, seen), Rc::Ok) << "the refused request was left behind";
    EXPECT_EQ(seen, 42);
  }
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
  EXPECT_EQ(f.committed_value(0), 43);
}

// The negative control: the rule fails for schemes outside the family, which
// grant the write at once (none: no control; OCC: checks at commit).
TEST(RowLockingControl, SchemesWithoutRowLocksFailTheRule) {
  Fixture<cc::None> none;
  Conflict c = write_on_a_written_row(none);
  EXPECT_EQ(c.first, First::WaiterReturned);
  EXPECT_FALSE(isolated(c)) << "none kept the conflicting writer out";
  Fixture<cc::Occ> occ;
  c = write_on_a_written_row(occ);
  EXPECT_FALSE(isolated(c)) << "occ kept the conflicting writer out";
  occ.t1->abort();
}

// ============================================================================
// NO_WAIT (no_wait.h)
// ============================================================================

//    T0     | T1     |
//    -----------------
//    BEGIN  |        |
//    W(1)   |        |
//           | BEGIN  |
//           | R(1)   |   <- NO_WAIT: conflict, T1 aborts at once
//    COMMIT |        |
//           | BEGIN  |   (restart)
//           | R(1)   |   <- sees T0's write
TEST(NoWaitScheme, ConflictingReadAbortsThenSeesTheCommittedWrite) {
  Fixture<cc::NoWait> f;
  int64_t v = 0;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.write(*f.t0, 1, 42), Rc::Ok);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  EXPECT_EQ(f.read(*f.t1, 1, v), Rc::Abort);
  f.t1->abort();
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
  ASSERT_EQ(f.t1->begin(true), Rc::Ok);
  ASSERT_EQ(f.read(*f.t1, 1, v), Rc::Ok);
  EXPECT_EQ(v, 42);
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
}

TEST(NoWaitScheme, SharedReadersThenUpgradeOnlyWhenAlone) {
  Fixture<cc::NoWait> f;
  int64_t v = 0;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.read(*f.t0, 0, v), Rc::Ok);
  ASSERT_EQ(f.read(*f.t1, 0, v), Rc::Ok);
  EXPECT_EQ(f.write(*f.t0, 0, 1), Rc::Abort);  // T1 also reads it
  f.t0->abort();
  ASSERT_EQ(f.write(*f.t1, 0, 9), Rc::Ok);  // T1 is now the only reader
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
  EXPECT_EQ(f.committed_value(0), 9);
}

// ============================================================================
// WAIT_DIE (wait_die.h)
// ============================================================================

//    T0 (older) | T1 (younger) |
//    ---------------------------
//    W(0)       |              |
//               | W(0)         |   <- younger than the holder: dies
TEST(WaitDieScheme, YoungerRequesterDies) {
  Fixture<cc::WaitDie> f;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);  // takes the older timestamp
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.write(*f.t0, 0, 1), Rc::Ok);
  EXPECT_EQ(f.write(*f.t1, 0, 2), Rc::Abort);
  f.t1->abort();
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
  EXPECT_EQ(f.committed_value(0), 1);
}

TEST(WaitDieScheme, RestartKeepsTheTimestamp) {
  Fixture<cc::WaitDie> f;
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  const Timestamp first = f.t1->meta().ts;
  f.t1->abort();
  ASSERT_EQ(f.t1->begin(true), Rc::Ok);
  EXPECT_EQ(f.t1->meta().ts, first);
  f.t1->abort();
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  EXPECT_GT(f.t1->meta().ts, first);
  f.t1->abort();
}

//    T0 (older), another thread | T1 (younger) |
//    ------------------------------------------
//    BEGIN                      |              |
//                               | BEGIN        |
//                               | W(0)=42      |
//    W(0)=43                    |              |   <- older than the holder: waits
//                               | COMMIT       |
//      ... granted, reads 42    |              |
//    COMMIT                     |              |
TEST(WaitDieScheme, OlderRequesterWaitsForAYoungerHolderUntilItCommits) {
  Fixture<cc::WaitDie> f;
  Rc rc = Rc::Abort;
  Rc commit_rc = Rc::Abort;
  int64_t seen = 0;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_LT(f.t0->meta().ts, f.t1->meta().ts);
  ASSERT_EQ(f.write(*f.t1, 0, 42), Rc::Ok);
  const First first = race(
      kLimitMs, [&] { rc = f.write(*f.t0, 0, 43, seen); }, [&] { return requests_on(f, 0) == 2; },
      [&] { commit_rc = f.t1->commit(); });
  EXPECT_EQ(first, First::ReleaseCalled) << "the older requester returned while the younger held the lock";
  ASSERT_EQ(commit_rc, Rc::Ok);
  ASSERT_EQ(rc, Rc::Ok);
  EXPECT_EQ(seen, 42);
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
  EXPECT_EQ(f.committed_value(0), 43);
}

// A requester must be older than every owner and every waiter to wait.
//    T0 (oldest)  | T1 (middle)  | T2 (youngest) |
//    ---------------------------------------------
//    BEGIN        | BEGIN        | BEGIN         |
//                 |              | W(0)=42       |
//    W(0): waits  |              |               |
//                 | W(0)         |               |   <- older than the owner T2, younger
//                 | ABORT        |               |      than the waiter T0: dies at once
//                 |              | COMMIT        |
//    granted      |              |               |
//    COMMIT       |              |               |
TEST(WaitDieScheme, RequesterYoungerThanAQueuedWaiterDies) {
  Fixture<cc::WaitDie> f(Config{}, 3);
  Rc rc0 = Rc::Abort;
  Rc rc1 = Rc::Ok;
  Rc commit_rc = Rc::Abort;
  bool t1_returned_first = false;
  platform::Atomic<bool> t1_returned{false};
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.t2->begin(false), Rc::Ok);
  ASSERT_EQ(f.write(*f.t2, 0, 42), Rc::Ok);
  platform::run_threads(3, false, [&](uint32_t i) {
    if (i == 0) {
      rc0 = f.write(*f.t0, 0, 7);
      if (rc0 == Rc::Ok) {
        (void)f.t0->commit();
      } else {
        f.t0->abort();
      }
    } else if (i == 1) {
      await([&] { return requests_on(f, 0) == 2; });
      rc1 = f.write(*f.t1, 0, 8);
      t1_returned.store(true, platform::memory_order_release);
      if (rc1 == Rc::Ok) {
        (void)f.t1->commit();
      } else {
        f.t1->abort();
      }
    } else {
      await([&] { return t1_returned.load(platform::memory_order_acquire); });
      t1_returned_first = t1_returned.load(platform::memory_order_acquire);
      commit_rc = f.t2->commit();
    }
  });
  EXPECT_EQ(rc1, Rc::Abort) << "T1 queued behind the older waiter T0";
  EXPECT_TRUE(t1_returned_first) << "T1 waited for the owner T2";
  ASSERT_EQ(commit_rc, Rc::Ok);
  ASSERT_EQ(rc0, Rc::Ok);
  EXPECT_EQ(f.committed_value(0), 7);
}

// A restarted transaction keeps its age, so it may wait where a new
// timestamp would make it die (the abort's cause does not matter here; the
// runner restarts every aborted attempt alike).
//    T0, later another thread | T1          |
//    ---------------------------------------
//    BEGIN                    |             |
//    ABORT                    |             |
//                             | BEGIN       |   younger than T0's first attempt
//                             | W(1)=42     |
//    BEGIN(restart)           |             |
//    W(1)=43                  |             |   <- still older than T1: waits
//                             | COMMIT      |
//      ... granted, reads 42  |             |
//    COMMIT                   |             |
TEST(WaitDieScheme, RestartedTransactionKeepsItsAgeAndWaitsForAYoungerHolder) {
  Fixture<cc::WaitDie> f;
  Rc rc = Rc::Abort;
  Rc commit_rc = Rc::Abort;
  int64_t seen = 0;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  const Timestamp first_ts = f.t0->meta().ts;
  f.t0->abort();
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.write(*f.t1, 1, 42), Rc::Ok);
  ASSERT_EQ(f.t0->begin(true), Rc::Ok);
  EXPECT_EQ(f.t0->meta().ts, first_ts) << "the restart took a new timestamp";
  const First first = race(
      kLimitMs, [&] { rc = f.write(*f.t0, 1, 43, seen); }, [&] { return requests_on(f, 1) == 2; },
      [&] { commit_rc = f.t1->commit(); });
  EXPECT_EQ(first, First::ReleaseCalled) << "the restarted transaction did not wait for the younger holder";
  ASSERT_EQ(commit_rc, Rc::Ok);
  ASSERT_EQ(rc, Rc::Ok);
  EXPECT_EQ(seen, 42);
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
  EXPECT_EQ(f.committed_value(1), 43);
}

// ============================================================================
// WOUND_WAIT (wound_wait.h)
// ============================================================================

//    T0 (older), another thread | T1 (younger) |
//    ------------------------------------------
//    BEGIN                      |              |
//                               | BEGIN        |
//                               | W(0)=42      |
//    W(0): wounds T1, waits     |              |
//                               | R(1)         |   <- wounded: aborts
//                               | ABORT        |   releases row 0
//      ... granted, reads 100   |              |
//    COMMIT                     |              |
//                               | BEGIN(restart)   the wound is healed
//                               | R(0)         |   <- Ok
TEST(WoundWaitScheme, OlderRequesterWoundsAYoungerHolderWhichAbortsAtItsNextAccess) {
  Fixture<cc::WoundWait> f;
  Rc rc = Rc::Abort;
  Rc wounded_rc = Rc::Ok;
  int64_t seen = 0;
  int64_t v = 0;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.write(*f.t1, 0, 42), Rc::Ok);
  const First first = race(
      kLimitMs, [&] { rc = f.write(*f.t0, 0, 7, seen); }, [&] { return requests_on(f, 0) == 2; },
      [&] {
        wounded_rc = f.read(*f.t1, 1, v);
        f.t1->abort();
      });
  EXPECT_EQ(first, First::ReleaseCalled) << "the older requester returned while the younger held the lock";
  EXPECT_EQ(wounded_rc, Rc::Abort) << "the wounded holder's next access went on";
  ASSERT_EQ(rc, Rc::Ok);
  EXPECT_EQ(seen, 100) << "T1's aborted write leaked";
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
  EXPECT_EQ(f.committed_value(0), 7);
  ASSERT_EQ(f.t1->begin(true), Rc::Ok);
  ASSERT_EQ(f.read(*f.t1, 0, v), Rc::Ok) << "the wound outlived the restart";
  EXPECT_EQ(v, 7);
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
}

// A wound is noticed at the next access or while waiting, not at commit: a
// wounded transaction that has done all its accesses commits and releases.
//    T0 (older), another thread | T1 (younger) |
//    ------------------------------------------
//                               | W(0)=42      |
//    W(0)=43: wounds T1, waits  |              |
//                               | COMMIT       |   <- Ok
//      ... granted, reads 42    |              |
//    COMMIT                     |              |
TEST(WoundWaitScheme, WoundedHolderWithNoAccessLeftStillCommits) {
  Fixture<cc::WoundWait> f;
  Rc rc = Rc::Abort;
  Rc commit_rc = Rc::Abort;
  int64_t seen = 0;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.write(*f.t1, 0, 42), Rc::Ok);
  const First first = race(
      kLimitMs, [&] { rc = f.write(*f.t0, 0, 43, seen); }, [&] { return requests_on(f, 0) == 2; },
      [&] { commit_rc = f.t1->commit(); });
  EXPECT_EQ(first, First::ReleaseCalled) << "the older requester returned while the younger held the lock";
  EXPECT_EQ(commit_rc, Rc::Ok);
  ASSERT_EQ(rc, Rc::Ok);
  EXPECT_EQ(seen, 42);
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
  EXPECT_EQ(f.committed_value(0), 43);
}

//    T0 (older) | T1 (younger), another thread |
//    -------------------------------------------
//    BEGIN      |                              |
//               | BEGIN                        |
//    W(0)=42    |                              |
//               | W(0)=43                      |   <- younger than the holder: waits
//    R(1)       |                              |   <- not wounded: Ok
//    COMMIT     |                              |
//               |   ... granted, reads 42      |
TEST(WoundWaitScheme, YoungerRequesterWaitsForAnOlderHolderWithoutWoundingIt) {
  Fixture<cc::WoundWait> f;
  Rc rc = Rc::Abort;
  Rc holder_rc = Rc::Abort;
  Rc commit_rc = Rc::Abort;
  int64_t seen = 0;
  int64_t v = 0;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.write(*f.t0, 0, 42), Rc::Ok);
  const First first = race(
      kLimitMs,
      [&] {
        rc = f.write(*f.t1, 0, 43, seen);
        if (rc != Rc::Ok) f.t1->abort();
      },
      [&] { return requests_on(f, 0) == 2; },
      [&] {
        holder_rc = f.read(*f.t0, 1, v);
        if (holder_rc == Rc::Ok) {
          commit_rc = f.t0->commit();
        } else {
          f.t0->abort();
        }
      });
  EXPECT_EQ(first, First::ReleaseCalled) << "the younger requester returned while the older held the lock";
  EXPECT_EQ(holder_rc, Rc::Ok) << "the younger requester wounded the older holder";
  EXPECT_EQ(commit_rc, Rc::Ok);
  ASSERT_EQ(rc, Rc::Ok);
  EXPECT_EQ(seen, 42);
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
  EXPECT_EQ(f.committed_value(0), 43);
}

// A would-be deadlock: T2 waits for T1 while holding a row the older T0
// wants. T0 wounds T2, which notices while it waits, aborts and lets T0 in,
// before T1 releases anything.
//    T0 (oldest)    | T1 (middle) | T2 (youngest)   |
//    -------------------------------------------------
//    BEGIN          | BEGIN       | BEGIN           |
//                   | W(0)        |                 |
//                   |             | W(1)            |
//                   |             | W(0): waits     |
//    W(1): wounds T2, waits       |                 |
//                   |             |   <- aborts while waiting
//                   |             | ABORT           |   releases row 1
//    granted        |             |                 |
//    COMMIT         |             |                 |
//                   | COMMIT      |                 |
TEST(WoundWaitScheme, WoundedWaiterAbortsWhileItWaits) {
  Fixture<cc::WoundWait> f(Config{}, 3);
  Rc rc0 = Rc::Abort;
  Rc rc2 = Rc::Ok;
  Rc commit_rc = Rc::Abort;
  bool t2_returned_first = false;
  platform::Atomic<bool> t2_returned{false};
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.t2->begin(false), Rc::Ok);
  ASSERT_EQ(f.write(*f.t1, 0, 10), Rc::Ok);
  ASSERT_EQ(f.write(*f.t2, 1, 21), Rc::Ok);
  platform::run_threads(3, false, [&](uint32_t i) {
    if (i == 0) {
      rc2 = f.write(*f.t2, 0, 20);
      t2_returned.store(true, platform::memory_order_release);
      if (rc2 == Rc::Ok) {
        (void)f.t2->commit();
      } else {
        f.t2->abort();
      }
    } else if (i == 1) {
      await([&] { return t2_returned.load(platform::memory_order_acquire) || requests_on(f, 0) == 2; });
      rc0 = f.write(*f.t0, 1, 1);
      if (rc0 == Rc::Ok) {
        (void)f.t0->commit();
      } else {
        f.t0->abort();
      }
    } else {
      await([&] { return t2_returned.load(platform::memory_order_acquire); });
      t2_returned_first = t2_returned.load(platform::memory_order_acquire);
      commit_rc = f.t1->commit();
    }
  });
  EXPECT_EQ(rc2, Rc::Abort) << "the wounded waiter was granted";
  EXPECT_TRUE(t2_returned_first) << "the wounded waiter kept waiting for T1";
  ASSERT_EQ(rc0, Rc::Ok);
  ASSERT_EQ(commit_rc, Rc::Ok);
  EXPECT_EQ(f.committed_value(0), 10);
  EXPECT_EQ(f.committed_value(1), 1);
}

// ============================================================================
// DL_DETECT (dl_detect.h)
// ============================================================================

// With detection off only --dl-timeout ends a wait, whatever the ages.
//    T0 (older), another thread | T1 (younger) |
//    ------------------------------------------
//                               | W(0)         |
//    W(0)                       |              |   <- waits for the timeout, then aborts
//    ABORT                      |              |   drops its queued request
//                               | COMMIT       |
//    BEGIN                      |              |
//    W(0)                       |              |   <- granted at once
TEST(DlDetectScheme, WaiterAbortsAfterTheTimeoutWithDetectionOff) {
  Config cfg;
  cfg.settings<cc::DlDetectConfig>().detect = false;
  cfg.settings<cc::DlDetectConfig>().timeout_us = 1000;
  Fixture<cc::DlDetect> f(cfg);
  Rc rc = Rc::Ok;
  Rc commit_rc = Rc::Abort;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.write(*f.t1, 0, 42), Rc::Ok);
  const First first = race(
      kLimitMs,
      [&] {
        rc = f.write(*f.t0, 0, 7);
        f.t0->abort();
      },
      [] { return false; }, [&] { commit_rc = f.t1->commit(); });
  EXPECT_EQ(first, First::WaiterReturned) << "the waiter outlived the timeout";
  EXPECT_EQ(rc, Rc::Abort);
  EXPECT_GE(waited_cycles(f, 0), timeout_cycles(f)) << "aborted before the timeout";
  ASSERT_EQ(commit_rc, Rc::Ok);
  ASSERT_EQ(f.t0->begin(true), Rc::Ok);
  ASSERT_EQ(f.write(*f.t0, 0, 7), Rc::Ok) << "the abandoned request was left in the queue";
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
  EXPECT_EQ(f.committed_value(0), 7);
}

// With detection off a deadlock lasts until a waiter's timeout (Abyss Fig. 4
// ran so): whichever aborts has waited the full --dl-timeout; the other, if
// its own timeout has not fired meanwhile, is granted and commits.
//    T0, thread 0 | T1, thread 1 |
//    -----------------------------
//    W(0)         |              |
//                 | W(1)         |
//    W(1): waits  | W(0): waits  |   <- a cycle, left to the timeout
TEST(DlDetectScheme, DeadlockWithDetectionOffEndsOnlyByTheTimeout) {
  Config cfg;
  cfg.settings<cc::DlDetectConfig>().detect = false;
  cfg.settings<cc::DlDetectConfig>().timeout_us = 50'000;  // long enough that both threads queue before it fires
  Fixture<cc::DlDetect> f(cfg);
  Rc rc[2] = {Rc::Ok, Rc::Ok};
  Rc commit_rc[2] = {Rc::Ok, Rc::Ok};
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.write(*f.t0, 0, 1), Rc::Ok);
  ASSERT_EQ(f.write(*f.t1, 1, 2), Rc::Ok);
  platform::run_threads(2, false, [&](uint32_t i) {
    Txn<cc::DlDetect>& t = *f.txns[i];
    rc[i] = f.write(t, 1 - i, 10 + i);  // the row the other holds
    if (rc[i] == Rc::Ok) {
      commit_rc[i] = t.commit();
    } else {
      t.abort();
    }
  });
  EXPECT_TRUE(rc[0] == Rc::Abort || rc[1] == Rc::Abort) << "both were granted a row the other held";
  for (uint32_t i = 0; i < 2; i++) {
    if (rc[i] == Rc::Abort) {
      EXPECT_GE(waited_cycles(f, i), timeout_cycles(f)) << "T" << i << " aborted before its timeout";
    } else {
      EXPECT_EQ(commit_rc[i], Rc::Ok);
    }
  }
}

// --dl-timeout 0 never waits (NO_WAIT's behaviour): the request is refused,
// never queued.
TEST(DlDetectScheme, ZeroTimeoutAbortsWithoutQueueing) {
  Config cfg;
  cfg.settings<cc::DlDetectConfig>().timeout_us = 0;
  Fixture<cc::DlDetect> f(cfg);
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.write(*f.t1, 0, 42), Rc::Ok);
  EXPECT_EQ(f.write(*f.t0, 0, 7), Rc::Abort);
  EXPECT_EQ(requests_on(f, 0), 1u) << "the refused request was queued";
  EXPECT_EQ(waited_cycles(f, 0), 0u);
  f.t0->abort();
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
  EXPECT_EQ(f.committed_value(0), 42);
}

// Each holds rows the other wants; the timeout is far beyond the test, so
// only the waits-for graph can end it, with the transaction holding the
// fewest locks on the cycle as the victim (DBx1000's choice), here the
// earlier one.
//    T0 (earlier), thread 0 | T1 (later), thread 1 |
//    -----------------------------------------------
//    W(0)                   |                      |
//                           | W(1), W(2)           |
//    W(1): waits            | W(0): waits          |   <- a cycle
//      ... aborts (victim)  |                      |
//    ABORT                  |                      |   releases row 0
//                           |   ... granted        |
//                           | COMMIT               |
TEST(DlDetectScheme, DeadlockAbortsTheOneHoldingFewestLocks) {
  Config cfg;
  cfg.settings<cc::DlDetectConfig>().detect = true;
  cfg.settings<cc::DlDetectConfig>().timeout_us = 10'000'000;
  Fixture<cc::DlDetect> f(cfg);
  Rc rc0 = Rc::Ok;
  Rc rc1 = Rc::Abort;
  Rc commit_rc = Rc::Abort;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_LT(f.t0->meta().ts, f.t1->meta().ts);
  ASSERT_EQ(f.write(*f.t0, 0, 1), Rc::Ok);
  ASSERT_EQ(f.write(*f.t1, 1, 2), Rc::Ok);
  ASSERT_EQ(f.write(*f.t1, 2, 3), Rc::Ok);
  platform::run_threads(2, false, [&](uint32_t i) {
    if (i == 0) {
      rc0 = f.write(*f.t0, 1, 10);
      if (rc0 == Rc::Ok) {
        (void)f.t0->commit();
      } else {
        f.t0->abort();
      }
    } else {
      rc1 = f.write(*f.t1, 0, 20);
      if (rc1 == Rc::Ok) {
        commit_rc = f.t1->commit();
      } else {
        f.t1->abort();
      }
    }
  });
  EXPECT_EQ(rc0, Rc::Abort) << "the transaction holding fewer locks was not the victim";
  EXPECT_LT(waited_cycles(f, 0), timeout_cycles(f)) << "the timeout, not detection, ended the deadlock";
  ASSERT_EQ(rc1, Rc::Ok);
  ASSERT_EQ(commit_rc, Rc::Ok);
  EXPECT_EQ(f.committed_value(0), 20);
  EXPECT_EQ(f.committed_value(1), 2);
}

// Ids come from each worker's own count: distinct across workers, rising
// within one, and no shared counter (DBx1000's txn ids).
TEST(DlDetectScheme, IdsAreEachWorkersOwn) {
  Fixture<cc::DlDetect> f(Config{});
  std::vector<uint64_t> ids;
  for (int k = 0; k < 3; k++) {
    ASSERT_EQ(f.t0->begin(false), Rc::Ok);
    ids.push_back(f.t0->meta().ts.value);
    f.t0->abort();
    ASSERT_EQ(f.t1->begin(false), Rc::Ok);
    ids.push_back(f.t1->meta().ts.value);
    f.t1->abort();
  }
  EXPECT_EQ(ids, (std::vector<uint64_t>{1, 2, 3, 4, 5, 6}));
}

}  // namespace
}  // namespace abyss
