// HEKATON's own rules (Larson et al., PVLDB 2011, §3): reads as of the begin
// timestamp, first updater wins, and validation of every read at the commit
// timestamp. They fit neither the optimistic nor the timestamp-ordering
// typed rules (a second writer aborts at its write; a reader older than a
// committed writer may still commit if it commits first), so they are
// tested here; the rules every scheme keeps are typed in to_schemes_test.cc.
#include "cc/hekaton/hekaton.h"

#include <gtest/gtest.h>

#include <cstdint>

#include "common/config.h"
#include "common/types.h"
#include "txn/txn.h"

#include "scheme_fixture.h"

namespace abyss {
namespace {

using cc::Hekaton;
using Fixture = test::Fixture<Hekaton>;

//    T0              | T1              |
//    -----------------------------------
//    BEGIN           |                 |
//                    | W(1)=7, COMMIT  |
//    R(1) = 101      |                 |   <- the version as of T0's begin
//    W(2), COMMIT    |                 |   <- aborts: T1 committed a newer one before T0's commit
// Without the write, T0 changes nothing and commits as of its begin, before T1.
TEST(Hekaton, AReadIsOfTheBeginAndFailsValidationIfOverwrittenBeforeTheCommit) {
  for (const bool writes : {true, false}) {
    Fixture f;
    int64_t v = 0;
    ASSERT_EQ(f.t0->begin(false), Rc::Ok);
    ASSERT_EQ(f.add(*f.t1, 1, 6), Rc::Ok);
    ASSERT_EQ(f.read(*f.t0, 1, v), Rc::Ok);
    EXPECT_EQ(v, 101) << "read the version committed after the begin";
    if (!writes) {
      EXPECT_EQ(f.t0->commit(), Rc::Ok) << "a read-only transaction is serialized at its begin";
      continue;
    }
    ASSERT_EQ(f.write(*f.t0, 2, 9), Rc::Ok);
    EXPECT_EQ(f.t0->commit(), Rc::Abort);
    EXPECT_EQ(f.t0->abort_cause(), AbortCause::ReadValidation);
    f.t0->abort();
    EXPECT_EQ(f.committed_value(1), 107);
    EXPECT_EQ(f.committed_value(2), 102);
  }
}

//    T0              | T1              |
//    -----------------------------------
//    BEGIN, R(1)     |                 |
//                    | W(1)=7          |   <- pending; T0's read stands
//    R(2), W(3)      |                 |
//    COMMIT          |                 |   <- validates: T1, still running, commits after it
//                    | COMMIT          |
TEST(Hekaton, AReaderCommitsBeforeARunningWriterOfWhatItRead) {
  Fixture f;
  int64_t v = 0;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.read(*f.t0, 1, v), Rc::Ok);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.write(*f.t1, 1, 7), Rc::Ok);
  ASSERT_EQ(f.read(*f.t0, 2, v), Rc::Ok);
  ASSERT_EQ(f.write(*f.t0, 3, 30), Rc::Ok);
  EXPECT_EQ(f.t0->commit(), Rc::Ok);
  EXPECT_EQ(f.t1->commit(), Rc::Ok);
  EXPECT_EQ(f.committed_value(1), 7);
}

// First updater wins: a second write of a row with a write pending aborts
// at once, and so does a write of a row whose newest version the writer
// cannot see (committed after its begin).
TEST(Hekaton, ASecondWriterAndAWriterOfAVersionNewerThanItsBeginAbortAtTheWrite) {
  Fixture f;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.write(*f.t0, 1, 7), Rc::Ok);
  EXPECT_EQ(f.write(*f.t1, 1, 8), Rc::Abort);
  EXPECT_EQ(f.t1->abort_cause(), AbortCause::LockConflict);
  f.t1->abort();
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
  EXPECT_EQ(f.write(*f.t1, 1, 8), Rc::Abort) << "row 1's newest version was committed after T1 began";
  EXPECT_EQ(f.t1->abort_cause(), AbortCause::VersionTooNew);
  f.t1->abort();
  EXPECT_EQ(f.committed_value(1), 7);
}

// Write skew, which snapshot isolation admits (mvcc --isolation snapshot):
// each reads the row the other writes. The first to commit does; the
// second's read was overwritten under a smaller commit timestamp.
TEST(Hekaton, WriteSkewIsCaughtAtTheSecondCommit) {
  Fixture f;
  int64_t v = 0;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.read(*f.t0, 1, v), Rc::Ok);
  ASSERT_EQ(f.read(*f.t1, 2, v), Rc::Ok);
  ASSERT_EQ(f.write(*f.t0, 2, 20), Rc::Ok);
  ASSERT_EQ(f.write(*f.t1, 1, 10), Rc::Ok);
  EXPECT_EQ(f.t0->commit(), Rc::Ok) << "T1's pending write of row 1 commits after T0";
  EXPECT_EQ(f.t1->commit(), Rc::Abort);
  EXPECT_EQ(f.t1->abort_cause(), AbortCause::ReadValidation);
  f.t1->abort();
  EXPECT_EQ(f.committed_value(1), 101);
  EXPECT_EQ(f.committed_value(2), 20);
}

}  // namespace
}  // namespace abyss
