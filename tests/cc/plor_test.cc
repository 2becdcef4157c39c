// PLOR's own rules (Chen et al., SIGMOD 2022): a read takes no lock a writer
// waits on while it runs, and the conflict is settled when the writer
// commits, where the older of the two goes first; writers wound younger
// owners. The rule it shares with the row-locking schemes (no conflicting
// write is granted while another holds the row) is typed over that family
// in lock_schemes_test.cc.
//
// Timestamps come from one shared source, so the transaction that calls
// begin() first is the older one.
#include "cc/plor/plor.h"

#include <gtest/gtest.h>

#include <cstdint>

#include "common/config.h"
#include "common/types.h"
#include "txn/txn.h"

#include "scheme_fixture.h"

namespace abyss {
namespace {

using cc::Plor;
using Fixture = test::Fixture<Plor>;
using test::First;
using test::kWaitMarginMs;
using test::race;

// How many readers are registered on `key`'s row (the test thread reads the
// list while the transactions on it stand still).
uint32_t readers_on(Fixture& f, uint64_t key) {
  uint32_t n = 0;
  for (const Plor::Request* r = f.meta(key).readers; r != nullptr; r = r->next) n++;
  return n;
}

//    T0 (older) | T1 (younger) |
//    ---------------------------
//    W(1)=42    |              |
//               | R(1)         |   <- no wait: sees the committed 101
//    COMMIT     |              |   <- wounds T1, commits at once
//               | COMMIT       |   <- aborts: wound
TEST(Plor, AReadOfALockedRowSeesTheCommittedDataAndAnOlderWriterGoesFirst) {
  Fixture f;
  int64_t v = 0;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.write(*f.t0, 1, 42), Rc::Ok);
  ASSERT_EQ(f.read(*f.t1, 1, v), Rc::Ok) << "a read waited for a writer that is not committing";
  EXPECT_EQ(v, 101);
  EXPECT_EQ(readers_on(f, 1), 1u);
  // Were the older writer to wait for the younger reader, the reader's
  // commit would end the wait: the race tells which came first.
  Rc writer = Rc::Abort;
  Rc reader = Rc::Ok;
  const First first = race(
      kWaitMarginMs, [&] { writer = f.t0->commit(); }, [&] { reader = f.t1->commit(); });
  EXPECT_EQ(first, First::WaiterReturned) << "the older writer waited for a younger reader";
  ASSERT_EQ(writer, Rc::Ok);
  EXPECT_EQ(f.committed_value(1), 42);
  EXPECT_EQ(reader, Rc::Abort) << "the younger reader of an overwritten row committed";
  EXPECT_EQ(f.t1->abort_cause(), AbortCause::Wound);
  f.t1->abort();
  EXPECT_EQ(readers_on(f, 1), 0u) << "the abort left its registration behind";
  ASSERT_EQ(f.t1->begin(true), Rc::Ok);
  ASSERT_EQ(f.read(*f.t1, 1, v), Rc::Ok);
  EXPECT_EQ(v, 42);
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
}

//    T0 (older) | T1 (younger), another thread |
//    -------------------------------------------
//    R(1)       |                              |
//               | W(1)=7; COMMIT               |   <- waits for the older reader
//    COMMIT     |                              |
//               |   ... then commits 7         |
TEST(Plor, AYoungerWritersCommitWaitsForAnOlderReader) {
  Fixture f;
  int64_t v = 0;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.read(*f.t0, 1, v), Rc::Ok);
  ASSERT_EQ(f.write(*f.t1, 1, 7), Rc::Ok) << "a read held off a writer before its commit";
  Rc writer = Rc::Abort;
  Rc reader = Rc::Abort;
  const First first = race(
      kWaitMarginMs, [&] { writer = f.t1->commit(); }, [&] { reader = f.t0->commit(); });
  EXPECT_EQ(first, First::ReleaseCalled) << "the younger writer committed over an older reader";
  EXPECT_EQ(reader, Rc::Ok);
  EXPECT_EQ(writer, Rc::Ok);
  EXPECT_EQ(f.committed_value(1), 7);
}

//    T0 (older), another thread | T1 (younger) |
//    -------------------------------------------
//                               | W(2)=9       |
//    W(2)                       |              |   <- wounds T1, queues
//                               | R(3)         |   <- aborts: wound; lets go
//      ... granted, sees 102    |              |
TEST(Plor, AnOlderWriterWoundsAYoungerOwnerAndGetsTheLockWhenItLetsGo) {
  Fixture f;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.write(*f.t1, 2, 9), Rc::Ok);
  Rc older = Rc::Abort;
  int64_t seen = 0;
  Rc younger = Rc::Ok;
  const First first = race(
      kWaitMarginMs, [&] { older = f.write(*f.t0, 2, 5, seen); },
      [&] {
        int64_t v = 0;
        younger = f.read(*f.t1, 3, v);
        f.t1->abort();
      });
  EXPECT_EQ(first, First::ReleaseCalled) << "the lock was granted while the younger owner held it";
  EXPECT_EQ(younger, Rc::Abort) << "the wounded owner went on";
  EXPECT_EQ(f.t1->abort_cause(), AbortCause::Wound);
  ASSERT_EQ(older, Rc::Ok);
  EXPECT_EQ(seen, 102) << "the row changed though its only writer rolled back";
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
  EXPECT_EQ(f.committed_value(2), 5);
}

