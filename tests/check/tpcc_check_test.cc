// The TPC-C consistency checker (clause 3.3.2) can fail: a run's dump passes,
// and one corrupted value makes exactly the conditions that depend on it fail.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "check/tpcc.h"
#include "common/config.h"
#include "engine/engine.h"

namespace abyss {
namespace {

namespace fs = std::filesystem;

// One dump of a short NO_WAIT run, shared by the tests (copied before each
// corruption).
const std::string& clean_dump() {
  static const std::string dir = [] {
    const std::string d = testing::TempDir() + "abyss_tpcc_check_" + std::to_string(::getpid());
    fs::remove_all(d);
    Config cfg;
    cfg.workload = WorkloadKind::Tpcc;
    cfg.tpcc.schema = TpccSchema::Small;
    cfg.tpcc.warehouses = 1;
    cfg.cc = "no_wait";
    cfg.threads = 1;
    cfg.duration_s = 0.05;
    cfg.warmup_s = 0;
    cfg.dump_dir = d;
    (void)run(cfg);
    return d;
  }();
  return dir;
}

std::string copy_dump(const std::string& what) {
  const std::string d = clean_dump() + "_" + what;
  fs::remove_all(d);
  fs::copy(clean_dump(), d);
  return d;
}

// Adds `delta` to column `column` of the `row`-th data row of DIR/<table>.csv.
void corrupt(const std::string& dir, const std::string& table, const std::string& column, std::size_t row,
             int64_t delta) {
  const std::string path = dir + "/" + table + ".csv";
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  in.close();
  ASSERT_GT(lines.size(), row + 1);
  std::vector<std::string> header;
  {
    std::stringstream ss(lines[0]);
    for (std::string f; std::getline(ss, f, ',');) header.push_back(f);
  }
  const auto col = static_cast<std::size_t>(std::find(header.begin(), header.end(), column) - header.begin());
  ASSERT_LT(col, header.size());
  // The corrupted columns are integers that precede any quoted text or the
  // text has no commas (generated alphanumerics), so splitting on ',' is safe.
  std::vector<std::string> fields;
  {
    std::stringstream ss(lines[row + 1]);
    for (std::string f; std::getline(ss, f, ',');) fields.push_back(f);
  }
  fields[col] = std::to_string(std::stoll(fields[col]) + delta);
  std::string joined;
  for (std::size_t i = 0; i < fields.size(); i++) joined += (i ? "," : "") + fields[i];
  lines[row + 1] = joined;
  std::ofstream out(path);
  for (const auto& l : lines) out << l << '\n';
}

std::vector<int> failing(const check::TpccReport& r) {
  std::vector<int> f;
  for (const auto& c : r.conditions) {
    if (c.checked && !c.pass) f.push_back(c.clause);
  }
  return f;
}

TEST(TpccCheck, CleanRunPassesEveryCondition) {
  const auto r = check::check_tpcc_dir(clean_dump());
  ASSERT_EQ(r.conditions.size(), 8u);
  EXPECT_TRUE(r.all_pass()) << r.summary();
  EXPECT_NE(r.summary().find("3.3.2.11"), std::string::npos);
}

TEST(TpccCheck, CorruptWarehouseYtdFailsConditionsOneAndEight) {
  const std::string d = copy_dump("w_ytd");
  corrupt(d, "warehouse", "W_YTD", 0, 1);
  const auto r = check::check_tpcc_dir(d);
  EXPECT_FALSE(r.all_pass());
  EXPECT_EQ(failing(r), (std::vector<int>{1, 8})) << r.summary();
  EXPECT_NE(r.summary().find("FAIL"), std::string::npos);
  fs::remove_all(d);
}

TEST(TpccCheck, CorruptNextOrderIdFailsConditionTwo) {
  const std::string d = copy_dump("next_o_id");
  corrupt(d, "district", "D_NEXT_O_ID", 3, 1);
  EXPECT_EQ(failing(check::check_tpcc_dir(d)), (std::vector<int>{2}));
  fs::remove_all(d);
}

TEST(TpccCheck, CorruptOrderLineCountFailsConditionsFourAndSix) {
  const std::string d = copy_dump("ol_cnt");
  corrupt(d, "order", "O_OL_CNT", 17, 1);
  EXPECT_EQ(failing(check::check_tpcc_dir(d)), (std::vector<int>{4, 6}));
  fs::remove_all(d);
}

TEST(TpccCheck, CorruptHistoryAmountFailsConditionsEightAndNine) {
  const std::string d = copy_dump("h_amount");
  corrupt(d, "history", "H_AMOUNT", 5, -1);
  EXPECT_EQ(failing(check::check_tpcc_dir(d)), (std::vector<int>{8, 9}));
  fs::remove_all(d);
}

TEST(TpccCheck, CorruptNewOrderIdFailsConditionsTwoAndThree) {
  const std::string d = copy_dump("no_o_id");
  // Moving one undelivered order's id far past the others breaks both.
  corrupt(d, "new_order", "NO_O_ID", 0, 1'000'000);
  EXPECT_EQ(failing(check::check_tpcc_dir(d)), (std::vector<int>{2, 3}));
  fs::remove_all(d);
}

TEST(TpccCheck, MissingTableIsAnError) {
  const std::string d = copy_dump("missing");
  fs::remove(d + "/order_line.csv");
  EXPECT_THROW((void)check::check_tpcc_dir(d), std::runtime_error);
  fs::remove_all(d);
}

}  // namespace
}  // namespace abyss
