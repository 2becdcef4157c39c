// CICADA's own rules (Lim et al., SIGMOD 2017): one timestamp per
// transaction, reads as of it that mark nothing until commit, writes that
// install nothing until a validated commit, and the early abort of a write
// whose version could never go on top. Whether its schedules are
// serializable, phantoms included, is tested with every scheme's
// (serializability_test.cc, scan_test.cc).
#include "cc/cicada/cicada.h"

#include <gtest/gtest.h>

#include <cstdint>

#include "common/config.h"
#include "common/types.h"
#include "platform/atomic.h"
#include "txn/txn.h"

#include "scheme_fixture.h"

namespace abyss {
namespace {

using cc::Cicada;
using Fixture = test::Fixture<Cicada>;

Timestamp pending(Fixture& f, uint64_t key) { return f.meta(key).pending.load(platform::memory_order_acquire); }

//    T0 (older)  | T1 (younger) |
//    ----------------------------
//    W(1)        |              |   <- a private copy: nothing pending
//                | R(1)         |   <- reads the committed version at once
//    COMMIT      |              |   <- installs a version older than T1
//                | COMMIT       |   <- aborts: at T1's timestamp it reads T0's
TEST(Cicada, AWriteInstallsNothingUntilItsValidatedCommit) {
  Fixture f;
  int64_t v = 0;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.write(*f.t0, 1, 50), Rc::Ok);
  EXPECT_EQ(pending(f, 1), kNoTimestamp);
  ASSERT_EQ(f.read(*f.t1, 1, v), Rc::Ok);
  EXPECT_EQ(v, 101);
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
  EXPECT_EQ(f.committed_value(1), 50);
  EXPECT_EQ(pending(f, 1), kNoTimestamp);
  EXPECT_EQ(f.t1->commit(), Rc::Abort);
  EXPECT_EQ(f.t1->abort_cause(), AbortCause::ReadValidation);
  f.t1->abort();
}

// A read marks the version only when its transaction commits; then an older
// write of the row can no longer commit, nor even begin.
TEST(Cicada, AYoungerCommittedReadDoomsAnOlderWrite) {
  Fixture f;
  int64_t v = 0;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.read(*f.t1, 1, v), Rc::Ok);
  EXPECT_EQ(f.meta(1).rts, kNoTimestamp) << "a read marks nothing before its commit";
  ASSERT_EQ(f.write(*f.t0, 2, 7), Rc::Ok);
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
  EXPECT_EQ(f.meta(1).rts, f.t1->meta().ts);
  EXPECT_EQ(f.write(*f.t0, 1, 5), Rc::Abort) << "its version would go under one a younger transaction read";
  EXPECT_EQ(f.t0->abort_cause(), AbortCause::TimestampOrder);
  f.t0->abort();
  EXPECT_EQ(f.committed_value(1), 101);
  EXPECT_EQ(f.committed_value(2), 102) << "the aborted transaction's other write never showed";
}

// As above, but the younger read commits after the older write copied the
// row: the older commit finds the mark and aborts.
TEST(Cicada, AnOlderCommitFindsAYoungerReadersMark) {
  Fixture f;
  int64_t v = 0;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.write(*f.t0, 1, 5), Rc::Ok);
  ASSERT_EQ(f.read(*f.t1, 1, v), Rc::Ok);
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
  EXPECT_EQ(f.t0->commit(), Rc::Abort);
  EXPECT_EQ(f.t0->abort_cause(), AbortCause::TimestampOrder);
  f.t0->abort();
  EXPECT_EQ(pending(f, 1), kNoTimestamp) << "the refused commit's pending write is dropped";
  EXPECT_EQ(f.committed_value(1), 101);
}

// An older transaction reads the version a younger one replaced (kept for
// it), and commits; it cannot write the row under the younger version.
TEST(Cicada, AnOlderTransactionReadsTheKeptVersionButCannotWriteUnderTheNewer) {
  Fixture f(Config{}, 3);
  int64_t v = 0;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.add(*f.t1, 3, 10), Rc::Ok);
  ASSERT_EQ(f.read(*f.t0, 3, v), Rc::Ok);
  EXPECT_EQ(v, 103);
  EXPECT_EQ(f.write(*f.t0, 3, 1), Rc::Abort);
  EXPECT_EQ(f.t0->abort_cause(), AbortCause::TimestampOrder) << "a read of an older version cannot become a write";
  f.t0->abort();

  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.add(*f.t2, 4, 1), Rc::Ok);  // younger than both
  EXPECT_EQ(f.write(*f.t0, 4, 1), Rc::Abort);
  EXPECT_EQ(f.t0->abort_cause(), AbortCause::VersionTooNew);
  f.t0->abort();
  ASSERT_EQ(f.read(*f.t1, 4, v), Rc::Ok);
  EXPECT_EQ(v, 104) << "T1 began before T2: it reads the version T2 replaced";
  ASSERT_EQ(f.t1->commit(), Rc::Ok) << "read only, of the version visible at its timestamp";
  EXPECT_EQ(f.committed_value(4), 105);
}

// Two writers of one row: the first to commit installs; the second finds the
// version it copied replaced.
TEST(Cicada, OfTwoWritersTheSecondToCommitAborts) {
  Fixture f;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.write(*f.t0, 1, 10), Rc::Ok);
  ASSERT_EQ(f.write(*f.t1, 1, 20), Rc::Ok);
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
  EXPECT_EQ(f.t0->commit(), Rc::Abort);
  EXPECT_EQ(f.t0->abort_cause(), AbortCause::ReadValidation);
  f.t0->abort();
  EXPECT_EQ(f.committed_value(1), 20);
}

}  // namespace
}  // namespace abyss
