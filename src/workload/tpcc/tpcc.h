#pragma once
// TPC-C (spec rev 5.11): the nine tables and the five transactions, NewOrder
// (clause 2.4), Payment (2.5), Order-Status (2.6), Delivery (2.7) and
// Stock-Level (2.8), in a configurable mix. NewOrder and Payment alone are
// the mix Abyss §5.6 and Tale §4.2-4.3 run; the full schema with inserts is
// the default, DBx1000's small schema and insert-less variant are flags.
// Written once against Txn<CC>, so it runs unchanged under every scheme;
// partitioned by warehouse for H-STORE.
//
// Each worker is a terminal of one home warehouse: worker % warehouses + 1
// (clause 2.4.1.1, 2.5.1.1). Keys, money and dates: see tpcc_schema.h.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/config.h"
#include "common/knob.h"
#include "common/types.h"
#include "common/zipf.h"
#include "platform/atomic.h"
#include "platform/machine.h"
#include "storage/database.h"
#include "txn/txn.h"
#include "workload/tpcc/tpcc_config.h"
#include "workload/tpcc/tpcc_schema.h"
#include "workload/traits.h"

namespace abyss {

class Tpcc final {
 public:
  static constexpr WorkloadTraits kTraits{
      .name = "tpcc",
      .summary = "TPC-C's five transactions on the nine tables, partitioned by warehouse",
      .spec = "TPC-C rev 5.11; NewOrder and Payment as Abyss §5.6 and Tale §4 run them",
  };
  // tpmC: NewOrder commits per minute (TPC-C 5.4.1), beside txn/s.
  static std::span<const WorkloadMetric> metrics();
  // --warehouses, --tpcc-schema, ... (tpcc.cc).
  static std::vector<Knob> knobs();
  // --tpcc-materialize queried runs NewOrder and Payment only.
  static std::string validate(const Config& config);
  // One partition per warehouse (Abyss §5.6).
  static uint32_t partitions(const Config& config) { return config.settings<TpccConfig>().warehouses; }
  // Order matches TpccConfig::mix and kTpccTxnNames.
  static constexpr std::array<std::string_view, 5> kTypeNames = {"new_order", "payment", "delivery", "order_status",
                                                                 "stock_level"};
  static constexpr uint8_t kNewOrderTxn = 0;
  static constexpr uint8_t kPaymentTxn = 1;
  static constexpr uint8_t kDeliveryTxn = 2;
  static constexpr uint8_t kOrderStatusTxn = 3;
  static constexpr uint8_t kStockLevelTxn = 4;

  struct OrderItem {
    uint32_t i_id;
    uint16_t supply_w_id;
    uint16_t quantity;
  };
  // The inputs of one transaction, drawn by generate() (clauses 2.4.1, 2.5.1).
  struct Query {
    uint8_t type;
    uint16_t w_id;
    uint16_t d_id;
    // NewOrder
    uint32_t c_id;  // also Payment's customer when !by_last_name
    uint8_t ol_cnt;
    bool all_local;
    std::array<OrderItem, tpcc::kMaxOrderLines> items;
    // Payment; Order-Status (its customer is of w_id, d_id)
    uint16_t c_w_id;
    uint16_t c_d_id;
    bool by_last_name;
    uint16_t c_last;   // the last name's number 0..999 (clause 4.3.2.3)
    int64_t h_amount;  // cents
    // Delivery
    uint8_t carrier_id;  // 1..10
    // Stock-Level
    uint8_t threshold;  // 10..20
  };
  struct Queries {
    std::vector<Query> queries;
    std::size_t size() const { return queries.size(); }
  };

  explicit Tpcc(const Config& config);
  ~Tpcc();
  Tpcc(const Tpcc&) = delete;
  Tpcc& operator=(const Tpcc&) = delete;

  // Creates the nine tables and fills them (clause 4.3.3.1) with `loaders`
  // threads. `init_row` sets up the scheme's per-row metadata of a new row.
  void load(Database& db, uint32_t loaders, void (*init_row)(void* meta));
  // After the database was recovered from a log (run --recover): picks up
  // where the logged run left the keys this workload makes up, so none is
  // made twice. Payment's HISTORY keys go on from each worker's last.
  void resume(const Database& db);

