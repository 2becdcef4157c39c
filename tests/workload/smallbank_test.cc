// SmallBank's generator, load, validation and balance check: the mix and
// the hot set's share, two distinct customers where a transaction names
// two, the load's total, and a check that catches money made from nothing.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <string>

#include "common/config.h"
#include "common/zipf.h"
#include "engine/engine.h"
#include "storage/database.h"
#include "workload/smallbank/smallbank.h"

namespace abyss {
namespace {

TEST(SmallBankGenerate, TheMixAndTheHotSetAreHonoured) {
  Config cfg;
  SmallBankConfig& b = cfg.settings<SmallBankConfig>();
  b.accounts = 10'000;
  b.hot_accounts = 10;
  b.hot_ratio = 0.9;
  const SmallBank bank(cfg);
  Rng rng(5);
  constexpr uint32_t kQueries = 100'000;
  const auto qs = bank.generate(0, kQueries, rng);
  std::array<uint64_t, SmallBank::kTypeNames.size()> types{};
  uint64_t hot = 0;
  for (const auto& q : qs.queries) {
    types[q.type]++;
    hot += q.a < b.hot_accounts;
    EXPECT_LT(q.a, b.accounts);
    if (q.type == SmallBank::Amalgamate || q.type == SmallBank::SendPayment) {
      EXPECT_NE(q.a, q.b) << "a transfer names two customers";
      EXPECT_LT(q.b, b.accounts);
    }
  }
  for (std::size_t t = 0; t < types.size(); t++) {
    EXPECT_NEAR(static_cast<double>(types[t]) / kQueries, SmallBank::kMix[t] / 100.0, 0.01) << SmallBank::kTypeNames[t];
  }
  EXPECT_NEAR(static_cast<double>(hot) / kQueries, 0.9, 0.01);
}

TEST(SmallBankValidate, AHotSetLargerThanTheBankOrASetOfOneIsRefused) {
  Config cfg;
  SmallBankConfig& b = cfg.settings<SmallBankConfig>();
  b.accounts = 100;
  b.hot_accounts = 101;
  EXPECT_NE(SmallBank::validate(cfg).find("--hot-accounts 101: must be at most --accounts (100)"), std::string::npos);
  b.hot_accounts = 1;
  b.hot_ratio = 1;
  EXPECT_NE(SmallBank::validate(cfg).find("a set of one"), std::string::npos);
  b.hot_accounts = 99;
  b.hot_ratio = 0;
  EXPECT_NE(SmallBank::validate(cfg).find("a set of one"), std::string::npos);
  b.hot_ratio = 0.5;
  EXPECT_EQ(SmallBank::validate(cfg), "");
  b.hot_accounts = 0;
  EXPECT_EQ(SmallBank::validate(cfg), "");
}

// The load's balances sum to what the check starts from, and a balance
// changed behind the transactions' backs breaks the check.
TEST(SmallBankCheck, MoneyMadeFromNothingBreaksTheBalanceTotal) {
  Config cfg;
  cfg.threads = 1;
  cfg.settings<SmallBankConfig>().accounts = 1000;
  Database db(RowLayout::for_meta(8, 8));
  SmallBank bank(cfg);
  bank.load(
      db, 2, +[](void* /*meta*/) {});
  auto checks = bank.check();
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_TRUE(checks[0].held) << checks[0].detail;
  Table& checking = *db.tables()[2];
  ASSERT_EQ(checking.name(), "checking");
  char* data = db.layout().data(checking.index().find(7));
  const Column bal = checking.schema().column("BAL");
  set_int64(data, bal, get_int64(data, bal) + 1);
  checks = bank.check();
  EXPECT_FALSE(checks[0].held) << "a cent appeared from nowhere: " << checks[0].detail;
}

// A run under a scheme keeps the balance total, and reports it.
TEST(SmallBankRun, ARunKeepsTheBalanceTotalAndReportsIt) {
  Config cfg;
  cfg.workload = "smallbank";
  cfg.cc = "silo";
  cfg.threads = 2;
  cfg.duration_s = 0.05;
  cfg.warmup_s = 0.01;
  cfg.settings<SmallBankConfig>().accounts = 1000;
  cfg.settings<SmallBankConfig>().hot_accounts = 10;
  const RunResult r = run(cfg);
  ASSERT_EQ(r.checks.size(), 1u);
  EXPECT_EQ(r.checks[0].name, "balance total");
  EXPECT_TRUE(r.checks[0].held) << r.checks[0].detail;
  EXPECT_GT(r.count(Counter::Commits), 0u);
}

}  // namespace
}  // namespace abyss
