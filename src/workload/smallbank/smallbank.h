#pragma once
// SmallBank (Alomari et al., "The Cost of Serializability on Platforms That
// Use Snapshot Isolation", ICDE 2008): a bank of customers, each with a
// savings and a checking balance, and six transactions over one or two of
// them. Under snapshot isolation its mix shows write skew (a Balance that
// sees a TransactSavings but not a WriteCheck that did not see it either),
// so it tells serializable schemes from snapshot isolation.
//
// Three tables keyed by customer id, each with a hash index: ACCOUNTS
// (CUSTID, NAME; read only: each transaction looks its customers up there),
// SAVINGS (CUSTID, BAL) and CHECKING (CUSTID, BAL), balances in cents. The
// mix and the amounts are those of OLTPBench's SmallBank: Amalgamate 15%,
// Balance 15%, DepositChecking 15% ($1.30), SendPayment 25% ($5),
// TransactSavings 15% ($20.20), WriteCheck 15% ($5). An account is drawn
// from the hot set (--hot-accounts, the lowest ids) with probability
// --hot-ratio, else from the rest.
//
// The consistency check (check()): money enters and leaves only through
// DepositChecking, TransactSavings and WriteCheck, so after a run the total
// of every balance is the total at the start plus what those transactions
// committed. Each worker sums its committed transactions' amounts
// (committed()); a lost update breaks the equation.
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/config.h"
#include "common/knob.h"
#include "common/types.h"
#include "storage/database.h"
#include "txn/txn.h"
#include "workload/mix.h"
#include "workload/smallbank/smallbank_config.h"
#include "workload/traits.h"