  // A worker's queries. With --tpcc-materialize queried it also loads the
  // CUSTOMER and STOCK rows they name that no earlier worker's queries did
  // (set-up, before the run).
  Queries generate(uint32_t worker, uint32_t count, Rng& rng) const;

  // The resident bytes load() takes with `loaders` threads under a scheme
  // whose RowMeta has this size and alignment: the nine tables' row blocks,
  // index buckets and nodes (storage/footprint.h) and the last-name index,
  // from the schema's cardinalities (clause 4.3.3.1). Nothing is allocated.
  static uint64_t estimate_load_bytes(const Config& config, std::size_t meta_size, std::size_t meta_align,
                                      uint32_t loaders);
  // The bytes one worker takes before or at its first transactions: its
  // pre-generated queries and, with inserts, the first block it opens in each
  // table NewOrder and Payment insert into, and its index-node arena.
  static uint64_t estimate_worker_bytes(const Config& config, std::size_t meta_size, std::size_t meta_align);

  uint8_t type_of(const Queries& qs, std::size_t i) const { return qs.queries[i].type; }

  template <class CC>
  Rc run(Txn<CC>& txn, const Queries& qs, std::size_t i, uint64_t& sink) const {
    const Query& q = qs.queries[i];
    switch (q.type) {
      case kNewOrderTxn:
        return new_order(txn, q, sink);
      case kPaymentTxn:
        return payment(txn, q, sink);
      case kDeliveryTxn:
        return delivery(txn, q, sink);
      case kOrderStatusTxn:
        return order_status(txn, q, sink);
      default:
        return stock_level(txn, q, sink);
    }
  }

  // H-STORE: partition = warehouse - 1. A NewOrder with a remote supply
  // warehouse or a Payment of a remote customer declares both (Abyss §5.6);
  // Delivery, Order-Status and Stock-Level stay in their home warehouse.
  void partitions_of(const Queries& qs, std::size_t i, std::vector<uint32_t>& out) const;

  // The C_IDs of the customers of (w, d) whose C_LAST is name number `last`,
  // ordered by C_FIRST (clause 2.5.2.2). Built at load; customers are never
  // inserted and names never change, so it is read without latches.
  std::pair<const uint32_t*, const uint32_t*> customers_by_last_name(uint32_t w, uint32_t d, uint32_t last) const {
    const LastNameIndex& ix = by_last_[(w - 1) * tpcc::kDistrictsPerWarehouse + (d - 1)];
    return {ix.c_ids.data() + ix.offsets[last], ix.c_ids.data() + ix.offsets[last + 1]};
  }

  // The last name of number n in 0..999 (clause 4.3.2.3); `out` holds 16 bytes.
  static void last_name(uint32_t n, char* out);

  const TpccConfig& config() const { return cfg_; }
  Table& table(std::size_t t) const { return *tables_[t]; }

 private:
  struct LastNameIndex {
    std::vector<uint32_t> offsets;  // 1,001 entries: name n's C_IDs are c_ids[offsets[n] .. offsets[n+1])
    std::vector<uint32_t> c_ids;
  };
  // A per-worker sequence for HISTORY's surrogate keys, on its own cache line.
  struct alignas(64) HistorySeq {
    uint64_t next = 0;
  };
  // Per district, an O_ID at or below its oldest NEW-ORDER row, where
  // Delivery's scan starts. Removed entries leave empty B+-tree leaves
  // behind (OrderedIndex does not merge them), and a scan from O_ID 1 would
  // walk every one: Delivery grew from 58 to 156 us (p50) between a 0.5 s and
  // a 4 s run. It is a hint, not part of any transaction: each Delivery
  // raises it to the oldest O_ID it found, which stays a lower bound because
  // NEW-ORDER rows are only ever inserted above every existing one, so none
  // can appear below it. The scan's range, and with it what it protects and
  // what the history logs, starts there.
  struct alignas(64) DeliveryHint {
    platform::Atomic<uint64_t> oldest{1};
  };

