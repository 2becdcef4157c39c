// VLL's own rules (Ren et al., VLDB 2012): each row's lock is two counters,
// CX and CS; a restarted transaction declares the rows its aborted attempt
// reached and counts itself into all of them at once as it joins the global
// queue, and a blocked one runs once it is the queue's head; a first
// attempt counts itself into each row as it reaches it and aborts at a
// conflict. The rule it shares with the row-locking schemes (no conflicting
// write is granted while another holds the row) is typed over that family
// in lock_schemes_test.cc.
#include "cc/vll/vll.h"

#include <gtest/gtest.h>

#include <cstdint>

#include "common/config.h"
#include "common/types.h"
#include "txn/txn.h"

#include "scheme_fixture.h"

namespace abyss {
namespace {

using cc::Vll;
using Fixture = test::Fixture<Vll>;
using test::First;
using test::kWaitMarginMs;
using test::race;

constexpr uint64_t kX = Vll::kExclusive;

// The row's counters: CX * kX + CS.
uint64_t counts(Fixture& f, uint64_t key) { return f.meta(key).word.load(platform::memory_order_acquire); }

//    T0         | T1 (first attempt)  |
//    ----------------------------------
//    W(1) R(2)  |                     |   <- CX(1) = 1, CS(2) = 1
//               | R(2)                |   <- shared: CS(2) = 2
//               | R(1)                |   <- CX(1) = 1: aborts, lock_conflict
//    COMMIT     |                     |   <- every count back to 0
TEST(Vll, AFirstAttemptCountsItselfIntoEachRowAsItGoesAndAbortsAtAConflict) {
  Fixture f;
  int64_t v = 0;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.write(*f.t0, 1, 42), Rc::Ok);
  ASSERT_EQ(f.read(*f.t0, 2, v), Rc::Ok);
  EXPECT_EQ(counts(f, 1), kX);
  EXPECT_EQ(counts(f, 2), 1u);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok) << "a first attempt declares nothing and never waits";
  ASSERT_EQ(f.read(*f.t1, 2, v), Rc::Ok);
  EXPECT_EQ(counts(f, 2), 2u);
  EXPECT_EQ(f.read(*f.t1, 1, v), Rc::Abort) << "a read was granted on a row counted exclusively";
  EXPECT_EQ(f.t1->abort_cause(), AbortCause::LockConflict);
  f.t1->abort();
  EXPECT_EQ(counts(f, 2), 1u) << "the abort left its count behind";
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
  EXPECT_EQ(counts(f, 1), 0u);
  EXPECT_EQ(counts(f, 2), 0u);
}

//    T0         | T1, another thread          |
//    ------------------------------------------
//    W(1)=42    |                             |
//               | R(2) R(1): aborts           |
//               | restart: declares 1 and 2,  |
//               |   blocked behind T0         |   <- counted in at once: CS(1) = CS(2) = 1
//    COMMIT     |                             |
//               |   ... then runs: R(1) = 42  |
TEST(Vll, ARestartDeclaresWhatItsAttemptReachedAndABlockedOneWaitsForTheHead) {
  Fixture f;
  int64_t v = 0;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.write(*f.t0, 1, 42), Rc::Ok);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.read(*f.t1, 2, v), Rc::Ok);
  ASSERT_EQ(f.read(*f.t1, 1, v), Rc::Abort);
  f.t1->abort();
  Rc begun = Rc::Abort;
  Rc committed = Rc::Abort;
  const First first = race(
      kWaitMarginMs, [&] { begun = f.t1->begin(true); }, [&] { return counts(f, 1) == kX + 1 && counts(f, 2) == 1; },
      [&] { committed = f.t0->commit(); });
  EXPECT_EQ(first, First::ReleaseCalled) << "a blocked restart ran while an older holder of its row ran";
  ASSERT_EQ(committed, Rc::Ok);
  ASSERT_EQ(begun, Rc::Ok);
  EXPECT_EQ(counts(f, 1), 1u) << "the restart did not declare the row it aborted on";
  EXPECT_EQ(counts(f, 2), 1u) << "the restart did not declare the row its attempt read";
  ASSERT_EQ(f.read(*f.t1, 1, v), Rc::Ok);
  EXPECT_EQ(v, 42);
  EXPECT_EQ(counts(f, 1), 1u) << "a declared row was counted again at its access";
  ASSERT_EQ(f.read(*f.t1, 3, v), Rc::Ok);
  EXPECT_EQ(counts(f, 3), 1u) << "a row outside what was declared is counted at its access";
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
  EXPECT_EQ(counts(f, 1), 0u);
  EXPECT_EQ(counts(f, 2), 0u);
  EXPECT_EQ(counts(f, 3), 0u);
}

