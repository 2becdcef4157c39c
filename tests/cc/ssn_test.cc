// SSN's own rules (Wang et al., VLDB J 2017, over ERMIA's snapshot
// isolation): reads as of the begin timestamp, first updater wins, and the
// certifier's exclusion window at commit. A reader whose read was
// overwritten before it commits may still commit (it is serialized before
// the overwriter), which the optimistic typed rules forbid, and a second
// writer aborts at its write, which they do not expect; so the rules are
// tested here, beside the rules every scheme keeps (to_schemes_test.cc).
#include "cc/ssn/ssn.h"

#include <gtest/gtest.h>

#include <cstdint>

#include "common/config.h"
#include "common/types.h"
#include "txn/txn.h"

#include "scheme_fixture.h"

namespace abyss {
namespace {

using cc::Ssn;
using Fixture = test::Fixture<Ssn>;

//    T0              | T1              |
//    -----------------------------------
//    BEGIN           | BEGIN           |
//    R(1)            | R(2)            |
//    W(2)=20         | W(1)=10         |
//    COMMIT          |                 |   <- commits: T1's write of row 1 is not committed
//                    | COMMIT          |   <- T0 read what T1 replaces, and replaced what T1 read
// Serializable: the certifier aborts T1 (π(T1) = π(T0) <= η(T1) = T0's
// commit). Snapshot isolation leaves the certifier out: both commit, a
// write skew. After the abort, T1's row is free for the next writer.
TEST(Ssn, WriteSkewIsCertifiedAwayAndSnapshotIsolationAdmitsIt) {
  for (const Isolation level : {Isolation::Serializable, Isolation::Snapshot}) {
    Config c;
    c.isolation = level;
    Fixture f(c);
    int64_t v = 0;
    ASSERT_EQ(f.t0->begin(false), Rc::Ok);
    ASSERT_EQ(f.t1->begin(false), Rc::Ok);
    ASSERT_EQ(f.read(*f.t0, 1, v), Rc::Ok);
    ASSERT_EQ(f.read(*f.t1, 2, v), Rc::Ok);
    ASSERT_EQ(f.write(*f.t0, 2, 20), Rc::Ok);
    ASSERT_EQ(f.write(*f.t1, 1, 10), Rc::Ok);
    ASSERT_EQ(f.t0->commit(), Rc::Ok);
    if (level == Isolation::Snapshot) {
      EXPECT_EQ(f.t1->commit(), Rc::Ok) << "snapshot isolation admits write skew";
      EXPECT_EQ(f.committed_value(1), 10);
      EXPECT_EQ(f.committed_value(2), 20);
      continue;
    }
    EXPECT_EQ(f.t1->commit(), Rc::Abort);
    EXPECT_EQ(f.t1->abort_cause(), AbortCause::Certifier);
    f.t1->abort();
    EXPECT_EQ(f.committed_value(1), 101);
    EXPECT_EQ(f.committed_value(2), 20);
    ASSERT_EQ(f.add(*f.t1, 1, 5), Rc::Ok) << "the aborted commit left row 1 latched or pending";
    EXPECT_EQ(f.committed_value(1), 106);
  }
}

//    T0              | T1              |
//    -----------------------------------
//    BEGIN, R(1)     |                 |
//                    | W(1)=7, COMMIT  |
//    W(2)=30, COMMIT |                 |   <- commits: serialized before T1, nothing orders it after
// HEKATON aborts T0 here (its read was overwritten before its commit); the
// safety net sees one edge, T0 before T1, and no cycle.
TEST(Ssn, AReaderOverwrittenBeforeItsCommitCommitsWhenNothingMustPrecedeIt) {
  Fixture f;
  int64_t v = 0;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.read(*f.t0, 1, v), Rc::Ok);
  ASSERT_EQ(f.add(*f.t1, 1, 6), Rc::Ok);
  ASSERT_EQ(f.read(*f.t0, 1, v), Rc::Ok);
  EXPECT_EQ(v, 101) << "a read is as of the begin timestamp";
  ASSERT_EQ(f.write(*f.t0, 2, 30), Rc::Ok);
  EXPECT_EQ(f.t0->commit(), Rc::Ok);
  EXPECT_EQ(f.committed_value(1), 107);
  EXPECT_EQ(f.committed_value(2), 30);
}

//    T0              | T1              |
//    -----------------------------------
//    BEGIN, R(1)     |                 |
//                    | BEGIN, R(2)     |
//                    | W(1)=7, COMMIT  |   <- commits: T0 has not committed, nor replaced row 2
//    W(2)=20, COMMIT |                 |   <- aborts
// The write skew of the test above, with the overwriter committed first:
// T0 read a version T1 replaced (π(T0) <= π(T1) = T1's commit) and replaces
// a version T1 read (η(T0) = T1's commit), so the window is closed.
TEST(Ssn, AWriteSkewWhoseOtherHalfCommittedFirstIsCertifiedAway) {
  Fixture f;
  int64_t v = 0;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.read(*f.t0, 1, v), Rc::Ok);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.read(*f.t1, 2, v), Rc::Ok);
  ASSERT_EQ(f.write(*f.t1, 1, 7), Rc::Ok);
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
  ASSERT_EQ(f.write(*f.t0, 2, 20), Rc::Ok) << "row 2's newest version is still the one T0 can see";
  EXPECT_EQ(f.t0->commit(), Rc::Abort);
  EXPECT_EQ(f.t0->abort_cause(), AbortCause::Certifier);
  f.t0->abort();
  EXPECT_EQ(f.committed_value(1), 7);
  EXPECT_EQ(f.committed_value(2), 102);
}

// First updater wins: a second write of a row with a write pending aborts
// at once, and so does a write of a row whose newest version was committed
// after the writer began; read committed lets the second overwrite it.
TEST(Ssn, ASecondWriterAndAWriterOfAVersionNewerThanItsBeginAbortAtTheWrite) {
  for (const Isolation level : {Isolation::Serializable, Isolation::ReadCommitted}) {
    Config c;
    c.isolation = level;
    Fixture f(c);
    ASSERT_EQ(f.t0->begin(false), Rc::Ok);
    ASSERT_EQ(f.t1->begin(false), Rc::Ok);
    ASSERT_EQ(f.write(*f.t0, 1, 7), Rc::Ok);
    EXPECT_EQ(f.write(*f.t1, 1, 8), Rc::Abort);
    EXPECT_EQ(f.t1->abort_cause(), AbortCause::LockConflict);
    f.t1->abort();
    ASSERT_EQ(f.t1->begin(false), Rc::Ok);
    ASSERT_EQ(f.t0->commit(), Rc::Ok);
    if (level == Isolation::ReadCommitted) {
      ASSERT_EQ(f.write(*f.t1, 1, 8), Rc::Ok) << "read committed overwrites a version newer than its begin";
      ASSERT_EQ(f.t1->commit(), Rc::Ok);
      EXPECT_EQ(f.committed_value(1), 8);
      continue;
    }
    EXPECT_EQ(f.write(*f.t1, 1, 8), Rc::Abort) << "row 1's newest version was committed after T1 began";
    EXPECT_EQ(f.t1->abort_cause(), AbortCause::VersionTooNew);
    f.t1->abort();
    EXPECT_EQ(f.committed_value(1), 7);
  }
}

}  // namespace
}  // namespace abyss
