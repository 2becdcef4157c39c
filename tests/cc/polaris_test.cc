// POLARIS's own rules (Ye et al., SIGMOD 2023): reservations by priority, a
// lower priority giving way at its write and at its commit, and the
// abort-aware priority. The rules it shares with SILO, OCC and TICTOC are
// typed over the optimistic family in to_schemes_test.cc.
//
// A transaction's priority is set here through its restarts: with
// --polaris-abort-threshold 0 and --polaris-inc-every 1, the k-th restart
// (begin(true)) runs at priority k.
#include "cc/polaris/polaris.h"

#include <gtest/gtest.h>

#include <cstdint>

#include "common/config.h"
#include "common/types.h"
#include "platform/atomic.h"
#include "txn/txn.h"

#include "scheme_fixture.h"

namespace abyss {
namespace {

using cc::Polaris;
using Fixture = test::Fixture<Polaris>;

Config rising() {
  Config c;
  c.settings<cc::PolarisConfig>().abort_threshold = 0;
  c.settings<cc::PolarisConfig>().inc_every = 1;
  return c;
}

// Begins `t` at priority `p` (with rising()).
void begin_at(Fixture& f, Txn<Polaris>& t, uint32_t p) {
  ASSERT_EQ(t.begin(false), Rc::Ok);
  for (uint32_t i = 0; i < p; i++) ASSERT_EQ(t.begin(true), Rc::Ok);
  ASSERT_EQ(f.cc.priority_of(t), p);
}

uint64_t word(Fixture& f, uint64_t key) { return f.meta(key).word.load(platform::memory_order_acquire); }

// The opening of the schedules of a lower commit under a reservation: T1, at
// priority 0, writes row 1 (50, in its copy); then T0, at priority 2, reads
// row 1 and so reserves it.
void reserve_over_a_lower_write(Fixture& f) {
  int64_t v = 0;
  begin_at(f, *f.t1, 0);
  ASSERT_EQ(f.write(*f.t1, 1, 50), Rc::Ok);
  begin_at(f, *f.t0, 2);
  ASSERT_EQ(f.read(*f.t0, 1, v), Rc::Ok);
}

TEST(Polaris, TheWordsFieldsAreIndependentAndAGenerationWraps) {
  uint64_t w = Polaris::kVersionStep * 5;
  w = Polaris::with_field(w, Polaris::kPrioShift, Polaris::kPrioBits, 7);
  w = Polaris::with_field(w, Polaris::kRefShift, Polaris::kRefBits, Polaris::kMaxReservers);
  w = Polaris::with_field(w, Polaris::kGenShift, Polaris::kGenBits, 15);
  EXPECT_EQ(Polaris::priority(w), 7u);
  EXPECT_EQ(Polaris::reservers(w), Polaris::kMaxReservers);
  EXPECT_EQ(Polaris::generation(w), 15u);
  EXPECT_EQ(w & Polaris::kVersionMask, Polaris::kVersionStep * 5);
  const uint64_t u = Polaris::unreserved(w);
  EXPECT_EQ(Polaris::priority(u), 0u);
  EXPECT_EQ(Polaris::reservers(u), 0u);
  EXPECT_EQ(Polaris::generation(u), 0u);  // 15 + 1 wraps
  EXPECT_EQ(u & Polaris::kVersionMask, Polaris::kVersionStep * 5);
}

// The paper's abort-aware priority: the default threshold is 8 restarts,
// then one step every 3, up to the low bound.
TEST(Polaris, PriorityRisesWithRestartsBeyondTheThreshold) {
  Config c;
  c.settings<cc::PolarisConfig>().low_bound = 2;
  Fixture f(c);
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  uint32_t restarts = 0;
  auto restart_to = [&](uint32_t n) {
    for (; restarts < n; restarts++) ASSERT_EQ(f.t0->begin(true), Rc::Ok);
  };
  restart_to(10);
  EXPECT_EQ(f.cc.priority_of(*f.t0), 0u) << "8 restarts, and 2 more, are below the first step";
  restart_to(11);
  EXPECT_EQ(f.cc.priority_of(*f.t0), 1u);
  restart_to(14);
  EXPECT_EQ(f.cc.priority_of(*f.t0), 2u);
  restart_to(40);
  EXPECT_EQ(f.cc.priority_of(*f.t0), 2u) << "capped at --polaris-low-bound";
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  EXPECT_EQ(f.cc.priority_of(*f.t0), 0u) << "a new transaction starts again at its base";
}

//    T0 (priority 2) | T1 (priority 0) |
//    -----------------------------------
//    R(1)            |                 |   <- reserves row 1 at 2
//                    | R(1)            |   <- a read proceeds, reserving nothing
//                    | W(1)            |   <- aborts: a higher priority holds the row
//    COMMIT          |                 |   <- releases the reservation
TEST(Polaris, AWriteOfARowAHigherPriorityReservesAbortsAtOnce) {
  Fixture f(rising());
  int64_t v = 0;
  begin_at(f, *f.t0, 2);
  ASSERT_EQ(f.read(*f.t0, 1, v), Rc::Ok);
  EXPECT_EQ(Polaris::priority(word(f, 1)), 2u);
  EXPECT_EQ(Polaris::reservers(word(f, 1)), 1u);

  begin_at(f, *f.t1, 0);
  EXPECT_EQ(f.read(*f.t1, 1, v), Rc::Ok);
  EXPECT_EQ(Polaris::reservers(word(f, 1)), 1u) << "priority 0 reserves nothing";
  EXPECT_EQ(f.write(*f.t1, 1, 5), Rc::Abort);
  EXPECT_EQ(f.t1->abort_cause(), AbortCause::LockConflict);
  f.t1->abort();

  ASSERT_EQ(f.t0->commit(), Rc::Ok);
  EXPECT_EQ(Polaris::priority(word(f, 1)), 0u);
  EXPECT_EQ(Polaris::reservers(word(f, 1)), 0u);
  EXPECT_EQ(f.add(*f.t1, 1, 1), Rc::Ok) << "the reservation outlived its transaction";
}

// A reservation is released when its transaction aborts, and two of one
// priority share the row; a commit that writes the row drops them all.
TEST(Polaris, ReservationsAreCountedReleasedAndDroppedByAWrite) {
  Config c = rising();
  Fixture f(c, 3);
  int64_t v = 0;
  begin_at(f, *f.t0, 3);
  begin_at(f, *f.t1, 3);
  ASSERT_EQ(f.read(*f.t0, 1, v), Rc::Ok);
  ASSERT_EQ(f.read(*f.t1, 1, v), Rc::Ok);
  EXPECT_EQ(Polaris::reservers(word(f, 1)), 2u);
  f.t1->abort();
  EXPECT_EQ(Polaris::reservers(word(f, 1)), 1u);
  EXPECT_EQ(Polaris::priority(word(f, 1)), 3u);

  begin_at(f, *f.t2, 3);
  ASSERT_EQ(f.read(*f.t2, 1, v), Rc::Ok);
  ASSERT_EQ(f.write(*f.t0, 1, 9), Rc::Ok);
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
  EXPECT_EQ(Polaris::reservers(word(f, 1)), 0u) << "T0's write dropped T2's reservation";
  EXPECT_EQ(f.t2->commit(), Rc::Abort) << "T2 read the version T0 replaced";
  EXPECT_EQ(f.t2->abort_cause(), AbortCause::ReadValidation);
  f.t2->abort();
  EXPECT_EQ(f.committed_value(1), 9);
}

//    T0 (priority 2) | T1 (priority 0)   |
//    -------------------------------------
//                    | W(1)              |   <- copied before any reservation
//    R(1)            |                   |   <- reserves row 1 at 2
//                    | COMMIT ...        |   <- waits: a higher priority holds row 1
//    W(1), COMMIT    |                   |   <- a new version of row 1
//                    | ... ABORT         |   <- T1 read the version T0 replaced
TEST(Polaris, ALowerCommitWaitsForAHigherReservation) {
  Fixture f(rising());
  ASSERT_NO_FATAL_FAILURE(reserve_over_a_lower_write(f));

  Rc committed = Rc::Ok;
  const test::First first = test::race(
      test::kWaitMarginMs, [&] { committed = f.t1->commit(); },
      [&] {
        ASSERT_EQ(f.write(*f.t0, 1, 7), Rc::Ok);
        ASSERT_EQ(f.t0->commit(), Rc::Ok);
      });
  EXPECT_EQ(first, test::First::ReleaseCalled) << "the lower commit did not wait for the reservation";
  EXPECT_EQ(committed, Rc::Abort);
  EXPECT_EQ(f.t1->abort_cause(), AbortCause::ReadValidation);
  f.t1->abort();
  EXPECT_EQ(f.committed_value(1), 7);
  EXPECT_EQ(word(f, 1) & Polaris::kLockBit, 0u);
}

// As above, but the reserver only read the row: its commit releases the
// reservation, and the waiting write commits.
TEST(Polaris, ALowerCommitGoesOnOnceTheReserverEnds) {
  Fixture f(rising());
  ASSERT_NO_FATAL_FAILURE(reserve_over_a_lower_write(f));

  Rc committed = Rc::Abort;
  const test::First first = test::race(
      test::kWaitMarginMs, [&] { committed = f.t1->commit(); }, [&] { ASSERT_EQ(f.t0->commit(), Rc::Ok); });
  EXPECT_EQ(first, test::First::ReleaseCalled);
  EXPECT_EQ(committed, Rc::Ok);
  EXPECT_EQ(f.committed_value(1), 50);
}

}  // namespace
}  // namespace abyss
