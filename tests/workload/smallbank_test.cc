// SmallBank's generator, load, validation and balance check: the mix and
// the hot set's share, two distinct customers where a transaction names
// two, the load's total, a check that catches money made from nothing, and
// the write skew snapshot isolation admits.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <new>
#include <string>

#include "cc/mvcc/mvcc.h"
#include "check/history.h"
#include "common/config.h"
#include "common/zipf.h"
#include "engine/engine.h"
#include "storage/database.h"
#include "txn/txn.h"
#include "txn/worker_set.h"
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

// Alomari et al.'s dangerous structure, interleaved by hand under MVCC's
// snapshot isolation: a Balance sees a TransactSavings that a WriteCheck of
// the same customer did not see, and does not see that WriteCheck. All three
// commit; the history holds snapshot isolation and shows G2-item.
//    WC                   | TS                  | Bal
//    BEGIN R(S) R(C) W(C) |                     |
//                         | BEGIN R(S) W(S)     |
//                         | COMMIT              |
//                         |                     | BEGIN R(S) R(C)   <- S from TS, C from before WC
//                         |                     | COMMIT
//    COMMIT               |                     |
// (A contended run shows this too, but only about once in 10^5 commits on
// two cores: the three must fall just so.)
TEST(SmallBankIsolation, SnapshotAdmitsTheWriteSkewOfABalanceBetweenWriteCheckAndTransactSavings) {
  Config cfg;
  cfg.workload = "smallbank";
  cfg.threads = 3;
  cfg.isolation = Isolation::Snapshot;
  cfg.settings<SmallBankConfig>().accounts = 4;
  cfg.history_path =
      (std::filesystem::temp_directory_path() /
       ("abyss-smallbank-skew-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + ".jsonl"))
          .string();
  using Meta = cc::Mvcc::RowMeta;
  Database db(RowLayout::for_meta(sizeof(Meta), alignof(Meta)));
  SmallBank bank(cfg);
  bank.load(
      db, 1, +[](void* m) { new (m) Meta(); });
  cc::Mvcc mvcc(cfg, cfg.threads);
  WorkerSet workers(cfg, cfg.threads, db.tables().size());
  std::vector<std::unique_ptr<Txn<cc::Mvcc>>> txns;
  for (uint32_t i = 0; i < cfg.threads; i++) {
    txns.push_back(std::make_unique<Txn<cc::Mvcc>>(mvcc, workers[i], db.layout()));
  }
  Txn<cc::Mvcc>& wc = *txns[0];
  Txn<cc::Mvcc>& ts = *txns[1];
  Txn<cc::Mvcc>& bal = *txns[2];
  constexpr uint32_t kCustomer = 1;
  const SmallBank::Queries qs{{{kCustomer, 0, SmallBank::WriteCheck},
                               {kCustomer, 0, SmallBank::TransactSavings},
                               {kCustomer, 0, SmallBank::Balance}}};
  uint64_t sink = 0;
  ASSERT_EQ(wc.begin(false), Rc::Ok);
  ASSERT_EQ(bank.run(wc, qs, 0, sink), Rc::Ok);
  ASSERT_EQ(ts.begin(false), Rc::Ok);
  ASSERT_EQ(bank.run(ts, qs, 1, sink), Rc::Ok);
  ASSERT_EQ(ts.commit(), Rc::Ok);
  ASSERT_EQ(bal.begin(false), Rc::Ok);
  ASSERT_EQ(bank.run(bal, qs, 2, sink), Rc::Ok);
  ASSERT_EQ(bal.commit(), Rc::Ok);
  ASSERT_EQ(wc.commit(), Rc::Ok) << "first committer wins only over a write of the same row";
  ASSERT_EQ(workers.merge_history(cfg.history_path), "");
  const check::Report report = check::check_history_file(cfg.history_path);
  std::filesystem::remove(cfg.history_path);
  EXPECT_EQ(report.transactions, 3u);
  EXPECT_EQ(report.count(check::Phenomenon::G2Item), 1u) << report.summary();
  EXPECT_EQ(report.strongest_level(), check::Level::Snapshot) << report.summary();
}

}  // namespace
}  // namespace abyss