  template <class CC>
  Rc new_order(Txn<CC>& txn, const Query& q, uint64_t& sink) const;
  template <class CC>
  Rc payment(Txn<CC>& txn, const Query& q, uint64_t& sink) const;
  template <class CC>
  Rc delivery(Txn<CC>& txn, const Query& q, uint64_t& sink) const;
  template <class CC>
  Rc order_status(Txn<CC>& txn, const Query& q, uint64_t& sink) const;
  template <class CC>
  Rc stock_level(Txn<CC>& txn, const Query& q, uint64_t& sink) const;
  // The customer a Payment or Order-Status by last name picks (clause
  // 2.5.2.2): every customer of that name is read, through the transaction
  // so the scheme sees the reads, and the one at position ceil(n / 2) in
  // C_FIRST order is taken.
  template <class CC>
  Rc customer_by_last_name(Txn<CC>& txn, uint32_t w, uint32_t d, uint32_t last, uint32_t& c_id, uint64_t& sink) const;

  class Loader;

  // A CUSTOMER or STOCK row's own random stream, from the run's seed and the
  // row's key, so a row is the same whichever rows are loaded beside it.
  Rng row_stream(uint64_t table, uint64_t key) const;
  // The first draws of a customer's stream: C_LAST's number (clause
  // 4.3.3.1: 0..999 for the first 1,000, then NURand(255, 0, 999)) and C_FIRST.
  struct CustomerName {
    uint32_t last;
    std::array<char, 16> first;
  };
  CustomerName customer_name(Rng& rng, uint64_t c) const;
  void fill_customer(char* r, uint64_t w, uint64_t d, uint64_t c) const;
  void fill_stock(char* r, uint64_t w, uint64_t i) const;
  // --tpcc-materialize queried: loads the rows `qs` names that are not loaded yet.
  void load_queried(const Queries& qs) const;
  void load_customer(Arena& nodes, uint64_t w, uint64_t d, uint64_t c) const;

  const TpccConfig& cfg_;
  std::array<uint64_t, 9> sizes_;  // each table's index size, by load order
  uint64_t seed_;
  // NURand's run-time constants C (clause 2.1.6): for C_LAST, one that
  // differs from the load's by the delta clause 2.1.6.1 requires.
  uint32_t c_last_load_ = 0;
  uint32_t c_last_run_ = 0;
  uint32_t c_id_c_ = 0;
  uint32_t ol_i_id_c_ = 0;