//    T0         | T1, another thread            | T2 (first attempt) |
//    ------------------------------------------------------------------
//    W(1)       |                               |                    |
//               | R(3) W(1): aborts             |                    |
//               | restart: declares 3, 1;       |                    |
//               |   blocked                     |                    |
//               |                               | W(3): aborts       |   <- T1's declared count
//    COMMIT     |   ... then runs               |                    |
TEST(Vll, ABlockedTransactionsCountsKeepAYoungerOneOffItsRows) {
  Fixture f(Config{}, 3);
  int64_t v = 0;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.write(*f.t0, 1, 42), Rc::Ok);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.read(*f.t1, 3, v), Rc::Ok);
  ASSERT_EQ(f.write(*f.t1, 1, 7), Rc::Abort);
  f.t1->abort();
  Rc begun = Rc::Abort;
  Rc younger = Rc::Ok;
  AbortCause cause = AbortCause::Unnamed;
  const First first = race(
      kWaitMarginMs, [&] { begun = f.t1->begin(true); }, [&] { return counts(f, 1) == 2 * kX && counts(f, 3) == 1; },
      [&] {
        EXPECT_EQ(f.t2->begin(false), Rc::Ok);
        younger = f.write(*f.t2, 3, 9);
        cause = f.t2->abort_cause();
        f.t2->abort();
        EXPECT_EQ(f.t0->commit(), Rc::Ok);
      });
  EXPECT_EQ(first, First::ReleaseCalled);
  EXPECT_EQ(younger, Rc::Abort) << "a younger write was granted on a row a blocked transaction declared";
  EXPECT_EQ(cause, AbortCause::LockConflict);
  ASSERT_EQ(begun, Rc::Ok);
  ASSERT_EQ(f.write(*f.t1, 1, 7), Rc::Ok);
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
  EXPECT_EQ(f.committed_value(1), 7);
  EXPECT_EQ(f.committed_value(3), 103);
  EXPECT_EQ(counts(f, 1), 0u);
  EXPECT_EQ(counts(f, 3), 0u);
}

// A read that could not become a write (another reader counted on the row)
// is declared as a write by the restart, which then writes without asking.
TEST(Vll, AnUpgradeThatFailedIsDeclaredAsAWrite) {
  Fixture f;
  int64_t v = 0;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.read(*f.t0, 1, v), Rc::Ok);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.read(*f.t1, 1, v), Rc::Ok);
  EXPECT_EQ(f.write(*f.t1, 1, 7), Rc::Abort) << "a read became a write beside another reader";
  EXPECT_EQ(f.t1->abort_cause(), AbortCause::LockConflict);
  f.t1->abort();
  EXPECT_EQ(counts(f, 1), 1u);
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
  ASSERT_EQ(f.t1->begin(true), Rc::Ok);
  EXPECT_EQ(counts(f, 1), kX) << "the restart did not declare the row as a write";
  ASSERT_EQ(f.read(*f.t1, 1, v), Rc::Ok);
  ASSERT_EQ(f.write(*f.t1, 1, 7), Rc::Ok);
  EXPECT_EQ(counts(f, 1), kX);
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
  EXPECT_EQ(f.committed_value(1), 7);
  EXPECT_EQ(counts(f, 1), 0u);
}

// A transaction that begins afresh declares nothing, whatever an earlier
// one aborted on.
TEST(Vll, ANewTransactionDeclaresNothing) {
  Fixture f;
  int64_t v = 0;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.write(*f.t0, 1, 42), Rc::Ok);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.read(*f.t1, 1, v), Rc::Abort);
  f.t1->abort();
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  EXPECT_EQ(counts(f, 1), 0u);
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
}

}  // namespace
}  // namespace abyss
