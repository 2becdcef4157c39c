// BAMBOO's own rules (Guo et al., SIGMOD 2021): a write lock retires at the
// transaction's next access, and later transactions then use the write
// before it commits; they commit after it (the commit barrier) and abort
// with it (a cascading abort). An older transaction wounds a younger one in
// its way, owner or retired. The rule it shares with the row-locking
// schemes (no conflicting write is granted while another holds the row) is
// typed over that family in lock_schemes_test.cc.
//
// A transaction's age is a timestamp it takes at its first conflict, after
// the transactions it conflicts with (Bamboo's dynamic timestamps): the one
// already on the row is the older.
#include "cc/bamboo/bamboo.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>

#include "common/config.h"
#include "common/types.h"
#include "txn/txn.h"

#include "scheme_fixture.h"

namespace abyss {
namespace {

using cc::Bamboo;
using Fixture = test::Fixture<Bamboo>;
using test::First;
using test::kWaitMarginMs;
using test::race;

Config retiring_at(cc::BambooRetire retire) {
  Config c;
  c.settings<cc::BambooConfig>().retire = retire;
  return c;
}

// How many entries `key`'s row holds (the test thread reads the list while
// the transactions on it stand still).
uint32_t entries_on(Fixture& f, uint64_t key) {
  uint32_t n = 0;
  for (const Bamboo::Entry* e = f.meta(key).head; e != nullptr; e = e->next) n++;
  return n;
}

//    T0 (older)      | T1 (younger) |
//    ---------------------------------
//    W(1)=42; R(2)   |              |   <- the read retires the write
//                    | R(1)         |   <- no wait: sees 42
//    COMMIT, thread A| COMMIT       |   <- waits for T0's commit
TEST(Bamboo, AWriteRetiresAtTheNextAccessAndItsReaderCommitsAfterIt) {
  Fixture f;
  int64_t v = 0;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.write(*f.t0, 1, 42), Rc::Ok);
  ASSERT_EQ(f.read(*f.t0, 2, v), Rc::Ok);
  ASSERT_EQ(f.read(*f.t1, 1, v), Rc::Ok) << "a read waited for a retired write";
  EXPECT_EQ(v, 42) << "the read did not see the retired write";
  Rc reader = Rc::Abort;
  Rc writer = Rc::Abort;
  const First first = race(
      kWaitMarginMs, [&] { reader = f.t1->commit(); }, [&] { writer = f.t0->commit(); });
  EXPECT_EQ(first, First::ReleaseCalled) << "a reader of a write not yet committed committed before it";
  EXPECT_EQ(writer, Rc::Ok);
  EXPECT_EQ(reader, Rc::Ok);
  EXPECT_EQ(f.committed_value(1), 42);
  EXPECT_EQ(entries_on(f, 1), 0u);
}

//    T0 (older) | T1 (younger) |
//    ---------------------------
//    R(1)       |              |   <- retires at once
//               | W(1)=7; R(2) |   <- no wait
//    COMMIT, A  | COMMIT       |   <- waits for the older reader's commit
// A write after a read that has not committed commits after it: were the
// writer to go first, a reader could see it on one row and miss it on
// another (read skew) while the history orders it before the writer.
TEST(Bamboo, AWriteAfterARetiredReadCommitsAfterTheReader) {
  Fixture f;
  int64_t v = 0;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.read(*f.t0, 1, v), Rc::Ok);
  ASSERT_EQ(f.write(*f.t1, 1, 7), Rc::Ok) << "a retired read held off a younger writer";
  ASSERT_EQ(f.read(*f.t1, 2, v), Rc::Ok);
  Rc writer = Rc::Abort;
  Rc reader = Rc::Abort;
  const First first = race(
      kWaitMarginMs, [&] { writer = f.t1->commit(); }, [&] { reader = f.t0->commit(); });
  EXPECT_EQ(first, First::ReleaseCalled) << "the writer committed before the reader ahead of it";
  EXPECT_EQ(reader, Rc::Ok);
  EXPECT_EQ(writer, Rc::Ok);
  EXPECT_EQ(f.committed_value(1), 7);
}

//    T0 (older)    | T1 (younger) |
//    -----------------------------
//    W(1)=42; R(2) |              |
//                  | R(1)         |   <- sees 42
//    ABORT         |              |   <- wounds T1: it used T0's write
//                  | COMMIT       |   <- aborts: cascade
TEST(Bamboo, AnAbortedWriteTakesItsReadersAlong) {
  Fixture f;
  int64_t v = 0;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.write(*f.t0, 1, 42), Rc::Ok);
  ASSERT_EQ(f.read(*f.t0, 2, v), Rc::Ok);
  ASSERT_EQ(f.read(*f.t1, 1, v), Rc::Ok);
  ASSERT_EQ(v, 42);
  f.t0->abort();
  EXPECT_EQ(f.t1->commit(), Rc::Abort) << "a reader of an aborted write committed";
  EXPECT_EQ(f.t1->abort_cause(), AbortCause::Cascade);
  f.t1->abort();
  EXPECT_EQ(f.committed_value(1), 101);
  EXPECT_EQ(entries_on(f, 1), 0u);
  ASSERT_EQ(f.t1->begin(true), Rc::Ok);
  ASSERT_EQ(f.read(*f.t1, 1, v), Rc::Ok);
  EXPECT_EQ(v, 101);
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
}