//    T2 (oldest) | T0, thread A     | T1 (youngest), thread B |
//    -------------------------------------------------------------
//    R(1)        |                  |                         |
//                | W(1)=42; COMMIT  |                         |   <- waits for T2, row 1 committing
//                |                  | R(1)                    |   <- waits for the older committer
//    COMMIT      |                  |                         |
//                |   ... commits    |   ... then reads 42     |
TEST(Plor, AReadOfARowAnOlderWriterIsCommittingWaitsForItsInstall) {
  Fixture f(Config{}, 3);
  int64_t v = 0;
  ASSERT_EQ(f.t2->begin(false), Rc::Ok);
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.read(*f.t2, 1, v), Rc::Ok);
  ASSERT_EQ(f.write(*f.t0, 1, 42), Rc::Ok);
  Rc writer = Rc::Abort;
  Rc reader = Rc::Abort;
  Rc oldest = Rc::Abort;
  First inner = First::WaiterReturned;
  const First outer = race(
      kWaitMarginMs, [&] { writer = f.t0->commit(); },
      [&] {
        inner = race(
            kWaitMarginMs, [&] { reader = f.read(*f.t1, 1, v); }, [&] { oldest = f.t2->commit(); });
      });
  EXPECT_EQ(outer, First::ReleaseCalled) << "the writer committed over an older reader";
  EXPECT_EQ(inner, First::ReleaseCalled) << "a read went past an older committer";
  EXPECT_EQ(oldest, Rc::Ok);
  EXPECT_EQ(writer, Rc::Ok);
  ASSERT_EQ(reader, Rc::Ok);
  EXPECT_EQ(v, 42) << "the read saw the row before the older committer installed it";
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
}

//    T0 (oldest)   | T1            | T2 (youngest), thread A |
//    --------------------------------------------------------------
//                  |               | W(1)=42                 |
//                  | R(1)          |                         |
//                  |               | COMMIT                  |   <- waits for the older T1
//    R(1), thread B|               |                         |   <- wounds T2: no wait, sees 101
//                  |               |   ... aborts: wound     |
// A reader older than a committing owner that has not decided goes first:
// it wounds the owner instead of waiting for its install. Were it to wait,
// T1's commit would end the wait (T2 then installs 42): the inner race
// tells which came first.
TEST(Plor, AnOlderReaderWoundsAYoungerOwnerThatIsCommittingAndReadsTheCommittedData) {
  Fixture f(Config{}, 3);
  int64_t v = 0;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.t2->begin(false), Rc::Ok);
  ASSERT_EQ(f.write(*f.t2, 1, 42), Rc::Ok);
  ASSERT_EQ(f.read(*f.t1, 1, v), Rc::Ok);
  Rc owner = Rc::Ok;
  Rc oldest = Rc::Abort;
  Rc middle = Rc::Abort;
  First inner = First::ReleaseCalled;
  const First outer = race(
      kWaitMarginMs, [&] { owner = f.t2->commit(); },
      [&] {
        inner = race(
            kWaitMarginMs, [&] { oldest = f.read(*f.t0, 1, v); }, [&] { middle = f.t1->commit(); });
      });
  EXPECT_EQ(outer, First::ReleaseCalled) << "the owner committed over an older reader";
  EXPECT_EQ(inner, First::WaiterReturned) << "the oldest reader waited for a younger committer";
  ASSERT_EQ(oldest, Rc::Ok);
  EXPECT_EQ(v, 101) << "the oldest reader saw the younger owner's write";
  EXPECT_EQ(owner, Rc::Abort) << "the wounded owner committed";
  EXPECT_EQ(f.t2->abort_cause(), AbortCause::Wound);
  f.t2->abort();
  EXPECT_EQ(middle, Rc::Ok);
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
  EXPECT_EQ(f.committed_value(1), 101);
}

// A read then a write of one row (an upgrade) keeps the copy the read took:
// no committer could install the row meanwhile without wounding the reader.
TEST(Plor, AnUpgradeKeepsTheReadCopyAndLocksTheRow) {
  Fixture f;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  int64_t v = 0;
  ASSERT_EQ(f.read(*f.t0, 5, v), Rc::Ok);
  int64_t seen = 0;
  ASSERT_EQ(f.write(*f.t0, 5, v + 1, seen), Rc::Ok);
  EXPECT_EQ(seen, 105);
  EXPECT_NE(f.meta(5).owner, nullptr) << "the upgrade took no lock";
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
  EXPECT_EQ(f.committed_value(5), 106);
  EXPECT_EQ(f.meta(5).owner, nullptr);
  EXPECT_EQ(readers_on(f, 5), 0u);
}

}  // namespace
}  // namespace abyss
