// MOCC's own rules (Wang & Kimura, VLDB 2016): temperatures that rise with
// validation failures and start again each epoch, locks on hot rows taken
// before the row is read, the address order of the locks a transaction
// holds, and the retrospective lock list of a restarted transaction. The
// rules it shares with SILO are typed over the optimistic family in
// to_schemes_test.cc.
#include "cc/mocc/mocc.h"

#include <gtest/gtest.h>

#include <cstdint>

#include "common/config.h"
#include "common/types.h"
#include "platform/atomic.h"
#include "platform/clock.h"
#include "txn/txn.h"

#include "scheme_fixture.h"

namespace abyss {
namespace {

using cc::Mocc;
using Fixture = test::Fixture<Mocc>;

Config with(uint32_t threshold, uint32_t restore_max = 100, uint32_t epoch_ms = 10'000) {
  Config c;
  c.settings<cc::MoccConfig>().temp_threshold = threshold;
  c.settings<cc::MoccConfig>().restore_max = restore_max;
  c.settings<cc::MoccConfig>().epoch_ms = epoch_ms;
  return c;
}

int32_t lock_word(Fixture& f, uint64_t key) { return f.meta(key).lock.load(platform::memory_order_acquire); }

// T0 reads row 1; T1 writes it and commits; T0's commit fails validation.
void fail_validation(Fixture& f) {
  int64_t v = 0;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.read(*f.t0, 1, v), Rc::Ok);
  ASSERT_EQ(f.add(*f.t1, 1, 1), Rc::Ok);
  ASSERT_EQ(f.t0->commit(), Rc::Abort);
  EXPECT_EQ(f.t0->abort_cause(), AbortCause::ReadValidation);
  f.t0->abort();
}

// A failure always heats a cold row (a temperature of 0 rises with
// probability 1); later ones less often, never above --mocc-temp-max.
TEST(Mocc, ValidationFailuresHeatARowUpToItsMaximum) {
  Config c = with(cc::Mocc::kMaxTemperature);  // never hot: T1's write would wait for T0's lock
  c.settings<cc::MoccConfig>().temp_max = 3;
  Fixture f(c);
  ASSERT_NO_FATAL_FAILURE(fail_validation(f));
  EXPECT_EQ(f.cc.temperature(f.meta(1)), 1u);
  for (int i = 0; i < 200 && f.cc.temperature(f.meta(1)) < 3; i++) ASSERT_NO_FATAL_FAILURE(fail_validation(f));
  EXPECT_EQ(f.cc.temperature(f.meta(1)), 3u) << "at odds of 1/2 and 1/4, 200 failures reach 3 all but surely";
  for (int i = 0; i < 50; i++) ASSERT_NO_FATAL_FAILURE(fail_validation(f));
  EXPECT_EQ(f.cc.temperature(f.meta(1)), 3u) << "capped at --mocc-temp-max";
  EXPECT_EQ(f.cc.temperature(f.meta(2)), 0u) << "only the row that failed";
}

// Worker 0 advances the epoch as it begins a transaction once the period
// (here 1 ms) has passed; the temperatures of the last epoch no longer count.
TEST(Mocc, ANewEpochCoolsEveryRow) {
  Fixture f(with(1, 100, 1));
  ASSERT_NO_FATAL_FAILURE(fail_validation(f));
  EXPECT_EQ(f.cc.temperature(f.meta(1)), 1u);
  EXPECT_TRUE(f.cc.hot(f.meta(1)));
  platform::sleep_ms(5);
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  EXPECT_EQ(f.cc.temperature(f.meta(1)), 0u);
  EXPECT_FALSE(f.cc.hot(f.meta(1)));
  f.t0->abort();
}

//    T0          | T1          |
//    ---------------------------
//    R(1)        |             |   <- row 1 is hot: T0 takes its lock shared
//                | W(1) ...    |   <- waits for the lock, exclusive
//    COMMIT      |             |   <- releases it
//                | ... COMMIT  |
TEST(Mocc, AHotRowIsLockedBeforeItIsRead) {
  Fixture f(with(0));  // threshold 0: every row is hot
  int64_t v = 0;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.read(*f.t0, 1, v), Rc::Ok);
  EXPECT_EQ(lock_word(f, 1), 1);

  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  Rc written = Rc::Abort;
  const test::First first = test::race(
      test::kWaitMarginMs, [&] { written = f.write(*f.t1, 1, 7); }, [&] { ASSERT_EQ(f.t0->commit(), Rc::Ok); });
  EXPECT_EQ(first, test::First::ReleaseCalled) << "the write did not wait for the reader's lock";
  ASSERT_EQ(written, Rc::Ok);
  EXPECT_EQ(lock_word(f, 1), Mocc::kExclusive);
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
  EXPECT_EQ(lock_word(f, 1), 0);
  EXPECT_EQ(f.committed_value(1), 7);
}

