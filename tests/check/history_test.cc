#include "check/history.h"

#include <gtest/gtest.h>

#include <cctype>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace abyss::check {
namespace {

Report check(const std::string& text) {
  std::istringstream in(text);
  return check_history(in);
}

// The kept anomalies of one kind, in report order.
std::vector<Anomaly> of_kind(const Report& r, AnomalyKind kind) {
  std::vector<Anomaly> out;
  for (const Anomaly& a : r.anomalies) {
    if (a.kind == kind) out.push_back(a);
  }
  return out;
}

using Ids = std::vector<uint64_t>;
using Edges = std::vector<EdgeKind>;

TEST(HistoryCheck, EmptyHistoryAndBlankLinesAreSerializable) {
  const Report r = check("\n  \n\r\n");
  EXPECT_TRUE(r.serializable());
  EXPECT_EQ(r.transactions, 0u);
  EXPECT_EQ(r.edges, 0u);
}

TEST(HistoryCheck, SerialHistoryIsSerializable) {
  //    T1     | T2     | T3
  //    -------------------------
  //    W(x)   |        |
  //    COMMIT |        |
  //           | R(x)   |          <- reads T1's x
  //           | W(x)   |
  //           | COMMIT |
  //           |        | R(x), R(y@load)
  //           |        | W(y)
  const Report r = check(R"({"id": 1, "reads": [], "writes": [["t", 1, 0]]})"
                         "\n"
                         R"({"id": 2, "reads": [["t", 1, 1]], "writes": [["t", 1, 1]]})"
                         "\n"
                         R"({"id": 3, "reads": [["t", 1, 2], ["t", 2, 0]], "writes": [["t", 2, 0]]})"
                         "\n");
  EXPECT_TRUE(r.serializable()) << r.summary();
  EXPECT_EQ(r.transactions, 3u);
  EXPECT_EQ(r.reads, 3u);
  EXPECT_EQ(r.writes, 3u);
  // 1->2 ww and wr (x), 2->3 wr (x). T3 reads y@0 and replaces it itself: no rw.
  EXPECT_EQ(r.edges, 3u);
  EXPECT_NE(r.summary().find("serializable"), std::string::npos);
}

TEST(HistoryCheck, LineOrderDoesNotMatter) {
  // The same serial history as above with the lines reversed, as interleaved
  // workers may write them.
  const Report r = check(R"({"id": 3, "reads": [["t", 1, 2], ["t", 2, 0]], "writes": [["t", 2, 0]]})"
                         "\n"
                         R"({"id": 2, "reads": [["t", 1, 1]], "writes": [["t", 1, 1]]})"
                         "\n"
                         R"({"id": 1, "reads": [], "writes": [["t", 1, 0]]})");
  EXPECT_TRUE(r.serializable()) << r.summary();
  EXPECT_EQ(r.edges, 3u);
}

TEST(HistoryCheck, LostUpdateIsDetected) {
  //    T1     | T2     | T3
  //    -------------------------
  //    W(x)   |        |
  //    COMMIT |        |
  //           | R(x)   |
  //           |        | R(x)
  //           | W(x)   |
  //           | COMMIT |
  //           |        | W(x)     <- also replaces T1's x: T2's update is lost
  //           |        | COMMIT
  const Report r = check(R"({"id": 1, "reads": [], "writes": [["acct", 7, 0]]})"
                         "\n"
                         R"({"id": 2, "reads": [["acct", 7, 1]], "writes": [["acct", 7, 1]]})"
                         "\n"
                         R"({"id": 3, "reads": [["acct", 7, 1]], "writes": [["acct", 7, 1]]})");
  EXPECT_FALSE(r.serializable());
  ASSERT_EQ(r.count(AnomalyKind::LostUpdate), 1u) << r.summary();
  const Anomaly a = of_kind(r, AnomalyKind::LostUpdate).at(0);
  EXPECT_EQ(a.txns, (Ids{2, 3}));
  EXPECT_EQ(a.key, "acct[7]");
  EXPECT_NE(a.description.find("T1"), std::string::npos) << a.description;
  EXPECT_EQ(r.count(AnomalyKind::UncommittedRead), 0u);
  EXPECT_EQ(r.count(AnomalyKind::UnknownPrevVersion), 0u);
}

TEST(HistoryCheck, TwoInsertsOfOneKeyAreALostUpdate) {
  const Report r = check(R"({"id": 4, "reads": [], "writes": [["t", "k", 0]]})"
                         "\n"
                         R"({"id": 5, "reads": [], "writes": [["t", "k", 0]]})");
  ASSERT_EQ(r.count(AnomalyKind::LostUpdate), 1u) << r.summary();
  EXPECT_EQ(of_kind(r, AnomalyKind::LostUpdate).at(0).txns, (Ids{4, 5}));
  EXPECT_EQ(of_kind(r, AnomalyKind::LostUpdate).at(0).key, "t[\"k\"]");
}

TEST(HistoryCheck, WriteListedTwiceByOneTransactionIsNotALostUpdate) {
  const Report r = check(R"({"id": 1, "reads": [], "writes": [["t", 1, 0], ["t", 1, 0]]})");
  EXPECT_TRUE(r.serializable()) << r.summary();
}

TEST(HistoryCheck, DirtyReadOfUncommittedWriterIsDetected) {
  //    T2     | T9
  //    --------------
  //           | W(x)
  //    R(x)   |          <- reads T9's x
  //    COMMIT |
  //           | ABORT    <- T9 never appears in the log
  const Report r = check(R"({"id": 2, "reads": [["t", 1, 9]], "writes": []})"
                         "\n");
  EXPECT_FALSE(r.serializable());
  ASSERT_EQ(r.count(AnomalyKind::UncommittedRead), 1u) << r.summary();
  const Anomaly a = of_kind(r, AnomalyKind::UncommittedRead).at(0);
  EXPECT_EQ(a.txns, (Ids{2, 9}));
  EXPECT_EQ(a.key, "t[1]");
  EXPECT_NE(a.description.find("not a committed transaction"), std::string::npos) << a.description;
}

TEST(HistoryCheck, ReadOfVersionTheWriterNeverWroteIsDetected) {
  // T1 committed, but wrote y, not x: T2 cannot have read x from it.
  const Report r = check(R"({"id": 1, "reads": [], "writes": [["t", "y", 0]]})"
                         "\n"
                         R"({"id": 2, "reads": [["t", "x", 1]], "writes": []})");
  ASSERT_EQ(r.count(AnomalyKind::UncommittedRead), 1u) << r.summary();
  const Anomaly a = of_kind(r, AnomalyKind::UncommittedRead).at(0);
  EXPECT_EQ(a.txns, (Ids{2, 1}));
  EXPECT_NE(a.description.find("without writing"), std::string::npos) << a.description;
}

TEST(HistoryCheck, WriteOverUnknownVersionIsDetected) {
  const Report r = check(R"({"id": 1, "reads": [], "writes": [["t", 5, 0]]})"
                         "\n"
                         R"({"id": 2, "reads": [], "writes": [["t", 5, 8]]})");
  EXPECT_FALSE(r.serializable());
  ASSERT_EQ(r.count(AnomalyKind::UnknownPrevVersion), 1u) << r.summary();
  const Anomaly a = of_kind(r, AnomalyKind::UnknownPrevVersion).at(0);
  EXPECT_EQ(a.txns, (Ids{2, 8}));
  EXPECT_EQ(a.key, "t[5]");
}

TEST(HistoryCheck, WriteSkewRwCycleIsDetected) {
  // Both read x and y from the load; each writes the one the other read.
  //    T1     | T2     |
  //    -----------------
  //    R(x)   |        |
  //    R(y)   |        |
  //           | R(x)   |
  //           | R(y)   |
  //    W(x)   |        |   <- T2 read x@0: T2 -rw-> T1
  //           | W(y)   |   <- T1 read y@0: T1 -rw-> T2
  //    COMMIT | COMMIT |
  const Report r =
      check(R"({"id": 1, "reads": [["oncall", "x", 0], ["oncall", "y", 0]], "writes": [["oncall", "x", 0]]})"
            "\n"
            R"({"id": 2, "reads": [["oncall", "x", 0], ["oncall", "y", 0]], "writes": [["oncall", "y", 0]]})");
  EXPECT_FALSE(r.serializable());
  EXPECT_EQ(r.count(AnomalyKind::LostUpdate), 0u);
  ASSERT_EQ(r.count(AnomalyKind::Cycle), 1u) << r.summary();
  const Anomaly a = of_kind(r, AnomalyKind::Cycle).at(0);
  EXPECT_EQ(a.txns, (Ids{1, 2}));
  EXPECT_EQ(a.cycle_edges, (Edges{EdgeKind::RW, EdgeKind::RW}));
  EXPECT_NE(a.description.find("T1 -rw oncall[\"y\"]-> T2 -rw oncall[\"x\"]-> T1"), std::string::npos) << a.description;
}

TEST(HistoryCheck, WrWwCycleIsDetected) {
  //    T1     | T2     |
  //    -----------------
  //    W(x)   |        |
  //           | R(x)   |   <- reads T1's uncommitted x: T1 -wr-> T2
  //           | W(y)   |
  //           | COMMIT |
  //    W(y)   |        |   <- replaces T2's y: T2 -ww-> T1
  //    COMMIT |        |
  const Report r = check(R"({"id": 1, "reads": [], "writes": [["t", 1, 0], ["t", 2, 2]]})"
                         "\n"
                         R"({"id": 2, "reads": [["t", 1, 1]], "writes": [["t", 2, 0]]})");
  ASSERT_EQ(r.count(AnomalyKind::Cycle), 1u) << r.summary();
  EXPECT_EQ(r.count(AnomalyKind::UncommittedRead), 0u);
  EXPECT_EQ(r.count(AnomalyKind::UnknownPrevVersion), 0u);
  const Anomaly a = of_kind(r, AnomalyKind::Cycle).at(0);
  EXPECT_EQ(a.txns, (Ids{1, 2}));
  EXPECT_EQ(a.cycle_edges, (Edges{EdgeKind::WR, EdgeKind::WW}));
}

TEST(HistoryCheck, ReadOfLoadedVersionThenOverwriteGivesRwEdges) {
  //    T1     | T2     |
  //    -----------------
  //    R(x@0) |        |
  //           | R(y@0) |
  //           | W(x)   |   <- replaces the x T1 read: T1 -rw-> T2
  //    W(y)   |        |   <- replaces the y T2 read: T2 -rw-> T1
  //    COMMIT | COMMIT |
  const Report r = check(R"({"id": 1, "reads": [["t", 1, 0]], "writes": [["t", 2, 0]]})"
                         "\n"
                         R"({"id": 2, "reads": [["t", 2, 0]], "writes": [["t", 1, 0]]})");
  EXPECT_EQ(r.edges, 2u);
  ASSERT_EQ(r.count(AnomalyKind::Cycle), 1u) << r.summary();
  const Anomaly a = of_kind(r, AnomalyKind::Cycle).at(0);
  EXPECT_EQ(a.txns, (Ids{1, 2}));
  EXPECT_EQ(a.cycle_edges, (Edges{EdgeKind::RW, EdgeKind::RW}));
}

TEST(HistoryCheck, OwnReadsAndWritesMakeNoSelfLoops) {
  // T1 writes x and reads its own write; T2 reads x and then overwrites it;
  // T3 reads x, writes y twice in the log (the second over its own version).
  const Report r = check(R"({"id": 1, "reads": [["t", 1, 1]], "writes": [["t", 1, 0]]})"
                         "\n"
                         R"({"id": 2, "reads": [["t", 1, 1]], "writes": [["t", 1, 1]]})"
                         "\n"
                         R"({"id": 3, "reads": [["t", 1, 2], ["t", 2, 3]], "writes": [["t", 2, 0], ["t", 2, 3]]})");
  EXPECT_TRUE(r.serializable()) << r.summary();
  // 1->2: ww, wr, rw (T1 read its own x, which T2 replaced); 2->3: wr.
  EXPECT_EQ(r.edges, 4u);
}

TEST(HistoryCheck, StringAndIntegerKeysAndTablesAreDistinct) {
  // t[1], t["1"] and u[1] are three keys: three inserts, no lost update.
  const Report distinct = check(R"({"id": 1, "reads": [], "writes": [["t", 1, 0]]})"
                                "\n"
                                R"({"id": 2, "reads": [], "writes": [["t", "1", 0]]})"
                                "\n"
                                R"({"id": 3, "reads": [], "writes": [["u", 1, 0]]})");
  EXPECT_TRUE(distinct.serializable()) << distinct.summary();

  // Write skew over string keys, with a key too large for int64.
  const Report skew = check(
      R"({"id": 10, "reads": [["c", "alice", 0], ["c", 18446744073709551615, 0]], "writes": [["c", "alice", 0]]})"
      "\n"
      R"({"id": 11, "reads": [["c", "alice", 0], ["c", 18446744073709551615, 0]], "writes": [["c", 18446744073709551615, 0]]})");
  ASSERT_EQ(skew.count(AnomalyKind::Cycle), 1u) << skew.summary();
  const Anomaly a = of_kind(skew, AnomalyKind::Cycle).at(0);
  EXPECT_EQ(a.txns, (Ids{10, 11}));
  EXPECT_NE(a.description.find("c[\"alice\"]"), std::string::npos) << a.description;
  EXPECT_NE(a.description.find("c[18446744073709551615]"), std::string::npos) << a.description;
}

TEST(HistoryCheck, ThreeTransactionCycleIsReportedInOrderFromSmallestId) {
  //    T5      | T6      | T7
  //    ----------------------------
  //    R(a@0)  |         |
  //            | W(a)    |            <- T5 -rw-> T6
  //            | COMMIT  |
  //            |         | R(b@0)
  //            |         | R(a@6)     <- T6 -wr-> T7
  //    W(b)    |         |            <- T7 -rw-> T5
  //    COMMIT  |         | COMMIT
  const Report r = check(R"({"id": 7, "reads": [["t", "b", 0], ["t", "a", 6]], "writes": []})"
                         "\n"
                         R"({"id": 6, "reads": [], "writes": [["t", "a", 0]]})"
                         "\n"
                         R"({"id": 5, "reads": [["t", "a", 0]], "writes": [["t", "b", 0]]})");
  ASSERT_EQ(r.count(AnomalyKind::Cycle), 1u) << r.summary();
  const Anomaly a = of_kind(r, AnomalyKind::Cycle).at(0);
  EXPECT_EQ(a.txns, (Ids{5, 6, 7}));
  EXPECT_EQ(a.cycle_edges, (Edges{EdgeKind::RW, EdgeKind::WR, EdgeKind::RW}));
}

// ---- scans: predicate dependencies ---------------------------------------------

TEST(HistoryCheckScans, PhantomWriteSkewIsACycle) {
  //    T1                      | T2
  //    ----------------------------------------------
  //    scan t[0..10]: sees 1   |
  //                            | insert t[5]
  //                            | R(s@0)
  //    W(s)                    |
  //    COMMIT                  | COMMIT
  // T1 missed T2's insert (T1 -prw-> T2); T2 read s before T1 wrote it
  // (T2 -rw-> T1).
  const Report r = check(R"({"id": 1, "reads": [], "writes": [["s", 0, 0]], "scans": [["t", 0, 10, [[1, 0]]]]})"
                         "\n"
                         R"({"id": 2, "reads": [["s", 0, 0]], "writes": [["t", 5, 0, "insert"]]})");
  EXPECT_EQ(r.scans, 1u);
  EXPECT_EQ(r.reads, 2u);  // T1's scan saw t[1]: a read
  ASSERT_EQ(r.count(AnomalyKind::Cycle), 1u) << r.summary();
  const Anomaly a = of_kind(r, AnomalyKind::Cycle).at(0);
  EXPECT_EQ(a.txns, (Ids{1, 2}));
  EXPECT_EQ(a.cycle_edges, (Edges{EdgeKind::PRW, EdgeKind::RW}));
  EXPECT_NE(a.description.find("-prw t[5]-> T2"), std::string::npos) << a.description;
}

TEST(HistoryCheckScans, AScanThatSawTheInsertFollowsIt) {
  // As above, but T1's scan saw T2's row: T2 precedes T1 (wr, and rw on s).
  const Report r = check(R"({"id": 1, "reads": [], "writes": [["s", 0, 0]], "scans": [["t", 0, 10, [[1, 0], [5, 2]]]]})"
                         "\n"
                         R"({"id": 2, "reads": [["s", 0, 0]], "writes": [["t", 5, 0, "insert"]]})");
  EXPECT_TRUE(r.serializable()) << r.summary();
}

TEST(HistoryCheckScans, InsertOutsideTheRangeOrdersNothing) {
  const Report r =
      check(R"({"id": 1, "reads": [], "writes": [["s", 0, 0]], "scans": [["t", 0, 4, [[1, 0]]]]})"
            "\n"
            R"({"id": 2, "reads": [["s", 0, 0]], "writes": [["t", 5, 0, "insert"], ["u", 3, 0, "insert"]]})");
  EXPECT_TRUE(r.serializable()) << r.summary();
  EXPECT_EQ(r.edges, 1u);  // T2 -rw-> T1 on s only
}

TEST(HistoryCheckScans, MissingADeletedLoadedRowFollowsTheDelete) {
  // T2 deletes loaded t[3] and writes z; T1's scan does not see t[3] (after
  // the delete: T2 -pwr-> T1) yet T1 read z before T2 wrote it (T1 -rw-> T2).
  const Report r = check(R"({"id": 1, "reads": [["z", 0, 0]], "writes": [], "scans": [["t", 0, 10, []]]})"
                         "\n"
                         R"({"id": 2, "reads": [], "writes": [["t", 3, 0, "delete"], ["z", 0, 0]]})");
  ASSERT_EQ(r.count(AnomalyKind::Cycle), 1u) << r.summary();
  EXPECT_EQ(of_kind(r, AnomalyKind::Cycle).at(0).cycle_edges, (Edges{EdgeKind::RW, EdgeKind::PWR}));
  // Without the z conflict, T1 simply follows T2.
  EXPECT_TRUE(check(R"({"id": 1, "reads": [], "writes": [], "scans": [["t", 0, 10, []]]})"
                    "\n"
                    R"({"id": 2, "reads": [], "writes": [["t", 3, 0, "delete"]]})")
                  .serializable());
}

TEST(HistoryCheckScans, AKeyInsertedAndDeletedOrdersNothingWhenUnseen) {
  // t[5] lived and died within the history: an unseen t[5] may be before its
  // insert or after its delete, so no predicate edge is drawn (and no false
  // cycle is reported).
  const Report r = check(R"({"id": 1, "reads": [["s", 0, 0]], "writes": [["s", 1, 0]], "scans": [["t", 0, 10, []]]})"
                         "\n"
                         R"({"id": 2, "reads": [], "writes": [["t", 5, 0, "insert"]]})"
                         "\n"
                         R"({"id": 3, "reads": [["t", 5, 2], ["s", 1, 1]], "writes": [["t", 5, 2, "delete"]]})");
  EXPECT_TRUE(r.serializable()) << r.summary();
}

TEST(HistoryCheckScans, AScanDoesNotOrderItselfAfterItsOwnDelete) {
  const Report r = check(R"({"id": 1, "reads": [], "writes": [["t", 3, 0, "delete"]], "scans": [["t", 0, 10, []]]})");
  EXPECT_TRUE(r.serializable()) << r.summary();
  EXPECT_EQ(r.edges, 0u);
}

TEST(HistoryCheckScans, ASecondaryIndexScanIsCheckedAgainstTheIndexKeysOfInserts) {
  // As PhantomWriteSkewIsACycle, through t's index "by_v": T1 scans by_v
  // [940, 975] and sees nothing; T2 inserts t[5], whose by_v key is 945.
  const std::string t1 = R"({"id": 1, "reads": [], "writes": [["s", 0, 0]], "scans": [["t", 940, 975, [], "by_v"]]})";
  const Report r =
      check(t1 + "\n" + R"({"id": 2, "reads": [["s", 0, 0]], "writes": [["t", 5, 0, "insert", {"by_v": 945}]]})");
  EXPECT_EQ(r.scans, 1u);
  ASSERT_EQ(r.count(AnomalyKind::Cycle), 1u) << r.summary();
  EXPECT_EQ(of_kind(r, AnomalyKind::Cycle).at(0).cycle_edges, (Edges{EdgeKind::PRW, EdgeKind::RW}));
  // The index's keys are its own: primary key 945, or by_v key 990, or a
  // key of another index in the range, order nothing.
  for (const char* writes : {R"([["t", 945, 0, "insert"]])", R"([["t", 5, 0, "insert", {"by_v": 990}]])",
                             R"([["t", 5, 0, "insert", {"by_w": 945}]])"}) {
    EXPECT_TRUE(check(t1 + "\n" + R"({"id": 2, "reads": [["s", 0, 0]], "writes": )" + writes + "}").serializable())
        << writes;
  }
  // A secondary scan's keys seen are not reads: its rows are read by key.
  EXPECT_EQ(check(R"({"id": 1, "reads": [], "writes": [], "scans": [["t", 0, 975, [[945, 0]], "by_v"]]})").reads, 0u);
}

TEST(HistoryCheck, DuplicateIdIsReported) {
  const Report r = check(R"({"id": 1, "reads": [], "writes": [["t", 1, 0]]})"
                         "\n"
                         R"({"id": 1, "reads": [], "writes": [["t", 2, 0]]})");
  EXPECT_FALSE(r.serializable());
  EXPECT_EQ(r.transactions, 1u);
  ASSERT_EQ(r.count(AnomalyKind::DuplicateId), 1u);
  const Anomaly a = of_kind(r, AnomalyKind::DuplicateId).at(0);
  EXPECT_EQ(a.txns, (Ids{1}));
  EXPECT_NE(a.description.find("line 1"), std::string::npos) << a.description;
  EXPECT_NE(a.description.find("line 2"), std::string::npos) << a.description;
}

TEST(HistoryCheck, AnomalyDetailsAreCappedButAllCounted) {
  // 50 independent lost updates, one per key.
  std::string text;
  for (int k = 0; k < 50; k++) {
    for (int t = 0; t < 2; t++) {
      text += R"({"id": )" + std::to_string(2 * k + t + 1) + R"(, "reads": [], "writes": [["t", )" + std::to_string(k) +
              ", 0]]}\n";
    }
  }
  const Report r = check(text);
  EXPECT_EQ(r.count(AnomalyKind::LostUpdate), 50u);
  EXPECT_EQ(of_kind(r, AnomalyKind::LostUpdate).size(), kMaxKeptPerKind);
  EXPECT_NE(r.summary().find("lost update: 50"), std::string::npos) << r.summary();
}

struct Malformed {
  const char* line;
  const char* expected;  // part of the message
};

// GoogleTest prints a case as its line.
void PrintTo(const Malformed& m, std::ostream* os) { *os << m.line; }

class HistoryMalformed : public testing::TestWithParam<Malformed> {};

TEST_P(HistoryMalformed, ErrorNamesTheLine) {
  // A good line, a blank line, then the bad one: line numbers count every line.
  const std::string text = std::string(R"({"id": 1, "reads": [], "writes": []})") + "\n\n" + GetParam().line + "\n" +
                           R"({"id": 2, "reads": [], "writes": []})";
  std::istringstream in(text);
  try {
    (void)check_history(in, "h.jsonl");
    FAIL() << "accepted: " << GetParam().line;
  } catch (const HistoryFormatError& e) {
    EXPECT_EQ(e.line(), 3u);
    EXPECT_EQ(std::string(e.what()).rfind("h.jsonl:3: ", 0), 0u) << e.what();
    EXPECT_NE(e.message().find(GetParam().expected), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(
    History, HistoryMalformed,
    testing::Values(Malformed{R"({"id": 3, "reads": [)", "invalid JSON"},
                    Malformed{R"([3, [], []])", "expected a JSON object"},
                    Malformed{R"({"reads": [], "writes": []})", "missing field \"id\""},
                    Malformed{R"({"id": 0, "reads": [], "writes": []})", "\"id\" must be a positive integer"},
                    Malformed{R"({"id": -4, "reads": [], "writes": []})", "\"id\" must be a positive integer"},
                    Malformed{R"({"id": "3", "reads": [], "writes": []})", "\"id\" must be a positive integer"},
                    Malformed{R"({"id": 3, "writes": []})", "missing field \"reads\""},
                    Malformed{R"({"id": 3, "reads": {}, "writes": []})", "\"reads\" must be an array"},
                    Malformed{R"({"id": 3, "reads": [], "writes": [["t", 1]]})", "writes[0] must be"},
                    Malformed{R"({"id": 3, "reads": [], "writes": [[1, 1, 0]]})", "table must be a string"},
                    Malformed{R"({"id": 3, "reads": [["t", -1, 0]], "writes": []})", "key must be"},
                    Malformed{R"({"id": 3, "reads": [["t", 1.5, 0]], "writes": []})", "key must be"},
                    Malformed{R"({"id": 3, "reads": [["t", 1, 0], ["t", 1, "0"]], "writes": []})",
                              "reads[1][2]: writer_id must be"},
                    Malformed{R"({"id": 1, "reads": [], "writes": [["t", 1, null]]})", "prev_writer_id must be"},
                    Malformed{R"({"id": 1, "reads": [], "writes": [["t", 1, 0, "upsert"]]})",
                              "writes[0][3]: a write's kind must be"},
                    Malformed{R"({"id": 1, "reads": [["t", 1, 0, "insert"]], "writes": []})", "reads[0] must be"},
                    Malformed{R"({"id": 1, "reads": [], "writes": [], "scans": {}})", "\"scans\" must be an array"},
                    Malformed{R"({"id": 1, "reads": [], "writes": [], "scans": [["t", 0, 9]]})", "scans[0] must be"},
                    Malformed{R"({"id": 1, "reads": [], "writes": [], "scans": [[1, 0, 9, []]]})",
                              "scans[0][0]: table must be"},
                    Malformed{R"({"id": 1, "reads": [], "writes": [], "scans": [["t", 9, 0, []]]})", "lo <= hi"},
                    Malformed{R"({"id": 1, "reads": [], "writes": [], "scans": [["t", 0, 9, [[1]]]]})",
                              "scans[0][3][0] must be [key, writer_id]"},
                    Malformed{R"({"id": 1, "reads": [], "writes": [], "scans": [["t", 0, 9, [[10, 0]]]]})",
                              "outside the scanned range"},
                    Malformed{R"({"id": 1, "reads": [], "writes": [], "scans": [["t", 0, 9, [], 3]]})",
                              "scans[0][4]: index must be a non-empty string"},
                    Malformed{R"({"id": 1, "reads": [], "writes": [["t", 1, 0, "insert", [5]]]})",
                              "writes[0][4]: index keys must be an object"},
                    Malformed{R"({"id": 1, "reads": [], "writes": [["t", 1, 0, "insert", {"by_v": -1}]]})",
                              "writes[0][4]: index keys must map index names to non-negative integers"}),
    // Each case named by its position and the message it expects.
    [](const testing::TestParamInfo<Malformed>& info) {
      std::string name = "case" + std::to_string(info.index) + "_";
      for (const char* c = info.param.expected; *c != '\0'; c++) {
        const bool word = std::isalnum(static_cast<unsigned char>(*c)) != 0;
        if (word) {
          name += *c;
        } else if (name.back() != '_') {
          name += '_';
        }
      }
      if (name.back() == '_') name.pop_back();
      return name;
    });

TEST(HistoryCheck, FileInterface) {
  const std::string path = testing::TempDir() + "abyss_history_test.jsonl";
  {
    std::ofstream out(path);
    out << R"({"id": 1, "reads": [["t", 1, 0]], "writes": [["t", 2, 0]]})"
        << "\n"
        << R"({"id": 2, "reads": [["t", 2, 0]], "writes": [["t", 1, 0]]})"
        << "\n";
  }
  const Report r = check_history_file(path);
  std::remove(path.c_str());
  EXPECT_EQ(r.transactions, 2u);
  EXPECT_EQ(r.count(AnomalyKind::Cycle), 1u);
}

// ---- input that cannot be read ------------------------------------------------
// InputError, never a verdict: `abyss check history` exits 2 on it.

// A file of `text` under the test temp dir; removed by the caller.
std::string history_file(const std::string& name, const std::string& text) {
  const std::string path = testing::TempDir() + "abyss_history_" + name + ".jsonl";
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  return path;
}

InputError input_error(const std::string& path) {
  try {
    const Report r = check_history_file(path);
    ADD_FAILURE() << "no InputError; the check said: " << r.summary();
  } catch (const InputError& e) {
    return e;
  }
  return InputError("", 0, "");
}

const std::string kGoodLines = R"({"id": 1, "reads": [], "writes": [["t", 1, 0]]})"
                               "\n"
                               R"({"id": 2, "reads": [["t", 1, 1]], "writes": [["t", 1, 1]]})"
                               "\n";

TEST(HistoryCheckInput, TruncatedFileNamesTheCutLine) {
  // The writer died in the middle of line 3.
  const std::string path = history_file("truncated", kGoodLines + R"({"id": 3, "reads": [["t", 1, 2)");
  const InputError e = input_error(path);
  std::remove(path.c_str());
  EXPECT_EQ(e.source(), path);
  EXPECT_EQ(e.line(), 3u);
  EXPECT_EQ(std::string(e.what()).rfind(path + ":3: invalid JSON at column ", 0), 0u) << e.what();
}

TEST(HistoryCheckInput, GarbledLineNamesTheLine) {
  const std::string path = history_file("garbled", kGoodLines + "\x01\x7fgarbage}\n" + kGoodLines);
  EXPECT_THROW((void)check_history_file(path), HistoryFormatError) << "a format error is a HistoryFormatError";
  const InputError e = input_error(path);
  std::remove(path.c_str());
  EXPECT_EQ(e.line(), 3u);
  EXPECT_EQ(std::string(e.what()).rfind(path + ":3: invalid JSON at column 1: ", 0), 0u) << e.what();
  EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "one line";
}

TEST(HistoryCheckInput, GarbledJsonInsideALineNamesLineAndColumn) {
  const std::string path = history_file("garbled_json", kGoodLines + R"({"id": 3, "reads": [}, "writes": []})" + "\n");
  const InputError e = input_error(path);
  std::remove(path.c_str());
  EXPECT_EQ(e.line(), 3u);
  EXPECT_EQ(std::string(e.what()).rfind(path + ":3: invalid JSON at column 21: ", 0), 0u) << e.what();
}

TEST(HistoryCheckInput, MissingFileNamesTheFileAndTheReason) {
  const std::string path = "/nonexistent-abyss-dir/history.jsonl";
  const InputError e = input_error(path);
  EXPECT_EQ(e.line(), 0u);
  EXPECT_EQ(std::string(e.what()), path + ": cannot open: No such file or directory");
}

TEST(HistoryCheckInput, DirectoryIsNotAnEmptyHistory) {
  const InputError e = input_error(testing::TempDir());
  EXPECT_NE(e.message().find("is a directory"), std::string::npos) << e.what();
}

// Decided: an empty log is the valid history of a run that committed nothing
// (docs/formats.md), so it is serializable, not unreadable.
TEST(HistoryCheckInput, EmptyFileIsTheHistoryOfNoTransactions) {
  const std::string path = history_file("empty", "");
  const Report r = check_history_file(path);
  std::remove(path.c_str());
  EXPECT_TRUE(r.serializable());
  EXPECT_EQ(r.transactions, 0u);
}

TEST(HistoryCheckInput, LastLineWithoutNewlineIsAccepted) {
  // JSON Lines allows it, and a line cut short is invalid JSON anyway.
  const std::string path = history_file("no_newline", kGoodLines.substr(0, kGoodLines.size() - 1));
  const Report r = check_history_file(path);
  std::remove(path.c_str());
  EXPECT_TRUE(r.serializable()) << r.summary();
  EXPECT_EQ(r.transactions, 2u);
}

// Transaction i of a chain: reads the x that transaction i - 1 wrote and
// replaces it, plus optional extra entries (JSON text starting with a comma).
std::string chain_line(uint64_t i, const std::string& extra_read = "", const std::string& extra_write = "") {
  const std::string prev = std::to_string(i - 1);
  return R"({"id": )" + std::to_string(i) + R"(, "reads": [["t", 1, )" + prev + "]" + extra_read +
         R"(], "writes": [["t", 1, )" + prev + "]" + extra_write + "]}\n";
}

TEST(HistoryCheck, LargeSerialChainIsCheckedIteratively) {
  // A path of 200k transactions: a recursive DFS would go 200k frames deep.
  constexpr uint64_t kN = 200'000;
  std::string text;
  // Back to front, so the search does not meet the chain in order.
  for (uint64_t i = kN; i >= 1; i--) text += chain_line(i);
  const Report r = check(text);
  EXPECT_TRUE(r.serializable()) << r.summary();
  EXPECT_EQ(r.transactions, kN);
  EXPECT_EQ(r.edges, 2 * (kN - 1));  // ww and wr between neighbours
}

TEST(HistoryCheck, LargeCycleIsFoundWhole) {
  // The chain T1 -> ... -> T200000, closed by one anti-dependency: the last
  // transaction read y from the load and the first replaced it.
  constexpr uint64_t kN = 200'000;
  const std::string y = R"(, ["t", 2, 0])";
  std::string text;
  for (uint64_t i = kN; i >= 1; i--) text += chain_line(i, i == kN ? y : "", i == 1 ? y : "");
  const Report r = check(text);
  ASSERT_EQ(r.count(AnomalyKind::Cycle), 1u) << r.summary().substr(0, 500);
  const Anomaly a = of_kind(r, AnomalyKind::Cycle).at(0);
  ASSERT_EQ(a.txns.size(), kN);
  for (uint64_t i = 0; i < kN; i++) ASSERT_EQ(a.txns[i], i + 1);
  EXPECT_EQ(a.cycle_edges.front(), EdgeKind::WW);
  EXPECT_EQ(a.cycle_edges.back(), EdgeKind::RW);
}

// ---- classification: Adya's phenomena and the strongest level held -------------

// The phenomena a report found, by name, in Phenomenon order.
std::vector<std::string> phenomena_of(const Report& r) {
  std::vector<std::string> out;
  for (size_t p = 0; p < kPhenomena; p++) {
    if (r.phenomena[p] > 0) out.emplace_back(to_string(static_cast<Phenomenon>(p)));
  }
  return out;
}
using Names = std::vector<std::string>;

TEST(HistoryClassify, ASerialHistoryIsSerializableWithNoPhenomenon) {
  const Report r = check(R"({"id": 1, "reads": [], "writes": [["t", 1, 0]]})"
                         "\n"
                         R"({"id": 2, "reads": [["t", 1, 1]], "writes": [["t", 1, 1]]})");
  EXPECT_EQ(r.strongest_level(), Level::Serializable);
  EXPECT_EQ(phenomena_of(r), Names{});
  EXPECT_TRUE(r.summary().ends_with("serializable.")) << r.summary();
}

TEST(HistoryClassify, AWriteCycleIsG0AndHoldsNoLevel) {
  // x's versions: 0, T1, T2; y's: 0, T2, T1. Each overwrote the other.
  const Report r = check(R"({"id": 1, "reads": [], "writes": [["t", "x", 0], ["t", "y", 2]]})"
                         "\n"
                         R"({"id": 2, "reads": [], "writes": [["t", "x", 1], ["t", "y", 0]]})");
  EXPECT_EQ(phenomena_of(r), (Names{"G0"})) << r.summary();
  EXPECT_EQ(r.examples[static_cast<size_t>(Phenomenon::G0)], R"(T1 -ww t["x"]-> T2 -ww t["y"]-> T1)");
  EXPECT_EQ(r.strongest_level(), Level::None);
}

TEST(HistoryClassify, AnAbortedReadIsG1a) {
  const Report r = check(R"({"id": 2, "reads": [["t", 1, 9]], "writes": []})");
  EXPECT_EQ(phenomena_of(r), (Names{"G1a"})) << r.summary();
  EXPECT_EQ(r.strongest_level(), Level::None);
}

TEST(HistoryClassify, ACycleOfReadDependenciesIsG1c) {
  // Each read the other's write: T1 -wr-> T2 (x) and T2 -wr-> T1 (y).
  const Report r = check(R"({"id": 1, "reads": [["t", "y", 2]], "writes": [["t", "x", 0]]})"
                         "\n"
                         R"({"id": 2, "reads": [["t", "x", 1]], "writes": [["t", "y", 0]]})");
  EXPECT_EQ(phenomena_of(r), (Names{"G1c"})) << r.summary();
  EXPECT_EQ(r.strongest_level(), Level::None);
}

TEST(HistoryClassify, ReadSkewIsGSingleAndHoldsReadCommitted) {
  // T1 read x before T2 replaced it, and y after T2 wrote it:
  // T1 -rw-> T2 (x), T2 -wr-> T1 (y), one anti-dependency.
  const Report r = check(R"({"id": 1, "reads": [["t", "x", 0], ["t", "y", 2]], "writes": []})"
                         "\n"
                         R"({"id": 2, "reads": [], "writes": [["t", "x", 0], ["t", "y", 0]]})");
  EXPECT_EQ(phenomena_of(r), (Names{"G-single", "G2-item"})) << r.summary();
  EXPECT_EQ(r.examples[static_cast<size_t>(Phenomenon::GSingle)], R"(T1 -rw t["x"]-> T2 -wr t["y"]-> T1)");
  EXPECT_EQ(r.strongest_level(), Level::ReadCommitted);
}

TEST(HistoryClassify, ALostUpdateHoldsReadCommittedOnly) {
  const Report r = check(R"({"id": 1, "reads": [], "writes": [["acct", 7, 0]]})"
                         "\n"
                         R"({"id": 2, "reads": [["acct", 7, 1]], "writes": [["acct", 7, 1]]})"
                         "\n"
                         R"({"id": 3, "reads": [["acct", 7, 1]], "writes": [["acct", 7, 1]]})");
  EXPECT_GT(r.count(Phenomenon::LostUpdate), 0u) << r.summary();
  EXPECT_EQ(r.strongest_level(), Level::ReadCommitted);
}

TEST(HistoryClassify, WriteSkewIsG2ItemAndHoldsSnapshotIsolation) {
  // Both read x and y at the load; T1 wrote x, T2 wrote y: two anti-dependencies.
  const Report r =
      check(R"({"id": 1, "reads": [["oncall", "x", 0], ["oncall", "y", 0]], "writes": [["oncall", "x", 0]]})"
            "\n"
            R"({"id": 2, "reads": [["oncall", "x", 0], ["oncall", "y", 0]], "writes": [["oncall", "y", 0]]})");
  EXPECT_EQ(phenomena_of(r), (Names{"G2-item"})) << r.summary();
  EXPECT_EQ(r.strongest_level(), Level::Snapshot);
  EXPECT_NE(r.summary().find("strongest isolation level held: snapshot."), std::string::npos) << r.summary();
}

TEST(HistoryClassify, APhantomIsG2) {
  // T1's scan missed T2's insert (prw); T2 read s before T1 wrote it (rw).
  const Report r = check(R"({"id": 1, "reads": [], "writes": [["s", 0, 0]], "scans": [["t", 0, 10, [[1, 0]]]]})"
                         "\n"
                         R"({"id": 2, "reads": [["s", 0, 0]], "writes": [["t", 5, 0, "insert"]]})");
  EXPECT_EQ(phenomena_of(r), (Names{"G2-item", "G2"})) << r.summary();
  EXPECT_EQ(r.strongest_level(), Level::Snapshot);
}

TEST(HistoryClassify, APhantomReadSkewIsGSingle) {
  // T1's scan missed T2's insert (prw), and T1 read y, which T2 wrote (wr).
  const Report r = check(R"({"id": 1, "reads": [["t", 100, 2]], "writes": [], "scans": [["t", 0, 10, [[1, 0]]]]})"
                         "\n"
                         R"({"id": 2, "reads": [], "writes": [["t", 5, 0, "insert"], ["t", 100, 0]]})");
  EXPECT_EQ(phenomena_of(r), (Names{"G-single", "G2"})) << r.summary();
  EXPECT_EQ(r.strongest_level(), Level::ReadCommitted);
}

TEST(HistoryClassify, LevelsAreNamedAndParsedAlike) {
  for (size_t i = 0; i < kLevels; i++) {
    Level parsed{};
    ASSERT_TRUE(parse_level(to_string(static_cast<Level>(i)), parsed));
    EXPECT_EQ(parsed, static_cast<Level>(i));
  }
  Level parsed{};
  EXPECT_FALSE(parse_level("repeatable-read", parsed));
}

}  // namespace
}  // namespace abyss::check
