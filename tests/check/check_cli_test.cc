// The exit codes of `abyss check history FILE` and `abyss check tpcc DIR`
// (docs/formats.md): 0 the property holds, 1 only when the data violates it,
// 2 when the input cannot be read, with ONE line on stderr naming the file,
// the line and the reason. The binary runs as a child process, as a script
// runs it.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "dump_fixture.h"
#include "support/run_abyss.h"

namespace abyss {
namespace {

namespace fs = std::filesystem;
using testing_dump::copy_dump;
using testing_dump::Csv;
using testing_dump::table;

using test::Outcome;
using test::run_abyss;
using test::temp_path;

// Exit 2, nothing on stdout, and one newline-terminated line on stderr that
// starts with `prefix`.
void expect_unreadable(const Outcome& o, const std::string& prefix) {
  SCOPED_TRACE(o.command);
  EXPECT_EQ(o.exit_code, 2) << o.out << o.err;
  EXPECT_EQ(o.out, "");
  ASSERT_FALSE(o.err.empty());
  EXPECT_EQ(o.err.find('\n'), o.err.size() - 1) << "not one line:\n" << o.err;
  EXPECT_EQ(o.err.rfind(prefix, 0), 0u) << o.err;
}

// ---- check history ------------------------------------------------------------

std::string history_file(const std::string& text) {
  const std::string path = temp_path("history.jsonl");
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

TEST(CheckCliHistory, GarbledLogExitsTwoNamingFileAndLine) {
  const std::string path = history_file(R"({"id": 1, "reads": [], "writes": []})"
                                        "\n"
                                        R"({"id": 2, "reads": [)");
  const Outcome o = run_abyss({"check", "history", path});
  fs::remove(path);
  expect_unreadable(o, "abyss: " + path + ":2: invalid JSON at column ");
}

TEST(CheckCliHistory, MalformedEntryExitsTwo) {
  const std::string path = history_file(R"({"id": 1, "reads": [["t", 1, "0"]], "writes": []})"
                                        "\n");
  const Outcome o = run_abyss({"check", "history", path});
  fs::remove(path);
  expect_unreadable(o, "abyss: " + path + ":1: reads[0][2]: writer_id must be");
}

TEST(CheckCliHistory, MissingFileExitsTwo) {
  const std::string path = "/nonexistent-abyss-dir/history.jsonl";
  const Outcome o = run_abyss({"check", "history", path});
  expect_unreadable(o, "abyss: ");
  EXPECT_NE(o.err.find(path), std::string::npos) << o.err;
}

TEST(CheckCliHistory, EmptyLogExitsZero) {
  const std::string path = history_file("");
  const Outcome o = run_abyss({"check", "history", path});
  fs::remove(path);
  SCOPED_TRACE(o.command);
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_NE(o.out.find("checked 0 transactions"), std::string::npos) << o.out;
  EXPECT_EQ(o.err, "");
}

TEST(CheckCliHistory, CycleExitsOne) {
  // Write skew: each reads both keys from the load and writes one of them.
  const std::string path = history_file(R"({"id": 1, "reads": [["t", 1, 0], ["t", 2, 0]], "writes": [["t", 1, 0]]})"
                                        "\n"
                                        R"({"id": 2, "reads": [["t", 1, 0], ["t", 2, 0]], "writes": [["t", 2, 0]]})"
                                        "\n");
  const Outcome o = run_abyss({"check", "history", path});
  fs::remove(path);
  SCOPED_TRACE(o.command);
  EXPECT_EQ(o.exit_code, 1) << o.out << o.err;
  EXPECT_NE(o.out.find("NOT serializable"), std::string::npos) << o.out;
  EXPECT_EQ(o.err, "");
}

// Write skew holds snapshot isolation: --expect snapshot (or weaker) exits
// 0, serializable 1, and a level it does not know 2 with one line.
TEST(CheckCliHistory, ExpectGivesTheLevelTheExitCodeIsAbout) {
  const std::string path = history_file(R"({"id": 1, "reads": [["t", 1, 0], ["t", 2, 0]], "writes": [["t", 1, 0]]})"
                                        "\n"
                                        R"({"id": 2, "reads": [["t", 1, 0], ["t", 2, 0]], "writes": [["t", 2, 0]]})"
                                        "\n");
  for (const auto& [level, code] : std::vector<std::pair<std::string, int>>{
           {"serializable", 1}, {"snapshot", 0}, {"read-committed", 0}, {"none", 0}}) {
    const Outcome o = run_abyss({"check", "history", path, "--expect", level});
    SCOPED_TRACE(o.command);
    EXPECT_EQ(o.exit_code, code) << o.out << o.err;
    EXPECT_NE(o.out.find("G2-item: 1, e.g. T1 -rw t[2]-> T2 -rw t[1]-> T1"), std::string::npos) << o.out;
    EXPECT_NE(o.out.find("strongest isolation level held: snapshot."), std::string::npos) << o.out;
  }
  const Outcome bad = run_abyss({"check", "history", path, "--expect", "repeatable-read"});
  fs::remove(path);
  EXPECT_EQ(bad.exit_code, 2) << bad.out << bad.err;
  EXPECT_NE(bad.err.find("--expect"), std::string::npos) << bad.err;
}

// ---- check tpcc ----------------------------------------------------------------

TEST(CheckCliTpcc, CleanDumpExitsZero) {
  const Outcome o = run_abyss({"check", "tpcc", testing_dump::clean_dump()});
  SCOPED_TRACE(o.command);
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_NE(o.out.find("all 12 checked conditions pass"), std::string::npos) << o.out;
  EXPECT_EQ(o.err, "");
}

TEST(CheckCliTpcc, LostPaymentUpdateExitsOne) {
  const std::string d = copy_dump("cli_lost_payment");
  ASSERT_TRUE(testing_dump::lose_one_payment_on_customer(d));
  const Outcome o = run_abyss({"check", "tpcc", d});
  fs::remove_all(d);
  SCOPED_TRACE(o.command);
  EXPECT_EQ(o.exit_code, 1) << o.out << o.err;
  EXPECT_NE(o.out.find("3.3.2.10  C_BALANCE"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("consistency check failed: condition 10 fails (of 12 checked)"), std::string::npos) << o.out;
  EXPECT_EQ(o.err, "");
}

TEST(CheckCliTpcc, InsertsOffDumpExitsZeroWithSkippedConditions) {
  const Outcome o = run_abyss({"check", "tpcc", "--tpcc-inserts", "off", testing_dump::clean_dump(false)});
  SCOPED_TRACE(o.command);
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_NE(o.out.find("skipped: the run made no inserts (--tpcc-inserts off)"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("; skipped: 2, 8, 9, 10"), std::string::npos) << o.out;
}

TEST(CheckCliTpcc, OverflowingIntegerExitsTwoNamingFileLineColumnAndValue) {
  const std::string d = copy_dump("cli_overflow");
  Csv t = table(d, "customer");
  t.set(3, "C_BALANCE", "99999999999999999999");
  t.save();
  const Outcome o = run_abyss({"check", "tpcc", d});
  fs::remove_all(d);
  expect_unreadable(o, "abyss: " + d + "/customer.csv:" + std::to_string(Csv::line_of(3)) +
                           ": column C_BALANCE: '99999999999999999999' overflows a 64-bit integer");
}

TEST(CheckCliTpcc, MissingTableExitsTwo) {
  const std::string d = copy_dump("cli_missing_table");
  fs::remove(d + "/customer.csv");
  const Outcome o = run_abyss({"check", "tpcc", d});
  fs::remove_all(d);
  expect_unreadable(o, "abyss: " + d + "/customer.csv: cannot open: No such file or directory");
}

TEST(CheckCliTpcc, MissingDirectoryExitsTwo) {
  const std::string d = "/nonexistent-abyss-dir/dump";
  const Outcome o = run_abyss({"check", "tpcc", d});
  expect_unreadable(o, "abyss: ");
  EXPECT_NE(o.err.find(d), std::string::npos) << o.err;
}

}  // namespace
}  // namespace abyss