namespace abyss {

class SmallBank final {
 public:
  static constexpr WorkloadTraits kTraits{
      .name = "smallbank",
      .summary = "savings and checking balances, six transactions with write skew under snapshot isolation",
      .spec = "Alomari et al., ICDE 2008 (OLTPBench's mix and amounts)",
  };
  enum Type : uint8_t { Amalgamate, Balance, DepositChecking, SendPayment, TransactSavings, WriteCheck };
  static constexpr std::array<std::string_view, 6> kTypeNames = {"amalgamate",   "balance",          "deposit_checking",
                                                                 "send_payment", "transact_savings", "write_check"};
  // The mix, in percent, in type order.
  static constexpr std::array<uint32_t, 6> kMix = {15, 15, 15, 25, 15, 15};
  // The amounts, in cents.
  static constexpr int64_t kDepositChecking = 130;
  static constexpr int64_t kTransactSavings = 2020;
  static constexpr int64_t kWriteCheck = 500;
  static constexpr int64_t kSendPayment = 500;
  // WriteCheck's penalty for overdrawing the customer's total.
  static constexpr int64_t kOverdraftPenalty = 100;
  // A balance at load, uniform in dollars (OLTPBench's bounds).
  static constexpr int64_t kMinBalance = int64_t{10'000} * 100;
  static constexpr int64_t kMaxBalance = int64_t{50'000} * 100;

  static std::span<const WorkloadMetric> metrics() { return {}; }
  // --accounts, --hot-accounts, --hot-ratio (smallbank.cc).
  static std::vector<Knob> knobs();
  static std::string validate(const Config& config);
  // One partition: a transaction's two customers may be anywhere.
  static uint32_t partitions(const Config& /*config*/) { return 1; }

  struct Query {
    uint32_t a;  // the customer
    uint32_t b;  // the second customer (Amalgamate, SendPayment)
    uint8_t type;
  };
  struct Queries {
    std::vector<Query> queries;
    std::size_t size() const { return queries.size(); }
  };

  explicit SmallBank(const Config& config);

  void load(Database& db, uint32_t loaders, void (*init_row)(void* meta));
  // After a recovery: the balances the logged run left are the start.
  void resume(const Database& db);
  Queries generate(uint32_t worker, uint32_t count, Rng& rng) const;
  static uint64_t estimate_load_bytes(const Config& config, std::size_t meta_size, std::size_t meta_align,
                                      uint32_t loaders);
  static uint64_t estimate_worker_bytes(const Config& config, std::size_t meta_size = 0, std::size_t meta_align = 0);
  uint8_t type_of(const Queries& qs, std::size_t i) const { return qs.queries[i].type; }
  void partitions_of(const Queries& /*qs*/, std::size_t /*i*/, std::vector<uint32_t>& out) const { out.assign(1, 0); }

  // The worker's last attempt committed: its amount joins the worker's sum.
  void committed(uint32_t worker) const { ledger_.committed(worker); }
  // The balance total against the start and the committed amounts.
  std::vector<ConsistencyCheck> check() const;

  template <class CC>
  Rc run(Txn<CC>& txn, const Queries& qs, std::size_t i, uint64_t& sink) const {
    const Query& q = qs.queries[i];
    int64_t& amount = ledger_.attempt(txn.worker().id.value);
    amount = 0;
    // Each transaction looks its customers up by id in ACCOUNTS.
    if (Rc rc = look_up(txn, q.a, sink); rc != Rc::Ok) return rc;
    if (q.type == Amalgamate || q.type == SendPayment) {
      if (Rc rc = look_up(txn, q.b, sink); rc != Rc::Ok) return rc;
    }
    int64_t savings = 0;
    int64_t checking = 0;
    switch (q.type) {
      case Amalgamate:
        // Moves all of the first customer's money to the second's checking.
        if (Rc rc = read(txn, *savings_, q.a, savings); rc != Rc::Ok) return rc;
        if (Rc rc = read(txn, *checking_, q.a, checking); rc != Rc::Ok) return rc;
        if (Rc rc = write(txn, *savings_, q.a, 0); rc != Rc::Ok) return rc;
        if (Rc rc = write(txn, *checking_, q.a, 0); rc != Rc::Ok) return rc;
        return add(txn, *checking_, q.b, savings + checking);
      case Balance:
        if (Rc rc = read(txn, *savings_, q.a, savings); rc != Rc::Ok) return rc;
        if (Rc rc = read(txn, *checking_, q.a, checking); rc != Rc::Ok) return rc;
        sink += static_cast<uint64_t>(savings + checking);
        return Rc::Ok;
      case DepositChecking:
        amount = kDepositChecking;
        return add(txn, *checking_, q.a, kDepositChecking);
      case SendPayment:
        if (Rc rc = read(txn, *checking_, q.a, checking); rc != Rc::Ok) return rc;
        if (checking < kSendPayment) return Rc::LogicalAbort;  // insufficient funds
        if (Rc rc = write(txn, *checking_, q.a, checking - kSendPayment); rc != Rc::Ok) return rc;
        return add(txn, *checking_, q.b, kSendPayment);
      case TransactSavings:
        if (Rc rc = read(txn, *savings_, q.a, savings); rc != Rc::Ok) return rc;
        amount = kTransactSavings;
        return write(txn, *savings_, q.a, savings + kTransactSavings);
      default: {  // WriteCheck: a cheque against the customer's total, with a penalty if it overdraws it
        if (Rc rc = read(txn, *savings_, q.a, savings); rc != Rc::Ok) return rc;
        if (Rc rc = read(txn, *checking_, q.a, checking); rc != Rc::Ok) return rc;
        const int64_t debit = savings + checking < kWriteCheck ? kWriteCheck + kOverdraftPenalty : kWriteCheck;
        amount = -debit;
        return write(txn, *checking_, q.a, checking - debit);
      }
    }
  }

 private:
  static constexpr uint64_t kBalanceColumn = uint64_t{1} << 1;  // BAL, column 1 of SAVINGS and CHECKING
  static constexpr uint64_t kLoadBlockRows = 16384;
  static Schema accounts_schema();
  static Schema balance_schema(const char* table);
  template <class CC>
  Rc look_up(Txn<CC>& txn, uint32_t customer, uint64_t& sink) const {
    const char* d = nullptr;
    const Rc rc = txn.read(*accounts_, customer, d);
    if (rc == Rc::Ok) sink += static_cast<unsigned char>(d[name_.offset]);
    return rc;
  }
  template <class CC>
  Rc read(Txn<CC>& txn, Table& t, uint32_t customer, int64_t& balance) const {
    const char* d = nullptr;
    const Rc rc = txn.read(t, customer, d);
    if (rc == Rc::Ok) balance = get_int64(d, balance_);
    return rc;
  }
  template <class CC>
  Rc write(Txn<CC>& txn, Table& t, uint32_t customer, int64_t balance) const {
    char* d = nullptr;
    const Rc rc = txn.update(t, customer, d, kBalanceColumn);
    if (rc == Rc::Ok) set_int64(d, balance_, balance);
    return rc;
  }
  template <class CC>
  Rc add(Txn<CC>& txn, Table& t, uint32_t customer, int64_t amount) const {
    char* d = nullptr;
    const Rc rc = txn.update(t, customer, d, kBalanceColumn);
    if (rc == Rc::Ok) set_int64(d, balance_, get_int64(d, balance_) + amount);
    return rc;
  }
  // A customer id: from the hot set with probability --hot-ratio.
  uint32_t draw(Rng& rng) const;
  // Every balance, summed.
  int64_t total() const;

  const SmallBankConfig& cfg_;
  const Database* db_ = nullptr;
  Table* accounts_ = nullptr;
  Table* savings_ = nullptr;
  Table* checking_ = nullptr;
  Column name_;
  Column balance_;  // BAL, at one offset in SAVINGS and CHECKING
  int64_t start_total_ = 0;
  mutable CommitLedger ledger_;  // the money each worker's transactions moved in and out
};

}  // namespace abyss
