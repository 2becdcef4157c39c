// SILO's own rules (Tu et al., SOSP 2013, §4.4), each pinned by an explicit
// interleaving of two transactions with their own workers, driven by one test
// thread. The rules SILO shares with OCC and TICTOC (a changed read fails
// validation, upgrades are rechecked) are typed over the family in
// to_schemes_test.cc; concurrent increments run under every scheme in
// txn_test.cc.
#include "cc/silo/silo.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <vector>

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

using cc::Silo;

// Worker i runs txns[i].
using Fixture = test::Fixture<Silo>;

uint64_t row_tid(Fixture& f, uint64_t key) { return f.meta(key).tid.load(platform::memory_order_acquire); }

//    T0      | T1      |
//    -------------------
//    BEGIN   |         |
//    R(1)    |         |
//    W(2)    |         |
//            | W(1), COMMIT
//    COMMIT  |         |   <- locks row 2, then fails validation on row 1
//    ABORT   |         |   <- must unlock row 2
//            | W(2), COMMIT  <- succeeds
TEST(Silo, AbortAfterFailedCommitReleasesLocks) {
  Fixture f;
  const char* r = nullptr;
  char* w = nullptr;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t0->read(*f.table, 1, r), Rc::Ok);
  ASSERT_EQ(f.t0->update(*f.table, 2, w), Rc::Ok);
  set_int64(w, f.value, 7);
  ASSERT_EQ(f.add(*f.t1, 1, 10), Rc::Ok);
  const uint64_t tid2 = row_tid(f, 2);

  ASSERT_EQ(f.t0->commit(), Rc::Abort);
  EXPECT_NE(row_tid(f, 2) & Silo::kLockBit, 0U);  // commit took the lock; abort() must release it
  f.t0->abort();
  EXPECT_EQ(row_tid(f, 2), tid2);  // unlocked, TID unchanged
  EXPECT_EQ(f.committed_value(2), 102);

  ASSERT_EQ(f.add(*f.t1, 2, 5), Rc::Ok);
  EXPECT_EQ(f.committed_value(2), 107);
  EXPECT_EQ(row_tid(f, 2) & Silo::kLockBit, 0U);
}

// Silo §4.4's rules (a)-(c) for the commit TID. T1 gives rows 1 and 3 a TID;
// T0 reads 1, writes 2 and 3, inserts 9: its TID exceeds every TID it read or
// wrote and its own last one, carries the current epoch, and lands on every
// row it wrote, the insert included.
TEST(Silo, CommitTidExceedsTidsSeenAndCarriesEpoch) {
  Fixture f;
  ASSERT_EQ(f.add(*f.t1, 3, 1), Rc::Ok);
  ASSERT_EQ(f.add(*f.t1, 1, 1), Rc::Ok);
  const uint64_t tid1 = row_tid(f, 1);
  const uint64_t tid3 = row_tid(f, 3);
  EXPECT_GT(tid1, tid3);  // T1's own TIDs grow (rule (b))
  EXPECT_EQ(Silo::epoch_of(tid1), f.cc.epoch());

  const char* r = nullptr;
  char* w = nullptr;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t0->read(*f.table, 1, r), Rc::Ok);
  ASSERT_EQ(f.t0->update(*f.table, 2, w), Rc::Ok);
  ASSERT_EQ(f.t0->update(*f.table, 3, w), Rc::Ok);
  ASSERT_EQ(f.t0->insert(*f.table, 9, w), Rc::Ok);
  set_int64(w, f.value, 900);
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
  const uint64_t tid = f.t0->meta().last_tid;
  EXPECT_EQ(tid & Silo::kLockBit, 0U);
  EXPECT_GT(tid, tid1);  // read
  EXPECT_GT(tid, tid3);  // written
  EXPECT_EQ(Silo::epoch_of(tid), f.cc.epoch());
  EXPECT_EQ(row_tid(f, 1), tid1);  // a read leaves the row's TID alone
  EXPECT_EQ(row_tid(f, 2), tid);
  EXPECT_EQ(row_tid(f, 3), tid);
  EXPECT_EQ(row_tid(f, 9), tid);  // the insert is unlocked with the commit TID
  EXPECT_EQ(f.committed_value(9), 900);

  // Rule (b): T0's next TID exceeds its last even though it touches only a
  // row whose TID is older.
  ASSERT_EQ(f.add(*f.t0, 0, 1), Rc::Ok);
  EXPECT_GT(f.t0->meta().last_tid, tid);
  EXPECT_EQ(row_tid(f, 0), f.t0->meta().last_tid);
}

// Only worker 0 advances the epoch, when it begins a transaction at least
// --silo-epoch-ms (default 40) after the last advance. A TID committed
// afterwards carries the new epoch although every TID it saw is from the old
// one (rule (c)).
TEST(Silo, EpochAdvancesWhenWorkerZeroBeginsAfterPeriod) {
  Fixture f;
  ASSERT_EQ(f.add(*f.t1, 1, 1), Rc::Ok);
  const uint64_t old_tid = row_tid(f, 1);
  const uint64_t e0 = f.cc.epoch();
  EXPECT_EQ(Silo::epoch_of(old_tid), e0);

  platform::sleep_ms(f.cfg.settings<cc::SiloConfig>().epoch_ms + 10);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);  // not the ticker
  f.t1->abort();
  EXPECT_EQ(f.cc.epoch(), e0);
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  f.t0->abort();
  EXPECT_EQ(f.cc.epoch(), e0 + 1);
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);  // the period starts over
  f.t0->abort();
  EXPECT_EQ(f.cc.epoch(), e0 + 1);

  ASSERT_EQ(f.add(*f.t1, 1, 1), Rc::Ok);
  const uint64_t new_tid = row_tid(f, 1);
  EXPECT_GT(new_tid, old_tid);
  EXPECT_EQ(Silo::epoch_of(new_tid), e0 + 1);
  EXPECT_EQ(Silo::sequence_of(new_tid), 0U);  // first TID of the epoch for this row
}

// The period is the configured one: 2 ms has passed after a sleep of 5, a
// period of 10 s has not.
TEST(Silo, EpochPeriodIsTheConfiguredOne) {
  Config short_epoch;
  short_epoch.settings<cc::SiloConfig>().epoch_ms = 2;
  Config long_epoch;
  long_epoch.settings<cc::SiloConfig>().epoch_ms = 10'000;
  Fixture fast(short_epoch);
  Fixture slow(long_epoch);
  const uint64_t fast0 = fast.cc.epoch();
  const uint64_t slow0 = slow.cc.epoch();
  platform::sleep_ms(5);
  for (Fixture* f : {&fast, &slow}) {
    ASSERT_EQ(f->t0->begin(false), Rc::Ok);
    f->t0->abort();
  }
  EXPECT_EQ(fast.cc.epoch(), fast0 + 1);
  EXPECT_EQ(slow.cc.epoch(), slow0);
}

}  // namespace
}  // namespace abyss
