#include "workload/smallbank/smallbank.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "platform/thread.h"
#include "storage/footprint.h"

namespace abyss {

SmallBank::SmallBank(const Config& config) : cfg_(config.settings<SmallBankConfig>()), ledger_(config.threads) {}

Schema SmallBank::accounts_schema() {
  Schema s;
  s.add_int64("CUSTID");
  s.add_chars("NAME", 64);
  return s;
}

Schema SmallBank::balance_schema(const char* /*table*/) {
  Schema s;
  s.add_int64("CUSTID");
  s.add_int64("BAL");
  return s;
}

uint64_t SmallBank::estimate_load_bytes(const Config& config, std::size_t meta_size, std::size_t meta_align,
                                        uint32_t loaders) {
  const SmallBankConfig& b = config.settings<SmallBankConfig>();
  const RowLayout layout = RowLayout::for_meta(meta_size, meta_align, config.storage.align);
  uint64_t bytes = 0;
  for (const Schema& s : {accounts_schema(), balance_schema("SAVINGS"), balance_schema("CHECKING")}) {
    const uint32_t stride = Table::stride_for(layout, s);
    bytes += footprint::hash_index(b.accounts, config.storage);
    for (uint32_t l = 0; l < loaders; l++) {
      const uint64_t n = uint64_t{b.accounts} * (l + 1) / loaders - uint64_t{b.accounts} * l / loaders;
      bytes +=
          footprint::table_rows(n, kLoadBlockRows, stride, config.storage) + footprint::index_nodes(n, config.storage);
    }
  }
  return bytes;
}

uint64_t SmallBank::estimate_worker_bytes(const Config& config, std::size_t /*meta_size*/, std::size_t /*meta_align*/) {
  return uint64_t{config.queries_per_worker} * sizeof(Query);
}

void SmallBank::load(Database& db, uint32_t loaders, void (*init_row)(void* meta)) {
  db_ = &db;
  accounts_ = &db.create_table("accounts", accounts_schema(), cfg_.accounts);
  savings_ = &db.create_table("savings", balance_schema("SAVINGS"), cfg_.accounts);
  checking_ = &db.create_table("checking", balance_schema("CHECKING"), cfg_.accounts);
  accounts_->set_read_only();  // no SmallBank transaction writes ACCOUNTS
  name_ = accounts_->schema().column("NAME");
  balance_ = savings_->schema().column("BAL");
  const Column id = accounts_->schema().column("CUSTID");
  // A balance is drawn from the customer's id, so the load is the same
  // whatever the loaders.
  auto opening = [](uint64_t c, uint64_t table) {
    Rng rng(c * 2 + table + 1);
    return static_cast<int64_t>(rng.range(kMinBalance, kMaxBalance));
  };
  std::vector<int64_t> totals(loaders, 0);
  platform::run_parallel(loaders, [&](uint32_t l) {
    RowCursor cursors[3];
    Arena nodes(std::size_t{8} << 20, "the index nodes of SmallBank's tables");
    const uint64_t lo = uint64_t{cfg_.accounts} * l / loaders;
    const uint64_t hi = uint64_t{cfg_.accounts} * (l + 1) / loaders;
    for (uint64_t c = lo; c < hi; c++) {
      accounts_->load_row(cursors[0], nodes, kLoadBlockRows, c, init_row, [&](char* d) {
        set_int64(d, id, static_cast<int64_t>(c));
        std::snprintf(d + name_.offset, name_.size, "customer-%" PRIu64, c);
      });
      for (uint64_t t = 0; t < 2; t++) {
        Table& table = t == 0 ? *savings_ : *checking_;
        const int64_t balance = opening(c, t);
        totals[l] += balance;
        table.load_row(cursors[1 + t], nodes, kLoadBlockRows, c, init_row, [&](char* d) {
          set_int64(d, id, static_cast<int64_t>(c));
          set_int64(d, balance_, balance);
        });
      }
    }
    accounts_->adopt(std::move(nodes));
  });
  for (int64_t t : totals) start_total_ += t;
}

void SmallBank::resume(const Database& /*db*/) { start_total_ = total(); }

int64_t SmallBank::total() const {
  int64_t sum = 0;
  for (const Table* t : {savings_, checking_}) {
    t->for_each_live([&](const Row* r) { sum += get_int64(db_->layout().data(r), balance_); });
  }
  return sum;
}

uint32_t SmallBank::draw(Rng& rng) const {
  const uint32_t hot = std::min(cfg_.hot_accounts, cfg_.accounts);
  if (hot == cfg_.accounts || (hot > 0 && rng.unit() < cfg_.hot_ratio)) return static_cast<uint32_t>(rng.uniform(hot));
  return hot + static_cast<uint32_t>(rng.uniform(cfg_.accounts - hot));
}

SmallBank::Queries SmallBank::generate(uint32_t /*worker*/, uint32_t count, Rng& rng) const {
  Queries qs;
  qs.queries.reserve(count);
  for (uint32_t i = 0; i < count; i++) {
    const uint8_t type = draw_type(rng, kMix);
    Query q{draw(rng), 0, type};
    if (type == Amalgamate || type == SendPayment) {
      do {
        q.b = draw(rng);
      } while (q.b == q.a);
    }
    qs.queries.push_back(q);
  }
  return qs;
}

std::vector<ConsistencyCheck> SmallBank::check() const {
  const int64_t moved = ledger_.committed_total();
  const int64_t now = total();
  char detail[256];
  std::snprintf(detail, sizeof detail,
                "%" PRId64 " cents now; %" PRId64 " at the start, %+" PRId64
                " deposited and withdrawn by committed transactions",
                now, start_total_, moved);
  return {{"balance total", now == start_total_ + moved, detail}};
}

std::vector<Knob> SmallBank::knobs() {
  std::vector<Knob> t;
  t.push_back(integer<uint32_t>(
      "accounts", "smallbank.accounts", 2, 1u << 30,
      +[](Config& c) -> uint32_t& { return c.settings<SmallBankConfig>().accounts; },
      "SmallBank customers, each with a savings and a checking account"));
  t.push_back(integer<uint32_t>(
      "hot-accounts", "smallbank.hot_accounts", 0, 1u << 30,
      +[](Config& c) -> uint32_t& { return c.settings<SmallBankConfig>().hot_accounts; },
      "SmallBank's hot set: the lowest N customer ids (0: no hot set, every customer uniform)"));
  t.push_back(real(
      "hot-ratio", "smallbank.hot_ratio", 0, 1,
      +[](Config& c) -> double& { return c.settings<SmallBankConfig>().hot_ratio; },
      "SmallBank: probability that a customer is drawn from the hot set (the skew)"));
  return t;
}

std::string SmallBank::validate(const Config& config) {
  const SmallBankConfig& b = config.settings<SmallBankConfig>();
  if (b.hot_accounts > b.accounts) {
    return "--hot-accounts " + std::to_string(b.hot_accounts) + ": must be at most --accounts (" +
           std::to_string(b.accounts) + ")";
  }
  // Amalgamate and SendPayment draw two distinct customers from one set.
  const bool hot_only = b.hot_accounts > 0 && (b.hot_ratio == 1 || b.hot_accounts == b.accounts);
  const bool cold_only = b.hot_accounts < b.accounts && (b.hot_accounts == 0 || b.hot_ratio == 0);
  if ((hot_only && b.hot_accounts < 2) || (cold_only && b.accounts - b.hot_accounts < 2)) {
    return "--hot-accounts " + std::to_string(b.hot_accounts) + " of --accounts " + std::to_string(b.accounts) +
           ": every customer is drawn from a set of one, and Amalgamate and SendPayment need two distinct ones";
  }
  return {};
}

}  // namespace abyss