// The rows that made an attempt abort are locked by the next attempt of the
// same transaction, though they are cold; a new transaction forgets them.
TEST(Mocc, ARestartLocksTheRowsItsLastAttemptFailedOn) {
  Fixture f(with(cc::Mocc::kMaxTemperature));  // no row ever gets hot
  ASSERT_NO_FATAL_FAILURE(fail_validation(f));
  int64_t v = 0;
  ASSERT_EQ(f.t0->begin(true), Rc::Ok);
  ASSERT_EQ(f.read(*f.t0, 1, v), Rc::Ok);
  EXPECT_EQ(lock_word(f, 1), 1) << "the retrospective list names row 1";
  ASSERT_EQ(f.read(*f.t0, 2, v), Rc::Ok);
  EXPECT_EQ(lock_word(f, 2), 0);
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
  EXPECT_EQ(lock_word(f, 1), 0);

  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.read(*f.t0, 1, v), Rc::Ok);
  EXPECT_EQ(lock_word(f, 1), 0) << "a new transaction starts with an empty list";
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
}

// A lock below one held breaks the address order. With --mocc-restore-max 0
// it is only tried: refused, the transaction aborts and releases all it
// holds. With room to restore the order, the held lock is released, the new
// one taken and the held one taken again.
TEST(Mocc, ALockOutOfAddressOrderIsTriedOrTheOrderRestored) {
  for (const uint32_t restore_max : {0U, 1U}) {
    SCOPED_TRACE(restore_max);
    Fixture f(with(0, restore_max));
    const bool ascending = &f.meta(1) < &f.meta(2);
    const uint64_t low = ascending ? 1 : 2;
    const uint64_t high = ascending ? 2 : 1;
    int64_t v = 0;
    ASSERT_EQ(f.t1->begin(false), Rc::Ok);
    ASSERT_EQ(f.write(*f.t1, low, 5), Rc::Ok);  // T1 holds the low row exclusive
    ASSERT_EQ(f.t0->begin(false), Rc::Ok);
    ASSERT_EQ(f.read(*f.t0, high, v), Rc::Ok);
    if (restore_max == 0) {
      EXPECT_EQ(f.read(*f.t0, low, v), Rc::Abort);
      EXPECT_EQ(f.t0->abort_cause(), AbortCause::LockConflict);
      f.t0->abort();
      EXPECT_EQ(lock_word(f, high), 0);
      EXPECT_EQ(lock_word(f, low), Mocc::kExclusive) << "T1's lock is T1's";
      ASSERT_EQ(f.t1->commit(), Rc::Ok);
      continue;
    }
    Rc read = Rc::Abort;
    const test::First first = test::race(
        test::kWaitMarginMs, [&] { read = f.read(*f.t0, low, v); },
        [&] {
          EXPECT_EQ(lock_word(f, high), 0) << "released to restore the order";
          ASSERT_EQ(f.t1->commit(), Rc::Ok);
        });
    EXPECT_EQ(first, test::First::ReleaseCalled);
    ASSERT_EQ(read, Rc::Ok);
    EXPECT_EQ(v, 5);
    EXPECT_EQ(lock_word(f, low), 1);
    EXPECT_EQ(lock_word(f, high), 1) << "taken again";
    EXPECT_EQ(f.t0->commit(), Rc::Ok);
    EXPECT_EQ(lock_word(f, low), 0);
    EXPECT_EQ(lock_word(f, high), 0);
  }
}

// Two hot readers of one row: the first to commit a write of it waits for
// the other's shared lock, so neither aborts the other at validation.
TEST(Mocc, AnUpgradeOfASharedLockWaitsForTheOtherReader) {
  Fixture f(with(0));
  int64_t v = 0;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.read(*f.t0, 1, v), Rc::Ok);
  ASSERT_EQ(f.read(*f.t1, 1, v), Rc::Ok);
  EXPECT_EQ(lock_word(f, 1), 2);
  Rc committed = Rc::Abort;
  const test::First first = test::race(
      test::kWaitMarginMs,
      [&] {
        committed = f.write(*f.t0, 1, 9);
        if (committed == Rc::Ok) committed = f.t0->commit();
      },
      [&] { ASSERT_EQ(f.t1->commit(), Rc::Ok); });
  EXPECT_EQ(first, test::First::ReleaseCalled);
  EXPECT_EQ(committed, Rc::Ok);
  EXPECT_EQ(f.committed_value(1), 9);
  EXPECT_EQ(lock_word(f, 1), 0);
}

}  // namespace
}  // namespace abyss