  std::array<Table*, 9> tables_{};
  Table* warehouse_ = nullptr;
  Table* district_ = nullptr;
  Table* customer_ = nullptr;
  Table* history_ = nullptr;
  Table* new_order_t_ = nullptr;
  Table* order_ = nullptr;
  Table* order_line_ = nullptr;
  Table* item_ = nullptr;
  // --tpcc-replicate-item on: ITEM's copy on each memory node (items_[0] is
  // item_); off: item_ alone.
  std::vector<Table*> items_;
  std::vector<const void*> placed_chunks_;  // the copies' index nodes, placed on their nodes (load())
  Table* stock_ = nullptr;
  tpcc::WarehouseCols w_;
  tpcc::DistrictCols d_;
  tpcc::CustomerCols c_;
  tpcc::HistoryCols h_;
  tpcc::NewOrderCols no_;
  tpcc::OrderCols o_;
  tpcc::OrderLineCols ol_;
  tpcc::ItemCols i_;
  tpcc::StockCols s_;
  static constexpr uint32_t kOrderByCustomer = 1;  // ORDER's index by customer (tpcc_schema.h)
  std::vector<LastNameIndex> by_last_;
  mutable std::vector<HistorySeq> history_seq_;     // one per worker; only that worker touches its entry
  std::unique_ptr<DeliveryHint[]> delivery_hints_;  // per district: (w - 1) * 10 + d - 1
  // --tpcc-materialize queried: the scheme's row set-up, which CUSTOMER and
  // STOCK rows are loaded so far, and where the next ones go.
  void (*init_row_)(void* meta) = nullptr;
  mutable std::vector<bool> customer_loaded_;  // by ((w - 1) * 10 + d - 1) * customers + c - 1
  mutable std::vector<bool> stock_loaded_;     // by (w - 1) * items + i - 1
  mutable RowCursor customer_cursor_;
  mutable RowCursor stock_cursor_;
};

// ---- NewOrder (clause 2.4.2) -------------------------------------------------
template <class CC>
Rc Tpcc::new_order(Txn<CC>& txn, const Query& q, uint64_t& sink) const {
  using namespace tpcc;
  Table& item_table = items_.size() == 1 ? *item_ : *items_[platform::current_node() % items_.size()];
  {
    // The items and their stock are known up front: fetch them while the
    // warehouse, district and customer are read (--prefetch).
    std::array<uint64_t, kMaxOrderLines> items;
    std::array<uint64_t, kMaxOrderLines> stock;
    for (uint32_t k = 0; k < q.ol_cnt; k++) {
      items[k] = item_key(q.items[k].i_id);
      stock[k] = stock_key(q.items[k].supply_w_id, q.items[k].i_id);
    }
    txn.prefetch(item_table, std::span<const uint64_t>(items.data(), q.ol_cnt));
    txn.prefetch(*stock_, std::span<const uint64_t>(stock.data(), q.ol_cnt));
  }
  const char* w = nullptr;
  if (Rc rc = txn.read(*warehouse_, warehouse_key(q.w_id), w); rc != Rc::Ok) return rc;
  const double w_tax = get_double(w, w_.tax);

  // The district's next order id is read and incremented in one step: it
  // makes the keys this transaction inserts new (clause 2.4.2.2).
  char* d = nullptr;
  if (Rc rc = txn.update(*district_, district_key(q.w_id, q.d_id), d); rc != Rc::Ok) return rc;
  const double d_tax = get_double(d, d_.tax);
  const int64_t o_id = get_int64(d, d_.next_o_id);
  set_int64(d, d_.next_o_id, o_id + 1);

  const char* c = nullptr;
  if (Rc rc = txn.read(*customer_, customer_key(q.w_id, q.d_id, q.c_id), c); rc != Rc::Ok) return rc;
  const double discount = get_double(c, c_.discount);
  sink += static_cast<unsigned char>(c[c_.credit.offset]) + static_cast<unsigned char>(c[c_.last.offset]);

  if (cfg_.inserts) {
    char* o = nullptr;
    if (Rc rc = txn.insert(*order_, order_key(q.w_id, q.d_id, static_cast<uint64_t>(o_id)), o); rc != Rc::Ok) {
      return rc;
    }
    set_int64(o, o_.id, o_id);
    set_int64(o, o_.d_id, q.d_id);
    set_int64(o, o_.w_id, q.w_id);
    set_int64(o, o_.c_id, q.c_id);
    set_int64(o, o_.entry_d, kStartDate);
    set_int64(o, o_.carrier_id, 0);  // null
    set_int64(o, o_.ol_cnt, q.ol_cnt);
    set_int64(o, o_.all_local, q.all_local ? 1 : 0);
    char* no = nullptr;
    if (Rc rc = txn.insert(*new_order_t_, order_key(q.w_id, q.d_id, static_cast<uint64_t>(o_id)), no); rc != Rc::Ok) {
      return rc;
    }
    set_int64(no, no_.o_id, o_id);
    set_int64(no, no_.d_id, q.d_id);
    set_int64(no, no_.w_id, q.w_id);
  }

  int64_t total = 0;  // cents
  for (uint32_t k = 0; k < q.ol_cnt; k++) {
    const OrderItem& item = q.items[k];
    const char* it = nullptr;
    if (Rc rc = txn.read(item_table, item_key(item.i_id), it); rc != Rc::Ok) {
      // An unused item number: the 1% of NewOrders that roll back (2.4.2.3).
      return rc == Rc::NotFound ? Rc::LogicalAbort : rc;
    }
    const int64_t price = get_int64(it, i_.price);

    char* s = nullptr;
    if (Rc rc = txn.update(*stock_, stock_key(item.supply_w_id, item.i_id), s); rc != Rc::Ok) return rc;
    const int64_t quantity = get_int64(s, s_.quantity);
    // Clause 2.4.2.2: restock by 91 when fewer than 10 would remain.
    set_int64(s, s_.quantity,
              quantity >= item.quantity + 10 ? quantity - item.quantity : quantity - item.quantity + 91);
    set_int64(s, s_.ytd, get_int64(s, s_.ytd) + item.quantity);
    set_int64(s, s_.order_cnt, get_int64(s, s_.order_cnt) + 1);
    if (item.supply_w_id != q.w_id) set_int64(s, s_.remote_cnt, get_int64(s, s_.remote_cnt) + 1);
    // Brand/generic (clause 2.4.2.2): both data strings contain "ORIGINAL".
    const bool brand =
        std::string_view(it + i_.data.offset, strnlen(it + i_.data.offset, i_.data.size)).find("ORIGINAL") !=
            std::string_view::npos &&
        std::string_view(s + s_.data.offset, strnlen(s + s_.data.offset, s_.data.size)).find("ORIGINAL") !=
            std::string_view::npos;
    sink += brand ? 1 : 0;

    const int64_t amount = item.quantity * price;
    total += amount;
    if (cfg_.inserts) {
      char* ol = nullptr;
      if (Rc rc = txn.insert(*order_line_, order_line_key(q.w_id, q.d_id, static_cast<uint64_t>(o_id), k + 1), ol);
          rc != Rc::Ok) {
        return rc;
      }
      set_int64(ol, ol_.o_id, o_id);
      set_int64(ol, ol_.d_id, q.d_id);
      set_int64(ol, ol_.w_id, q.w_id);
      set_int64(ol, ol_.number, k + 1);
      set_int64(ol, ol_.i_id, item.i_id);
      set_int64(ol, ol_.supply_w_id, item.supply_w_id);
      set_int64(ol, ol_.delivery_d, 0);  // null until Delivery
      set_int64(ol, ol_.quantity, item.quantity);
      set_int64(ol, ol_.amount, amount);
      std::memcpy(ol + ol_.dist_info.offset, s + s_.dist[q.d_id - 1].offset, ol_.dist_info.size);
    }
  }
  // The order's total, as the terminal would display it (clause 2.4.3.3).
  sink += static_cast<uint64_t>(static_cast<double>(total) * (1 - discount) * (1 + w_tax + d_tax));
  return Rc::Ok;
}

// ---- Payment (clause 2.5.2) ---------------------------------------------------
template <class CC>
Rc Tpcc::payment(Txn<CC>& txn, const Query& q, uint64_t& sink) const {
  using namespace tpcc;
  char* w = nullptr;
  if (Rc rc = txn.update(*warehouse_, warehouse_key(q.w_id), w); rc != Rc::Ok) return rc;
  set_int64(w, w_.ytd, get_int64(w, w_.ytd) + q.h_amount);

  char* d = nullptr;
  if (Rc rc = txn.update(*district_, district_key(q.w_id, q.d_id), d); rc != Rc::Ok) return rc;
  set_int64(d, d_.ytd, get_int64(d, d_.ytd) + q.h_amount);

  uint32_t c_id = q.c_id;
  if (q.by_last_name) {
    if (Rc rc = customer_by_last_name(txn, q.c_w_id, q.c_d_id, q.c_last, c_id, sink); rc != Rc::Ok) return rc;
  }

  char* c = nullptr;
  if (Rc rc = txn.update(*customer_, customer_key(q.c_w_id, q.c_d_id, c_id), c); rc != Rc::Ok) return rc;
  set_int64(c, c_.balance, get_int64(c, c_.balance) - q.h_amount);
  set_int64(c, c_.ytd_payment, get_int64(c, c_.ytd_payment) + q.h_amount);
  set_int64(c, c_.payment_cnt, get_int64(c, c_.payment_cnt) + 1);
  if (c[c_.credit.offset] == 'B' && c[c_.credit.offset + 1] == 'C') {
    // Bad credit: prepend the payment to C_DATA, keeping 500 characters.
    char entry[96];
    const int len =
        std::snprintf(entry, sizeof(entry), "%u %u %u %u %u %lld.%02lld ", c_id, q.c_d_id, q.c_w_id, q.d_id, q.w_id,
                      static_cast<long long>(q.h_amount / 100), static_cast<long long>(q.h_amount % 100));
    const auto n = static_cast<uint32_t>(std::min<int>(len, static_cast<int>(c_.data.size)));
    char* data = c + c_.data.offset;
    std::memmove(data + n, data, c_.data.size - n);
    std::memcpy(data, entry, n);
  }

  if (cfg_.inserts) {
    uint64_t& seq = history_seq_[txn.worker().id.value].next;
    char* h = nullptr;
    if (Rc rc = txn.insert(*history_, history_run_key(txn.worker().id.value, seq++), h); rc != Rc::Ok) return rc;
    set_int64(h, h_.c_id, c_id);
    set_int64(h, h_.c_d_id, q.c_d_id);
    set_int64(h, h_.c_w_id, q.c_w_id);
    set_int64(h, h_.d_id, q.d_id);
    set_int64(h, h_.w_id, q.w_id);
    set_int64(h, h_.date, kStartDate);
    set_int64(h, h_.amount, q.h_amount);
    // H_DATA: W_NAME, four spaces, D_NAME (clause 2.5.2.2).
    char* hd = h + h_.data.offset;
    const std::size_t wn = strnlen(w + w_.name.offset, w_.name.size);
    const std::size_t dn = strnlen(d + d_.name.offset, d_.name.size);
    std::memcpy(hd, w + w_.name.offset, wn);
    std::memcpy(hd + wn, "    ", 4);
    std::memcpy(hd + wn + 4, d + d_.name.offset, std::min<std::size_t>(dn, h_.data.size - wn - 4));
  }
  return Rc::Ok;
}

template <class CC>
Rc Tpcc::customer_by_last_name(Txn<CC>& txn, uint32_t w, uint32_t d, uint32_t last, uint32_t& c_id,
                               uint64_t& sink) const {
  using namespace tpcc;
  const auto [begin, end] = customers_by_last_name(w, d, last);
  const auto n = static_cast<std::size_t>(end - begin);
  if (n == 0) return Rc::LogicalAbort;  // cannot happen: every name exists in every district (4.3.3.1)
  for (const uint32_t* id = begin; id != end; id++) {
    const char* row = nullptr;
    if (Rc rc = txn.read(*customer_, customer_key(w, d, *id), row); rc != Rc::Ok) return rc;
    sink += static_cast<unsigned char>(row[c_.first.offset]);
  }
  c_id = begin[(n - 1) / 2];
  return Rc::Ok;
}

// ---- Delivery (clause 2.7.4) ---------------------------------------------------
// The deferred part, for every district of the warehouse in one transaction:
// the oldest undelivered order is taken off NEW-ORDER, given its carrier, its
// lines their delivery date, and its customer the lines' amount.
template <class CC>
Rc Tpcc::delivery(Txn<CC>& txn, const Query& q, uint64_t& sink) const {
  using namespace tpcc;
  for (uint32_t d = 1; d <= kDistrictsPerWarehouse; d++) {
    platform::Atomic<uint64_t>& hint = delivery_hints_[(q.w_id - 1) * kDistrictsPerWarehouse + d - 1].oldest;
    uint64_t no_key = 0;
    bool found = false;
    Rc rc =
        txn.scan(*new_order_t_, order_key(q.w_id, d, hint.load(platform::memory_order_relaxed)),
                 order_key(q.w_id, d, kMaxOrderId), 1, ScanOrder::Ascending, [&](uint64_t key, const char* /*row*/) {
                   no_key = key;
                   found = true;
                   return false;
                 });
    if (rc != Rc::Ok) return rc;
    if (!found) continue;  // 2.7.4.2: no undelivered order in this district; skipped
    const uint64_t o_id = no_key & 0xffff'ffff;
    if (o_id > hint.load(platform::memory_order_relaxed)) hint.store(o_id, platform::memory_order_relaxed);
    if (rc = txn.remove(*new_order_t_, no_key); rc != Rc::Ok) return rc;

    char* o = nullptr;
    if (rc = txn.update(*order_, order_key(q.w_id, d, o_id), o); rc != Rc::Ok) return rc;
    const auto c_id = static_cast<uint64_t>(get_int64(o, o_.c_id));
    set_int64(o, o_.carrier_id, q.carrier_id);

    std::array<uint64_t, kMaxOrderLines> lines;
    std::size_t n = 0;
    rc = txn.scan(*order_line_, order_line_key(q.w_id, d, o_id, 1), order_line_key(q.w_id, d, o_id, kMaxOrderLines),
                  kMaxOrderLines, ScanOrder::Ascending, [&](uint64_t key, const char* /*row*/) {
                    lines[n++] = key;
                    return true;
                  });
    if (rc != Rc::Ok) return rc;
    int64_t amount = 0;  // cents
    for (std::size_t k = 0; k < n; k++) {
      char* ol = nullptr;
      if (rc = txn.update(*order_line_, lines[k], ol); rc != Rc::Ok) return rc;
      set_int64(ol, ol_.delivery_d, kStartDate);
      amount += get_int64(ol, ol_.amount);
    }

    char* c = nullptr;
    if (rc = txn.update(*customer_, customer_key(q.w_id, d, c_id), c); rc != Rc::Ok) return rc;
    set_int64(c, c_.balance, get_int64(c, c_.balance) + amount);
    set_int64(c, c_.delivery_cnt, get_int64(c, c_.delivery_cnt) + 1);
    sink += o_id;
  }
  return Rc::Ok;
}

// ---- Order-Status (clause 2.6.2) -----------------------------------------------
// The customer (by id or last name), their latest order through ORDER's index
// by customer, and that order's lines. Reads only.
template <class CC>
Rc Tpcc::order_status(Txn<CC>& txn, const Query& q, uint64_t& sink) const {
  using namespace tpcc;
  uint32_t c_id = q.c_id;
  if (q.by_last_name) {
    if (Rc rc = customer_by_last_name(txn, q.w_id, q.d_id, q.c_last, c_id, sink); rc != Rc::Ok) return rc;
  }
  const char* c = nullptr;
  if (Rc rc = txn.read(*customer_, customer_key(q.w_id, q.d_id, c_id), c); rc != Rc::Ok) return rc;
  sink += static_cast<uint64_t>(get_int64(c, c_.balance)) + static_cast<unsigned char>(c[c_.first.offset]);

  int64_t o_id = 0;
  Rc rc = txn.scan(*order_, kOrderByCustomer, order_by_customer_key(q.w_id, q.d_id, c_id, 1),
                   order_by_customer_key(q.w_id, q.d_id, c_id, kMaxOrderId), 1, ScanOrder::Descending,
                   [&](uint64_t /*key*/, const char* o) {
                     o_id = get_int64(o, o_.id);
                     sink += static_cast<uint64_t>(get_int64(o, o_.carrier_id) + get_int64(o, o_.entry_d));
                     return false;
                   });
  if (rc != Rc::Ok) return rc;
  if (o_id == 0) return Rc::Ok;  // a customer without orders: the load gives each one (4.3.3.1)
  const auto o = static_cast<uint64_t>(o_id);
  return txn.scan(*order_line_, order_line_key(q.w_id, q.d_id, o, 1), order_line_key(q.w_id, q.d_id, o, kMaxOrderLines),
                  kMaxOrderLines, ScanOrder::Ascending, [&](uint64_t /*key*/, const char* ol) {
                    sink += static_cast<uint64_t>(get_int64(ol, ol_.i_id) + get_int64(ol, ol_.supply_w_id) +
                                                  get_int64(ol, ol_.quantity) + get_int64(ol, ol_.amount) +
                                                  get_int64(ol, ol_.delivery_d));
                    return true;
                  });
}

// ---- Stock-Level (clause 2.8.2) ------------------------------------------------
// The distinct items of the district's last 20 orders whose stock in the
// warehouse is below the threshold. Reads only.
template <class CC>
Rc Tpcc::stock_level(Txn<CC>& txn, const Query& q, uint64_t& sink) const {
  using namespace tpcc;
  constexpr uint64_t kOrders = 20;
  const char* d = nullptr;
  if (Rc rc = txn.read(*district_, district_key(q.w_id, q.d_id), d); rc != Rc::Ok) return rc;
  const auto next = static_cast<uint64_t>(get_int64(d, d_.next_o_id));
  const uint64_t first = next > kOrders ? next - kOrders : 1;

  std::array<uint32_t, kOrders * kMaxOrderLines> items;
  std::size_t n = 0;
  Rc rc = txn.scan(*order_line_, order_line_key(q.w_id, q.d_id, first, 1),
                   order_line_key(q.w_id, q.d_id, next - 1, kMaxOrderLines), items.size(), ScanOrder::Ascending,
                   [&](uint64_t /*key*/, const char* ol) {
                     items[n++] = static_cast<uint32_t>(get_int64(ol, ol_.i_id));
                     return true;
                   });
  if (rc != Rc::Ok) return rc;
  std::sort(items.begin(), items.begin() + static_cast<std::ptrdiff_t>(n));
  const auto distinct = static_cast<std::size_t>(
      std::unique(items.begin(), items.begin() + static_cast<std::ptrdiff_t>(n)) - items.begin());
  uint64_t low = 0;
  for (std::size_t k = 0; k < distinct; k++) {
    const char* s = nullptr;
    if (rc = txn.read(*stock_, stock_key(q.w_id, items[k]), s); rc != Rc::Ok) return rc;
    if (get_int64(s, s_.quantity) < q.threshold) low++;
  }
  sink += low;
  return Rc::Ok;
}

}  // namespace abyss
