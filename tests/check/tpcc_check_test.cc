// The TPC-C consistency checker (clause 3.3.2) can fail: a run's dump passes,
// and one corrupted value makes exactly the conditions that depend on it fail.
// A dump it cannot read is an InputError naming the file and line, never a
// verdict.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <ostream>
#include <string>
#include <vector>

#include "check/tpcc.h"

#include "dump_fixture.h"

namespace abyss {
namespace {

namespace fs = std::filesystem;
using testing_dump::clean_dump;
using testing_dump::copy_dump;
using testing_dump::Csv;
using testing_dump::table;

std::vector<int> failing(const check::TpccReport& r) {
  std::vector<int> f;
  for (const auto& c : r.conditions) {
    if (c.checked && !c.pass) f.push_back(c.clause);
  }
  return f;
}

std::vector<int> skipped(const check::TpccReport& r) {
  std::vector<int> s;
  for (const auto& c : r.conditions) {
    if (!c.checked) s.push_back(c.clause);
  }
  return s;
}

TEST(TpccCheck, CleanRunPassesEveryCondition) {
  const auto r = check::check_tpcc_dir(clean_dump());
  ASSERT_EQ(r.conditions.size(), 12u);
  for (std::size_t i = 0; i < r.conditions.size(); i++) EXPECT_EQ(r.conditions[i].clause, static_cast<int>(i + 1));
  EXPECT_TRUE(r.all_pass()) << r.summary();
  EXPECT_EQ(skipped(r), std::vector<int>{});
  EXPECT_NE(r.summary().find("3.3.2.10  C_BALANCE"), std::string::npos) << r.summary();
  EXPECT_NE(r.summary().find("all 12 checked conditions pass"), std::string::npos) << r.summary();
}

TEST(TpccCheck, CorruptWarehouseYtdFailsConditionsOneAndEight) {
  const std::string d = copy_dump("w_ytd");
  Csv w = table(d, "warehouse");
  w.add(0, "W_YTD", 1);
  w.save();
  const auto r = check::check_tpcc_dir(d);
  EXPECT_FALSE(r.all_pass());
  EXPECT_EQ(failing(r), (std::vector<int>{1, 8})) << r.summary();
  EXPECT_NE(r.summary().find("FAIL"), std::string::npos);
  EXPECT_NE(r.summary().find("consistency check failed: conditions 1, 8 fail"), std::string::npos) << r.summary();
  fs::remove_all(d);
}

TEST(TpccCheck, CorruptNextOrderIdFailsConditionTwo) {
  const std::string d = copy_dump("next_o_id");
  Csv t = table(d, "district");
  t.add(3, "D_NEXT_O_ID", 1);
  t.save();
  EXPECT_EQ(failing(check::check_tpcc_dir(d)), (std::vector<int>{2}));
  fs::remove_all(d);
}

TEST(TpccCheck, CorruptOrderLineCountFailsConditionsFourAndSix) {
  const std::string d = copy_dump("ol_cnt");
  Csv t = table(d, "order");
  t.add(17, "O_OL_CNT", 1);
  t.save();
  EXPECT_EQ(failing(check::check_tpcc_dir(d)), (std::vector<int>{4, 6}));
  fs::remove_all(d);
}

TEST(TpccCheck, CorruptHistoryAmountFailsConditionsEightNineAndTen) {
  const std::string d = copy_dump("h_amount");
  Csv t = table(d, "history");
  t.add(5, "H_AMOUNT", -1);
  t.save();
  // The row belongs to a warehouse, a district and a customer (3.3.2.10).
  EXPECT_EQ(failing(check::check_tpcc_dir(d)), (std::vector<int>{8, 9, 10}));
  fs::remove_all(d);
}

TEST(TpccCheck, CorruptNewOrderIdFailsConditionsTwoThreeFiveAndEleven) {
  const std::string d = copy_dump("no_o_id");
  Csv t = table(d, "new_order");
  // Moving the oldest undelivered order's id far past the others breaks 2
  // and 3, leaves that order with a null carrier and no NEW-ORDER row (5),
  // and leaves an order below the oldest NEW-ORDER row undelivered (11).
  // Rows are dumped in slot order, and a slot freed by a delivered order may
  // hold a newer one: find a district's oldest by its id.
  const auto oldest_of_its_district = [&](std::size_t r) {
    return t.find([&](std::size_t o) {
      return t.get(o, "NO_W_ID") == t.get(r, "NO_W_ID") && t.get(o, "NO_D_ID") == t.get(r, "NO_D_ID") &&
             t.get(o, "NO_O_ID") < t.get(r, "NO_O_ID");
    }) == t.rows.size();
  };
  const std::size_t oldest = t.find(oldest_of_its_district);
  ASSERT_LT(oldest, t.rows.size());
  t.add(oldest, "NO_O_ID", 1'000'000);
  t.save();
  EXPECT_EQ(failing(check::check_tpcc_dir(d)), (std::vector<int>{2, 3, 5, 11}));
  fs::remove_all(d);
}

TEST(TpccCheck, CarrierOfAnUndeliveredOrderFailsConditionsFiveAndSeven) {
  const std::string d = copy_dump("carrier");
  Csv t = table(d, "order");
  const std::size_t row = t.find([&](std::size_t r) { return t.get(r, "O_CARRIER_ID") == 0; });
  ASSERT_LT(row, t.rows.size());
  t.set(row, "O_CARRIER_ID", "3");
  t.save();
  // It still has its NEW-ORDER row (5) and its lines no delivery date (7).
  EXPECT_EQ(failing(check::check_tpcc_dir(d)), (std::vector<int>{5, 7}));
  fs::remove_all(d);
}

TEST(TpccCheck, NullDeliveryDateOfADeliveredLineFailsConditionSeven) {
  const std::string d = copy_dump("delivery_d");
  Csv t = table(d, "order_line");
  // A loaded delivered line: OL_AMOUNT 0, so no customer sum moves.
  const std::size_t row = t.find([&](std::size_t r) { return t.get(r, "OL_DELIVERY_D") != 0; });
  ASSERT_LT(row, t.rows.size());
  t.set(row, "OL_DELIVERY_D", "0");
  t.save();
  EXPECT_EQ(failing(check::check_tpcc_dir(d)), (std::vector<int>{7}));
  fs::remove_all(d);
}

// The negative control of 3.3.2.10: a Payment whose HISTORY row and
// WAREHOUSE/DISTRICT totals are there but whose CUSTOMER update was lost.
TEST(TpccCheck, LostPaymentUpdateOnCustomerFailsConditionTen) {
  const std::string d = copy_dump("lost_payment");
  ASSERT_TRUE(testing_dump::lose_one_payment_on_customer(d)) << "the run made no Payment";
  const auto r = check::check_tpcc_dir(d);
  EXPECT_FALSE(r.all_pass());
  // C_BALANCE and C_YTD_PAYMENT lost the same amount, so 12 still holds.
  EXPECT_EQ(failing(r), (std::vector<int>{10})) << r.summary();
  EXPECT_NE(r.summary().find("C_ID="), std::string::npos) << r.summary();
  fs::remove_all(d);
}

TEST(TpccCheck, ChangedCustomerBalanceFailsConditionsTenAndTwelve) {
  const std::string d = copy_dump("c_balance");
  Csv t = table(d, "customer");
  t.add(7, "C_BALANCE", 1234);
  t.save();
  EXPECT_EQ(failing(check::check_tpcc_dir(d)), (std::vector<int>{10, 12}));
  fs::remove_all(d);
}

// ---- --tpcc-inserts off ---------------------------------------------------------

TEST(TpccCheckInsertsOff, ConditionsOnInsertedRowsAreSkippedWithTheReason) {
  const auto r = check::check_tpcc_dir(clean_dump(false), false);
  EXPECT_TRUE(r.all_pass()) << r.summary();
  EXPECT_EQ(skipped(r), (std::vector<int>{2, 8, 9, 10})) << r.summary();
  for (const auto& c : r.conditions) {
    if (!c.checked) {
      EXPECT_NE(c.skip_reason.find("--tpcc-inserts off"), std::string::npos) << c.skip_reason;
    }
  }
  const std::string s = r.summary();
  EXPECT_NE(s.find("3.3.2.10  C_BALANCE = sum(delivered OL_AMOUNT) - sum(H_AMOUNT) of each customer  skipped: the run "
                   "made no inserts (--tpcc-inserts off)"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("all 8 checked conditions pass; skipped: 2, 8, 9, 10"), std::string::npos) << s;
  EXPECT_TRUE(r.note.empty()) << r.note;
}

TEST(TpccCheckInsertsOff, CheckedAsIfInsertsWereOnFailsWithANote) {
  const auto r = check::check_tpcc_dir(clean_dump(false), true);
  EXPECT_EQ(failing(r), (std::vector<int>{2, 8, 9, 10})) << r.summary();
  EXPECT_NE(r.note.find("check it with --tpcc-inserts off"), std::string::npos) << r.summary();
  EXPECT_NE(r.summary().find("note: "), std::string::npos);
}

TEST(TpccCheckInsertsOff, ChangedCustomerBalanceStillFailsConditionTwelve) {
  // Without HISTORY rows 10 cannot be checked; 12 still catches a C_BALANCE
  // that moved without C_YTD_PAYMENT.
  const std::string d = copy_dump("noins_c_balance", false);
  Csv t = table(d, "customer");
  t.add(7, "C_BALANCE", -1234);
  t.save();
  EXPECT_EQ(failing(check::check_tpcc_dir(d, false)), (std::vector<int>{12}));
  fs::remove_all(d);
}

// ---- input that cannot be read ------------------------------------------------

// Runs the check and returns the InputError it must throw.
check::InputError input_error(const std::string& dir) {
  try {
    const auto r = check::check_tpcc_dir(dir);
    ADD_FAILURE() << "no InputError; the check said:\n" << r.summary();
  } catch (const check::InputError& e) {
    return e;
  }
  return check::InputError("", 0, "");
}

TEST(TpccCheckInput, MissingTableNamesTheFile) {
  const std::string d = copy_dump("missing");
  fs::remove(d + "/order_line.csv");
  const auto e = input_error(d);
  EXPECT_EQ(e.source(), d + "/order_line.csv");
  EXPECT_EQ(e.line(), 0u);
  EXPECT_EQ(std::string(e.what()), d + "/order_line.csv: cannot open: No such file or directory");
  fs::remove_all(d);
}

TEST(TpccCheckInput, MissingDirectoryNamesIt) {
  const std::string d = testing::TempDir() + "abyss_no_such_dump_dir";
  fs::remove_all(d);
  const auto e = input_error(d);
  EXPECT_EQ(e.source(), d);
  EXPECT_EQ(std::string(e.what()).rfind(d + ": cannot open the dump directory: ", 0), 0u) << e.what();
}

struct BadValue {
  const char* name;
  const char* value;     // written into C_BALANCE of one customer row
  const char* expected;  // part of the message
};

std::ostream& operator<<(std::ostream& os, const BadValue& v) { return os << v.name; }

class TpccCheckBadValue : public testing::TestWithParam<BadValue> {};

TEST_P(TpccCheckBadValue, NamesFileLineColumnAndValue) {
  const std::string d = copy_dump(std::string("bad_") + GetParam().name);
  Csv t = table(d, "customer");
  constexpr std::size_t kRow = 41;
  t.set(kRow, "C_BALANCE", GetParam().value);
  t.save();
  const auto e = input_error(d);
  const std::string prefix = d + "/customer.csv:" + std::to_string(Csv::line_of(kRow)) + ": column C_BALANCE: ";
  EXPECT_EQ(e.line(), Csv::line_of(kRow));
  EXPECT_EQ(std::string(e.what()).rfind(prefix, 0), 0u) << e.what();
  EXPECT_NE(e.message().find(GetParam().expected), std::string::npos) << e.what();
  fs::remove_all(d);
}

INSTANTIATE_TEST_SUITE_P(
    Csv, TpccCheckBadValue,
    testing::Values(BadValue{"overflow", "99999999999999999999", "'99999999999999999999' overflows a 64-bit integer"},
                    BadValue{"underflow", "-9223372036854775809", "'-9223372036854775809' overflows a 64-bit integer"},
                    BadValue{"trailing_garbage", "-1000x", "'-1000x' is not an integer"},
                    BadValue{"inner_space", "-10 00", "'-10 00' is not an integer"},
                    BadValue{"plus_sign", "+5", "'+5' is not an integer"},
                    BadValue{"decimal", "-10.00", "'-10.00' is not an integer"},
                    BadValue{"empty", "", "empty, expected an integer"},
                    BadValue{"quoted", "\"-1000\"", "expected an integer, got the quoted text"}),
    [](const testing::TestParamInfo<BadValue>& info) { return info.param.name; });

TEST(TpccCheckInput, WrongHeaderNamesTheColumn) {
  const std::string d = copy_dump("header");
  Csv t = table(d, "district");
  t.header[t.column("D_YTD")] = "D_YTD_TYPO";
  t.save();
  const auto e = input_error(d);
  EXPECT_EQ(e.line(), 1u);
  EXPECT_EQ(std::string(e.what()).rfind(d + "/district.csv:1: header column 10 is 'D_YTD_TYPO', expected D_YTD", 0), 0u)
      << e.what();
  fs::remove_all(d);
}

TEST(TpccCheckInput, MissingHeaderColumnIsAnError) {
  const std::string d = copy_dump("header_short");
  std::ofstream(d + "/new_order.csv", std::ios::trunc) << "NO_O_ID,NO_D_ID\n1,1\n";
  const auto e = input_error(d);
  EXPECT_EQ(e.line(), 1u);
  EXPECT_NE(e.message().find("header column 3 is nothing, expected NO_W_ID"), std::string::npos) << e.what();
  fs::remove_all(d);
}

TEST(TpccCheckInput, RowWithTooFewFieldsNamesTheLine) {
  const std::string d = copy_dump("fields");
  Csv t = table(d, "order");
  t.rows[9].pop_back();
  t.save();
  const auto e = input_error(d);
  EXPECT_EQ(e.line(), Csv::line_of(9));
  EXPECT_NE(e.message().find("7 fields, the header has 8"), std::string::npos) << e.what();
  fs::remove_all(d);
}

TEST(TpccCheckInput, FileCutInTheMiddleOfALineIsTruncated) {
  const std::string d = copy_dump("truncated");
  const std::string path = d + "/warehouse.csv";
  // Cut the last row (W_YTD is its last column) short by two digits and its
  // newline: it still has every field, and a number that parses.
  const auto size = fs::file_size(path);
  fs::resize_file(path, size - 3);
  const auto e = input_error(d);
  EXPECT_EQ(e.source(), path);
  EXPECT_EQ(e.line(), 2u);
  EXPECT_NE(e.message().find("truncated"), std::string::npos) << e.what();
  fs::remove_all(d);
}

TEST(TpccCheckInput, EmptyFileHasNoHeader) {
  const std::string d = copy_dump("empty");
  std::ofstream(d + "/history.csv", std::ios::trunc);
  const auto e = input_error(d);
  EXPECT_EQ(std::string(e.what()), d + "/history.csv:1: the file is empty; expected the header line");
  fs::remove_all(d);
}

TEST(TpccCheckInput, UnclosedQuoteIsTruncated) {
  const std::string d = copy_dump("quote");
  std::ofstream(d + "/new_order.csv", std::ios::app) << "\"1,1,1\n";
  const auto e = input_error(d);
  EXPECT_NE(e.message().find("quoted field is still open"), std::string::npos) << e.what();
  fs::remove_all(d);
}

}  // namespace
}  // namespace abyss