//    T0, thread A | T1           |
//    -----------------------------
//    R(5)         |              |
//                 | W(5)=8       |   <- the first conflict: T0, ahead, is older
//                 | W(1)=9; R(2) |
//    R(1)         |              |   <- wounds T1, waits for it to go
//                 | R(3)         |   <- aborts: wound
//      ... sees 101              |
// A transaction takes its age at its first conflict, after the entries it
// conflicts with: joining row 1 behind T1 would make T0 the younger, so it
// takes its age on row 5 first.
TEST(Bamboo, AnOlderReaderWoundsAYoungerRetiredWriteAndReadsTheCommittedData) {
  Fixture f;
  int64_t v = 0;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.read(*f.t0, 5, v), Rc::Ok);
  ASSERT_EQ(f.write(*f.t1, 5, 8), Rc::Ok);
  ASSERT_EQ(f.write(*f.t1, 1, 9), Rc::Ok);
  ASSERT_EQ(f.read(*f.t1, 2, v), Rc::Ok);
  Rc older = Rc::Abort;
  int64_t seen = 0;
  Rc younger = Rc::Ok;
  const First first = race(
      kWaitMarginMs, [&] { older = f.read(*f.t0, 1, seen); },
      [&] {
        younger = f.read(*f.t1, 3, v);
        f.t1->abort();
      });
  EXPECT_EQ(first, First::ReleaseCalled) << "an older reader went on past a younger write";
  EXPECT_EQ(younger, Rc::Abort) << "the wounded writer went on";
  EXPECT_EQ(f.t1->abort_cause(), AbortCause::Wound);
  ASSERT_EQ(older, Rc::Ok);
  EXPECT_EQ(seen, 101) << "the older reader saw a younger transaction's write";
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
}

//    T0 (older)        | T1 (younger) |
//    -----------------------------------
//    W(1)=42; R(2)     |              |
//                      | R(1)         |   <- sees 42
//    W(1)=43, thread A |              |   <- takes the row back: wounds T1
//                      | COMMIT       |   <- aborts: wound
//      ... writes 43   |              |
// A second write of a retired row changes data another transaction copied:
// the row is taken back first.
TEST(Bamboo, WritingARetiredRowAgainTakesItBackFromItsReaders) {
  Fixture f;
  int64_t v = 0;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.write(*f.t0, 1, 42), Rc::Ok);
  ASSERT_EQ(f.read(*f.t0, 2, v), Rc::Ok);
  ASSERT_EQ(f.read(*f.t1, 1, v), Rc::Ok);
  ASSERT_EQ(v, 42);
  Rc again = Rc::Abort;
  int64_t seen = 0;
  Rc reader = Rc::Ok;
  const First first = race(
      kWaitMarginMs, [&] { again = f.write(*f.t0, 1, 43, seen); },
      [&] {
        reader = f.t1->commit();
        f.t1->abort();
      });
  EXPECT_EQ(first, First::ReleaseCalled) << "a retired row was written again under its reader";
  EXPECT_EQ(reader, Rc::Abort) << "a reader of data written again committed";
  EXPECT_EQ(f.t1->abort_cause(), AbortCause::Wound);
  ASSERT_EQ(again, Rc::Ok);
  EXPECT_EQ(seen, 42);
  ASSERT_EQ(f.t0->commit(), Rc::Ok);
  EXPECT_EQ(f.committed_value(1), 43);
}

//    T0 (older)      | T1 (younger), thread A |
//    -----------------------------------------
//    W(1)=42; R(2)   |                        |
//                    | R(1)                   |   <- waits: nothing retires early
//    COMMIT          |                        |
//                    |   ... sees 42          |
TEST(Bamboo, RetiringAtCommitKeepsEveryWriteLockToTheEnd) {
  Fixture f(retiring_at(cc::BambooRetire::Commit));
  int64_t v = 0;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t1->begin(false), Rc::Ok);
  ASSERT_EQ(f.write(*f.t0, 1, 42), Rc::Ok);
  ASSERT_EQ(f.read(*f.t0, 2, v), Rc::Ok);
  Rc reader = Rc::Abort;
  Rc writer = Rc::Abort;
  const First first = race(
      kWaitMarginMs, [&] { reader = f.read(*f.t1, 1, v); }, [&] { writer = f.t0->commit(); });
  EXPECT_EQ(first, First::ReleaseCalled) << "a write lock retired before the commit under --bamboo-retire commit";
  EXPECT_EQ(writer, Rc::Ok);
  ASSERT_EQ(reader, Rc::Ok);
  EXPECT_EQ(v, 42);
  ASSERT_EQ(f.t1->commit(), Rc::Ok);
}

// An update's copy is written before the transaction's next call; one
// changed after its write retired (others may have copied it) is refused
// at commit by a checked build.
TEST(Bamboo, AChangeToAWriteAfterItRetiredIsRefusedByACheckedBuild) {
  if (!Txn<Bamboo>::kCheckUndeclared) GTEST_SKIP() << "a release build does not look";
  Fixture f;
  int64_t v = 0;
  char* d = nullptr;
  ASSERT_EQ(f.t0->begin(false), Rc::Ok);
  ASSERT_EQ(f.t0->update(*f.table, 1, d), Rc::Ok);
  set_int64(d, f.value, 5);
  ASSERT_EQ(f.read(*f.t0, 2, v), Rc::Ok);
  set_int64(d, f.value, 6);
  EXPECT_THROW(static_cast<void>(f.t0->commit()), std::logic_error);
  f.t0->abort();
}

}  // namespace
}  // namespace abyss
