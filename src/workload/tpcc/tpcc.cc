#include "workload/tpcc/tpcc.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <string>
#include <utility>

#include "platform/machine.h"
#include "platform/thread.h"
#include "storage/footprint.h"
#include "workload/mix.h"

namespace abyss {

using namespace tpcc;

namespace {

enum TableIdx : std::size_t { kW, kD, kC, kH, kNO, kO, kOL, kI, kS };

// The load's work units: ITEM and each warehouse's STOCK in chunks of this
// many items, and one unit per district.
constexpr uint64_t kLoadChunk = 10'000;
// The tables whose primary index is ordered when the mix scans, by TableIdx
// (tpcc_schema.h).
constexpr std::array<bool, 9> kScanned = {false, false, false, false, true, true, true, false, false};
// Rows per table block a loader takes at a time, by TableIdx: few for the
// small WAREHOUSE and DISTRICT tables.
constexpr std::array<uint64_t, 9> kLoadBlockRows = {16, 64, 4096, 4096, 4096, 4096, 4096, 4096, 4096};

std::array<Schema, 9> tpcc_schemas() {
  return {warehouse_schema(), district_schema(),   customer_schema(), history_schema(), new_order_schema(),
          order_schema(),     order_line_schema(), item_schema(),     stock_schema()};
}

// With --tpcc-materialize queried, the most CUSTOMER or STOCK rows one
// query can name: a NewOrder's 15 items, or a Payment's customers of one
// last name (about 3 in 3,000 on average; 15 bounds all but the rarest).
constexpr uint64_t kQueriedRowsPerQuery = 15;

// The most CUSTOMER or STOCK rows a --tpcc-materialize queried load can
// make: those its queries name, at most.
uint64_t queried_rows(const Config& config) {
  return uint64_t{config.threads} * config.queries_per_worker * kQueriedRowsPerQuery;
}

// Each table's index size: its loaded rows (run-time inserts lengthen chains).
std::array<uint64_t, 9> index_sizes(const Config& config) {
  const TpccConfig& cfg = config.settings<TpccConfig>();
  const uint64_t W = cfg.warehouses;
  const uint64_t districts = W * kDistrictsPerWarehouse;
  const uint64_t cust = cfg.customers_per_district();
  if (cfg.materialize == Materialize::Queried) {
    const uint64_t queried = queried_rows(config);
    return {W, districts,   std::min(districts * cust, queried), 1, 1, 1,
            1, cfg.items(), std::min(W * cfg.items(), queried)};
  }
  return {W,
          districts,
          districts * cust,
          districts * cust,
          districts * kNewOrdersPerDistrict,
          districts * cust,
          districts * cust * 10,
          cfg.items(),
          W * cfg.items()};
}

// NURand(A, x, y) of clause 2.1.6.
uint32_t nurand(Rng& rng, uint32_t a, uint32_t c, uint32_t x, uint32_t y) {
  return static_cast<uint32_t>((((rng.range(0, a) | rng.range(x, y)) + c) % (y - x + 1)) + x);
}

// Random a-string / n-string of clause 4.3.2.2: length uniform in [lo, hi].
void astring(Rng& rng, char* out, uint32_t lo, uint32_t hi) {
  static constexpr char kAlnum[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  const auto n = static_cast<uint32_t>(rng.range(lo, hi));
  for (uint32_t i = 0; i < n; i++) out[i] = kAlnum[rng.uniform(sizeof(kAlnum) - 1)];
}
void nstring(Rng& rng, char* out, uint32_t len) {
  for (uint32_t i = 0; i < len; i++) out[i] = static_cast<char>('0' + rng.uniform(10));
}
// Clause 4.3.3.1: 10% of I_DATA and S_DATA hold "ORIGINAL" at a random place.
void data_string(Rng& rng, char* out) {
  const auto n = static_cast<uint32_t>(rng.range(26, 50));
  astring(rng, out, n, n);
  if (rng.uniform(10) == 0) std::memcpy(out + rng.uniform(n - 8 + 1), "ORIGINAL", 8);
}
// Clause 4.3.2.7: 4 random digits then "11111".
void zip(Rng& rng, char* out) {
  nstring(rng, out, 4);
  std::memcpy(out + 4, "11111", 5);
}
void state(Rng& rng, char* out) {
  out[0] = static_cast<char>('A' + rng.uniform(26));
  out[1] = static_cast<char>('A' + rng.uniform(26));
}
double rate(Rng& rng, uint32_t max_ten_thousandths) {
  return static_cast<double>(rng.range(0, max_ten_thousandths)) / 10000.0;
}

// ORDER's keys, from a row's data (Table::KeyOf): its primary key, and its key
// in the index by customer.
const OrderCols& order_columns() {
  static const OrderCols cols = order_cols(order_schema());
  return cols;
}
uint64_t order_primary_key(const char* r) {
  const OrderCols& o = order_columns();
  return order_key(static_cast<uint64_t>(get_int64(r, o.w_id)), static_cast<uint64_t>(get_int64(r, o.d_id)),
                   static_cast<uint64_t>(get_int64(r, o.id)));
}
uint64_t order_customer_key(const char* r) {
  const OrderCols& o = order_columns();
  return order_by_customer_key(static_cast<uint64_t>(get_int64(r, o.w_id)), static_cast<uint64_t>(get_int64(r, o.d_id)),
                               static_cast<uint64_t>(get_int64(r, o.c_id)), static_cast<uint64_t>(get_int64(r, o.id)));
}

}  // namespace

void Tpcc::last_name(uint32_t n, char* out) {
  // Clause 4.3.2.3: three syllables, one per decimal digit of n.
  static constexpr const char* kSyllables[] = {"BAR", "OUGHT", "ABLE",  "PRI",   "PRES",
                                               "ESE", "ANTI",  "CALLY", "ATION", "EING"};
  std::memset(out, 0, 16);
  std::size_t len = 0;
  for (uint32_t digit : {n / 100, (n / 10) % 10, n % 10}) {
    const std::size_t l = std::strlen(kSyllables[digit]);
    std::memcpy(out + len, kSyllables[digit], l);
    len += l;
  }
}

Rng Tpcc::row_stream(uint64_t table, uint64_t key) const {
  return Rng((seed_ + 0x5851f42d4c957f2dULL * (table + 1)) * 0x9e3779b97f4a7c15ULL ^ key * 0xd1b54a32d192ed03ULL);
}

Tpcc::CustomerName Tpcc::customer_name(Rng& rng, uint64_t c) const {
  CustomerName n{c <= 1000 ? static_cast<uint32_t>(c - 1) : nurand(rng, 255, c_last_load_, 0, 999), {}};
  astring(rng, n.first.data(), 8, 16);
  return n;
}

void Tpcc::fill_customer(char* r, uint64_t w, uint64_t d, uint64_t c) const {
  Rng rng = row_stream(kC, customer_key(w, d, c));
  const CustomerName name = customer_name(rng, c);
  set_int64(r, c_.id, static_cast<int64_t>(c));
  set_int64(r, c_.d_id, static_cast<int64_t>(d));
  set_int64(r, c_.w_id, static_cast<int64_t>(w));
  last_name(name.last, r + c_.last.offset);
  std::memcpy(r + c_.middle.offset, "OE", 2);
  std::memcpy(r + c_.first.offset, name.first.data(), name.first.size());
  astring(rng, r + c_.street_1.offset, 10, 20);
  astring(rng, r + c_.street_2.offset, 10, 20);
  astring(rng, r + c_.city.offset, 10, 20);
  state(rng, r + c_.state.offset);
  zip(rng, r + c_.zip.offset);
  nstring(rng, r + c_.phone.offset, 16);
  set_int64(r, c_.since, kStartDate);
  std::memcpy(r + c_.credit.offset, rng.uniform(10) == 0 ? "BC" : "GC", 2);
  set_int64(r, c_.credit_lim, 5'000'000);
  set_double(r, c_.discount, rate(rng, 5000));
  set_int64(r, c_.balance, -1000);
  set_int64(r, c_.ytd_payment, 1000);
  set_int64(r, c_.payment_cnt, 1);
  set_int64(r, c_.delivery_cnt, 0);
  astring(rng, r + c_.data.offset, 300, 500);
}

void Tpcc::fill_stock(char* r, uint64_t w, uint64_t i) const {
  Rng rng = row_stream(kS, stock_key(w, i));
  set_int64(r, s_.i_id, static_cast<int64_t>(i));
  set_int64(r, s_.w_id, static_cast<int64_t>(w));
  set_int64(r, s_.quantity, static_cast<int64_t>(rng.range(10, 100)));
  for (const Column& dist : s_.dist) astring(rng, r + dist.offset, 24, 24);
  data_string(rng, r + s_.data.offset);
}

void Tpcc::resume(const Database& /*db*/) {
  // history_run_key: bit 62, the worker in bits 40..61, its count below.
  constexpr uint64_t kSeqMask = (uint64_t{1} << 40) - 1;
  history_->index().for_each([&](uint64_t key, Row* /*row*/) {
    if ((key >> 62) != 1) return;
    const uint64_t worker = (key >> 40) & ((uint64_t{1} << 22) - 1);
    if (worker < history_seq_.size()) {
      history_seq_[worker].next = std::max(history_seq_[worker].next, (key & kSeqMask) + 1);
    }
  });
}

Tpcc::Tpcc(const Config& config)
    : cfg_(config.settings<TpccConfig>()),
      sizes_(index_sizes(config)),
      seed_(config.seed),
      history_seq_(config.threads),
      delivery_hints_(std::make_unique<DeliveryHint[]>(std::size_t{cfg_.warehouses} * kDistrictsPerWarehouse)) {
  // Clause 2.1.6.1: C for C_LAST at run time differs from the load's by a
  // delta in [65, 119], but neither 96 nor 112.
  Rng rng(seed_ ^ 0x7470636355ULL);
  c_last_load_ = static_cast<uint32_t>(rng.range(0, 255));
  for (;;) {
    c_last_run_ = static_cast<uint32_t>(rng.range(0, 255));
    const uint32_t delta = c_last_run_ > c_last_load_ ? c_last_run_ - c_last_load_ : c_last_load_ - c_last_run_;
    if (delta >= 65 && delta <= 119 && delta != 96 && delta != 112) break;
  }
  c_id_c_ = static_cast<uint32_t>(rng.range(0, 1023));
  ol_i_id_c_ = static_cast<uint32_t>(rng.range(0, 8191));
}

Tpcc::~Tpcc() {
  for (const void* p : placed_chunks_) platform::memory_released(p);
}

// One loader thread's cursors and index nodes.
class Tpcc::Loader {
 public:
  // `item`: the copy of ITEM its ITEM rows go to (ITEM itself by default).
  Loader(Tpcc& t, void (*init_row)(void*), Table* item = nullptr) : t_(t), init_row_(init_row), item_(item) {}

  // Adds a live row to table `ti` under `key`; `fill` writes its data.
  template <class Fill>
  void add(std::size_t ti, uint64_t key, uint64_t block_rows, Fill&& fill) {
    table(ti).load_row(cursors_[ti], nodes_, block_rows, key, init_row_, std::forward<Fill>(fill));
  }

  // Adds table `ti`'s fence row under `key` (Table::load_fence).
  void fence(std::size_t ti, uint64_t key, uint64_t block_rows) {
    table(ti).load_fence(cursors_[ti], nodes_, block_rows, key, init_row_);
  }

  // Index nodes live as long as the database. An ITEM copy's are placed on
  // its node (the caller's PlaceOnNode) until the workload is done with them.
  void finish() {
    if (item_ != nullptr) {
      nodes_.for_each_chunk([&](const void* p, std::size_t bytes) {
        platform::memory_taken(p, bytes);
        t_.placed_chunks_.push_back(p);
      });
    }
    (item_ != nullptr ? *item_ : *t_.tables_[0]).adopt(std::move(nodes_));
  }

 private:
  Table& table(std::size_t ti) { return ti == kI && item_ != nullptr ? *item_ : *t_.tables_[ti]; }

  Tpcc& t_;
  void (*init_row_)(void*);
  Table* item_;
  std::array<RowCursor, 9> cursors_{};
  Arena nodes_{std::size_t{8} << 20, "the TPC-C index nodes"};
};

void Tpcc::load(Database& db, uint32_t loaders, void (*init_row)(void* meta)) {
  const uint64_t W = cfg_.warehouses;
  const uint64_t items = cfg_.items();
  const uint64_t cust = cfg_.customers_per_district();
  const uint64_t districts = W * kDistrictsPerWarehouse;
  const std::array<uint64_t, 9>& sizes = sizes_;
  const bool queried = cfg_.materialize == Materialize::Queried;
  warehouse_ = &db.create_table(kWarehouse, warehouse_schema(), sizes[kW]);
  district_ = &db.create_table(kDistrict, district_schema(), sizes[kD]);
  customer_ = &db.create_table(kCustomer, customer_schema(), sizes[kC]);
  history_ = &db.create_table(kHistory, history_schema(), sizes[kH]);
  // With scans in the mix, a district's orders and an order's lines are key
  // ranges (tpcc_schema.h).
  const IndexType ranges = cfg_.scans() ? IndexType::Ordered : IndexType::Hash;
  new_order_t_ = &db.create_table(kNewOrder, new_order_schema(), sizes[kNO], ranges);
  order_ = &db.create_table(kOrder, order_schema(), sizes[kO], ranges);
  if (cfg_.scans()) {
    order_->set_primary_key_of(order_primary_key);
    if (order_->add_index("by_customer", IndexType::Ordered, sizes[kO], order_customer_key) != kOrderByCustomer) {
      throw std::logic_error("ORDER's index by customer is not its first secondary index");
    }
  }
  order_line_ = &db.create_table(kOrderLine, order_line_schema(), sizes[kOL], ranges);
  // --tpcc-replicate-item on: a copy of ITEM on each memory node, its index
  // and rows placed there, loaded after the other tables (Tale §4.3).
  const uint32_t copies = cfg_.replicate_item ? platform::memory_nodes() : 1;
  {
    std::optional<platform::PlaceOnNode> on_node;
    if (copies > 1) on_node.emplace(0);
    item_ = &db.create_table(kItem, item_schema(), sizes[kI]);
  }
  item_->set_read_only();  // no TPC-C transaction writes ITEM, so no scheme need guard it
  stock_ = &db.create_table(kStock, stock_schema(), sizes[kS]);
  items_ = {item_};
  for (uint32_t node = 1; node < copies; node++) {
    const platform::PlaceOnNode on_node(node);
    Table& copy = db.create_table(std::string(kItem) + "@node" + std::to_string(node), item_schema(), sizes[kI]);
    copy.set_read_only();
    items_.push_back(&copy);
  }
  tables_ = {warehouse_, district_, customer_, history_, new_order_t_, order_, order_line_, item_, stock_};
  w_ = warehouse_cols(warehouse_->schema());
  d_ = district_cols(district_->schema());
  c_ = customer_cols(customer_->schema());
  h_ = history_cols(history_->schema());
  no_ = new_order_cols(new_order_t_->schema());
  o_ = order_cols(order_->schema());
  ol_ = order_line_cols(order_line_->schema());
  i_ = item_cols(item_->schema());
  s_ = stock_cols(stock_->schema());
  by_last_.assign(districts, {});

  // Work units, each with its own random stream (so the database does not
  // depend on the number of loaders): item chunks, then per warehouse its
  // stock chunks (the first also loads the WAREHOUSE row), then districts.
  const uint64_t item_units = (items + kLoadChunk - 1) / kLoadChunk;
  const uint64_t stock_units = W * item_units;
  const uint64_t units = item_units + stock_units + districts;
  const int64_t d_ytd = static_cast<int64_t>(cust) * 1000;  // C * 10.00: HISTORY's initial sum (3.3.2.9)
  const uint64_t delivered = cust - kNewOrdersPerDistrict;  // orders 1..delivered are delivered (4.3.3.1)

  const auto unit_stream = [&](uint64_t u) { return Rng(seed_ * 0x9e3779b97f4a7c15ULL + u + 1); };
  const auto load_items = [&](Loader& ld, uint64_t u) {  // ITEM (clause 4.3.3.1)
    Rng rng = unit_stream(u);
    for (uint64_t i = u * kLoadChunk + 1; i <= std::min(items, (u + 1) * kLoadChunk); i++) {
      ld.add(kI, item_key(i), kLoadBlockRows[kI], [&](char* r) {
        set_int64(r, i_.id, static_cast<int64_t>(i));
        set_int64(r, i_.im_id, static_cast<int64_t>(rng.range(1, 10'000)));
        astring(rng, r + i_.name.offset, 14, 24);
        set_int64(r, i_.price, static_cast<int64_t>(rng.range(100, 10'000)));
        data_string(rng, r + i_.data.offset);
      });
    }
  };
  platform::run_parallel(loaders, [&](uint32_t l) {
    Loader ld(*this, init_row);
    for (uint64_t u = l; u < units; u += loaders) {
      Rng rng = unit_stream(u);
      if (u < item_units) {
        if (copies == 1) load_items(ld, u);
      } else if (u < item_units + stock_units) {
        const uint64_t w = (u - item_units) / item_units + 1;
        const uint64_t chunk = (u - item_units) % item_units;
        if (chunk == 0) {  // WAREHOUSE
          ld.add(kW, warehouse_key(w), kLoadBlockRows[kW], [&](char* r) {
            set_int64(r, w_.id, static_cast<int64_t>(w));
            astring(rng, r + w_.name.offset, 6, 10);
            astring(rng, r + w_.street_1.offset, 10, 20);
            astring(rng, r + w_.street_2.offset, 10, 20);
            astring(rng, r + w_.city.offset, 10, 20);
            state(rng, r + w_.state.offset);
            zip(rng, r + w_.zip.offset);
            set_double(r, w_.tax, rate(rng, 2000));
            set_int64(r, w_.ytd, d_ytd * kDistrictsPerWarehouse);  // 300,000.00 in the full schema
          });
        }
        if (queried) continue;  // generate() loads the STOCK rows the queries name
        for (uint64_t i = chunk * kLoadChunk + 1; i <= std::min(items, (chunk + 1) * kLoadChunk); i++) {  // STOCK
          ld.add(kS, stock_key(w, i), kLoadBlockRows[kS], [&](char* r) { fill_stock(r, w, i); });
        }
      } else {
        const uint64_t di = u - item_units - stock_units;
        const uint64_t w = di / kDistrictsPerWarehouse + 1;
        const uint64_t d = di % kDistrictsPerWarehouse + 1;
        ld.add(kD, district_key(w, d), kLoadBlockRows[kD], [&](char* r) {
          set_int64(r, d_.id, static_cast<int64_t>(d));
          set_int64(r, d_.w_id, static_cast<int64_t>(w));
          astring(rng, r + d_.name.offset, 6, 10);
          astring(rng, r + d_.street_1.offset, 10, 20);
          astring(rng, r + d_.street_2.offset, 10, 20);
          astring(rng, r + d_.city.offset, 10, 20);
          state(rng, r + d_.state.offset);
          zip(rng, r + d_.zip.offset);
          set_double(r, d_.tax, rate(rng, 2000));
          set_int64(r, d_.ytd, d_ytd);
          set_int64(r, d_.next_o_id, static_cast<int64_t>(cust + 1));
        });
        struct Named {
          uint32_t last;
          std::array<char, 16> first;
          uint32_t c_id;
        };
        std::vector<Named> names;
        names.reserve(cust);
        for (uint64_t c = 1; c <= cust; c++) {  // CUSTOMER and its HISTORY row
          Rng own = row_stream(kC, customer_key(w, d, c));
          const CustomerName name = customer_name(own, c);
          const Named named{name.last, name.first, static_cast<uint32_t>(c)};
          names.push_back(named);
          if (queried) continue;  // generate() loads the CUSTOMER rows the queries name
          ld.add(kC, customer_key(w, d, c), kLoadBlockRows[kC], [&](char* r) { fill_customer(r, w, d, c); });
          ld.add(kH, customer_key(w, d, c), kLoadBlockRows[kH], [&](char* r) {
            set_int64(r, h_.c_id, static_cast<int64_t>(c));
            set_int64(r, h_.c_d_id, static_cast<int64_t>(d));
            set_int64(r, h_.c_w_id, static_cast<int64_t>(w));
            set_int64(r, h_.d_id, static_cast<int64_t>(d));
            set_int64(r, h_.w_id, static_cast<int64_t>(w));
            set_int64(r, h_.date, kStartDate);
            set_int64(r, h_.amount, 1000);
            astring(rng, r + h_.data.offset, 12, 24);
          });
        }
        // The last-name index of this district (clause 2.5.2.2 orders by C_FIRST).
        std::sort(names.begin(), names.end(), [](const Named& a, const Named& b) {
          return a.last != b.last ? a.last < b.last : a.first != b.first ? a.first < b.first : a.c_id < b.c_id;
        });
        LastNameIndex& ix = by_last_[di];
        ix.offsets.assign(1001, 0);
        ix.c_ids.reserve(names.size());
        for (const Named& n : names) {
          ix.offsets[n.last + 1]++;
          ix.c_ids.push_back(n.c_id);
        }
        std::partial_sum(ix.offsets.begin(), ix.offsets.end(), ix.offsets.begin());
        if (queried) continue;  // no initial ORDER, ORDER-LINE or NEW-ORDER row

        // ORDER, ORDER-LINE, NEW-ORDER: O_C_ID is a random permutation of the customers.
        std::vector<uint32_t> perm(cust);
        std::iota(perm.begin(), perm.end(), 1u);
        for (uint64_t k = cust - 1; k > 0; k--) std::swap(perm[k], perm[rng.uniform(k + 1)]);
        for (uint64_t o = 1; o <= cust; o++) {
          const auto ol_cnt = static_cast<int64_t>(rng.range(5, 15));
          ld.add(kO, order_key(w, d, o), kLoadBlockRows[kO], [&](char* r) {
            set_int64(r, o_.id, static_cast<int64_t>(o));
            set_int64(r, o_.d_id, static_cast<int64_t>(d));
            set_int64(r, o_.w_id, static_cast<int64_t>(w));
            set_int64(r, o_.c_id, perm[o - 1]);
            set_int64(r, o_.entry_d, kStartDate);
            set_int64(r, o_.carrier_id, o <= delivered ? static_cast<int64_t>(rng.range(1, 10)) : 0);
            set_int64(r, o_.ol_cnt, ol_cnt);
            set_int64(r, o_.all_local, 1);
          });
          for (int64_t n = 1; n <= ol_cnt; n++) {
            ld.add(kOL, order_line_key(w, d, o, static_cast<uint64_t>(n)), kLoadBlockRows[kOL], [&](char* r) {
              set_int64(r, ol_.o_id, static_cast<int64_t>(o));
              set_int64(r, ol_.d_id, static_cast<int64_t>(d));
              set_int64(r, ol_.w_id, static_cast<int64_t>(w));
              set_int64(r, ol_.number, n);
              set_int64(r, ol_.i_id, static_cast<int64_t>(rng.range(1, items)));
              set_int64(r, ol_.supply_w_id, static_cast<int64_t>(w));
              set_int64(r, ol_.delivery_d, o <= delivered ? kStartDate : 0);
              set_int64(r, ol_.quantity, 5);
              set_int64(r, ol_.amount, o <= delivered ? 0 : static_cast<int64_t>(rng.range(1, 999'999)));
              astring(rng, r + ol_.dist_info.offset, 24, 24);
            });
          }
          if (o > delivered) {
            ld.add(kNO, order_key(w, d, o), kLoadBlockRows[kNO], [&](char* r) {
              set_int64(r, no_.o_id, static_cast<int64_t>(o));
              set_int64(r, no_.d_id, static_cast<int64_t>(d));
              set_int64(r, no_.w_id, static_cast<int64_t>(w));
            });
          }
        }
        if (cfg_.scans()) ld.fence(kNO, order_key(w, d, kNewOrderFence), kLoadBlockRows[kNO]);
      }
    }
    ld.finish();
  });
  // Each copy of ITEM, loaded here while its node's placement lives: the
  // same rows from the same streams as the one ITEM of a run without copies.
  for (uint32_t node = 0; copies > 1 && node < copies; node++) {
    const platform::PlaceOnNode on_node(node);
    Loader ld(*this, init_row, items_[node]);
    for (uint64_t u = 0; u < item_units; u++) load_items(ld, u);
    ld.finish();
  }
  if (queried) {
    init_row_ = init_row;
    customer_loaded_.assign(districts * cust, false);
    stock_loaded_.assign(W * items, false);
  }
}

void Tpcc::load_customer(Arena& nodes, uint64_t w, uint64_t d, uint64_t c) const {
  const uint64_t at = ((w - 1) * kDistrictsPerWarehouse + (d - 1)) * cfg_.customers_per_district() + (c - 1);
  if (customer_loaded_[at]) return;
  customer_loaded_[at] = true;
  customer_->load_row(customer_cursor_, nodes, kLoadBlockRows[kC], customer_key(w, d, c), init_row_,
                      [&](char* r) { fill_customer(r, w, d, c); });
}

void Tpcc::load_queried(const Queries& qs) const {
  Arena nodes(std::size_t{1} << 20, "the TPC-C index nodes");
  const uint64_t items = cfg_.items();
  for (const Query& q : qs.queries) {
    if (q.type == kNewOrderTxn) {
      load_customer(nodes, q.w_id, q.d_id, q.c_id);
      for (uint32_t k = 0; k < q.ol_cnt; k++) {
        const OrderItem& it = q.items[k];
        if (it.i_id > items) continue;  // the unused item of a rolled-back NewOrder
        const uint64_t at = (uint64_t{it.supply_w_id} - 1) * items + (it.i_id - 1);
        if (stock_loaded_[at]) continue;
        stock_loaded_[at] = true;
        stock_->load_row(stock_cursor_, nodes, kLoadBlockRows[kS], stock_key(it.supply_w_id, it.i_id), init_row_,
                         [&](char* r) { fill_stock(r, it.supply_w_id, it.i_id); });
      }
    } else if (q.by_last_name) {  // Payment (validate() admits no other type): every customer of the name
      const auto [first, last] = customers_by_last_name(q.c_w_id, q.c_d_id, q.c_last);
      for (const uint32_t* c = first; c != last; c++) load_customer(nodes, q.c_w_id, q.c_d_id, *c);
    } else {
      load_customer(nodes, q.c_w_id, q.c_d_id, q.c_id);
    }
  }
  customer_->adopt(std::move(nodes));
}

uint64_t Tpcc::estimate_load_bytes(const Config& config, std::size_t meta_size, std::size_t meta_align,
                                   uint32_t loaders) {
  const TpccConfig& cfg = config.settings<TpccConfig>();
  const RowLayout layout = RowLayout::for_meta(meta_size, meta_align, config.storage.align);
  const std::array<Schema, 9> schemas = tpcc_schemas();
  const uint64_t W = cfg.warehouses;
  const uint64_t items = cfg.items();
  const uint64_t cust = cfg.customers_per_district();
  const uint64_t districts = W * kDistrictsPerWarehouse;

  uint64_t bytes = 0;
  const bool queried = cfg.materialize == Materialize::Queried;
  const std::array<uint64_t, 9> sizes = index_sizes(config);
  for (std::size_t t = 0; t < sizes.size(); t++) {
    if (!(cfg.scans() && kScanned[t])) bytes += footprint::hash_index(sizes[t], config.storage);
  }

  // The rows each loader adds to each table, dealing the work units as
  // load() does (unit u to loader u % loaders): a loader's blocks are its own,
  // so each partly filled one counts whole.
  std::vector<std::array<uint64_t, 9>> rows(loaders, std::array<uint64_t, 9>{});
  const uint64_t item_units = (items + kLoadChunk - 1) / kLoadChunk;
  const uint64_t units = item_units + W * item_units + districts;
  for (uint64_t u = 0; u < units; u++) {
    std::array<uint64_t, 9>& r = rows[u % loaders];
    if (u < item_units + W * item_units) {
      const uint64_t chunk = u % item_units;
      const uint64_t chunk_items = std::min(items, (chunk + 1) * kLoadChunk) - chunk * kLoadChunk;
      if (u < item_units) {
        r[kI] += chunk_items;
      } else {
        r[kW] += chunk == 0 ? 1 : 0;
        r[kS] += queried ? 0 : chunk_items;
      }
    } else if (queried) {
      r[kD] += 1;
    } else {
      // A district: its customers, their HISTORY rows and orders, 5..15 lines
      // per order (10 expected, clause 4.3.3.1) and the undelivered 900 orders.
      r[kD] += 1;
      r[kC] += cust;
      r[kH] += cust;
      r[kO] += cust;
      r[kOL] += cust * 10;
      r[kNO] += kNewOrdersPerDistrict + (cfg.scans() ? 1 : 0);  // and the district's fence
    }
  }
  if (queried) {  // CUSTOMER and STOCK rows, loaded by generate() on one thread
    std::array<uint64_t, 9>& r = rows.emplace_back();
    r[kC] = sizes[kC];
    r[kS] = sizes[kS];
  }
  for (const auto& r : rows) {
    uint64_t nodes = 0;
    for (std::size_t t = 0; t < r.size(); t++) {
      bytes += footprint::table_rows(r[t], kLoadBlockRows[t], Table::stride_for(layout, schemas[t]), config.storage);
      if (cfg.scans() && kScanned[t]) {
        bytes += footprint::ordered_index(r[t]);
      } else {
        nodes += r[t];
      }
    }
    bytes += footprint::index_nodes(nodes, config.storage);
    if (cfg.scans()) bytes += footprint::ordered_index(r[kO]);  // ORDER's index by customer
  }
  // The last-name index: per district 1,001 offsets and one C_ID per customer.
  bytes += districts * (1001 + cust) * sizeof(uint32_t);
  // --tpcc-replicate-item on: each further copy of ITEM, loaded by one thread.
  if (cfg.replicate_item) {
    const uint64_t copy =
        footprint::hash_index(sizes[kI], config.storage) +
        footprint::table_rows(items, kLoadBlockRows[kI], Table::stride_for(layout, schemas[kI]), config.storage) +
        footprint::index_nodes(items, config.storage);
    bytes += uint64_t{platform::memory_nodes() - 1} * copy;
  }
  return bytes;
}

uint64_t Tpcc::estimate_worker_bytes(const Config& config, std::size_t meta_size, std::size_t meta_align) {
  uint64_t bytes = uint64_t{config.queries_per_worker} * sizeof(Query);
  if (config.settings<TpccConfig>().inserts) {
    // Txn::insert takes blocks of Table::kDefaultBlockRows per worker and
    // table, and its index nodes from the worker's 1 MiB arena chunks.
    const RowLayout layout = RowLayout::for_meta(meta_size, meta_align, config.storage.align);
    const std::array<Schema, 9> schemas = tpcc_schemas();
    for (const std::size_t t : {kO, kNO, kOL, kH}) {
      bytes +=
          footprint::table_rows(1, Table::kDefaultBlockRows, Table::stride_for(layout, schemas[t]), config.storage);
    }
    bytes += uint64_t{1} << 20;
  }
  return bytes;
}

Tpcc::Queries Tpcc::generate(uint32_t worker, uint32_t count, Rng& rng) const {
  Queries qs;
  qs.queries.reserve(count);
  const uint32_t W = cfg_.warehouses;
  const auto items = cfg_.items();
  const auto cust = cfg_.customers_per_district();
  const auto home = static_cast<uint16_t>(worker % W + 1);
  // A warehouse other than home, uniform (clauses 2.4.1.5, 2.5.1.2).
  auto remote = [&]() {
    auto r = static_cast<uint16_t>(rng.range(1, W - 1));
    return static_cast<uint16_t>(r >= home ? r + 1 : r);
  };
  // Payment's and Order-Status's customer (clauses 2.5.1.2, 2.6.1.2): 60% by
  // last name, the rest by id.
  auto pick_customer = [&](Query& q) {
    q.by_last_name = rng.range(1, 100) <= 60;
    if (q.by_last_name) {
      q.c_last = static_cast<uint16_t>(nurand(rng, 255, c_last_run_, 0, 999));
    } else {
      q.c_id = nurand(rng, 1023, c_id_c_, 1, cust);
    }
  };
  // Clause 2.8.1.1: a terminal's Stock-Level queries one district, its own.
  const auto own_district = static_cast<uint16_t>(worker / W % kDistrictsPerWarehouse + 1);
  for (uint32_t n = 0; n < count; n++) {
    Query q{};
    q.type = draw_type(rng, cfg_.mix);
    q.w_id = home;
    q.d_id = static_cast<uint16_t>(rng.range(1, kDistrictsPerWarehouse));
    if (q.type == kDeliveryTxn) {  // clause 2.7.1
      q.carrier_id = static_cast<uint8_t>(rng.range(1, 10));
    } else if (q.type == kOrderStatusTxn) {  // clause 2.6.1
      pick_customer(q);
    } else if (q.type == kStockLevelTxn) {  // clause 2.8.1
      q.d_id = own_district;
      q.threshold = static_cast<uint8_t>(rng.range(10, 20));
    } else if (q.type == kNewOrderTxn) {  // clause 2.4.1
      q.c_id = nurand(rng, 1023, c_id_c_, 1, cust);
      q.ol_cnt = static_cast<uint8_t>(rng.range(5, 15));
      const bool rollback = rng.range(1, 100) == 1;  // 2.4.1.4: the last item is unused
      q.all_local = true;
      for (uint32_t k = 0; k < q.ol_cnt; k++) {
        OrderItem& it = q.items[k];
        it.i_id = nurand(rng, 8191, ol_i_id_c_, 1, items);
        if (rollback && k + 1 == q.ol_cnt) it.i_id = items + 1;
        // 2.4.1.5: 1% of the items come from a remote warehouse.
        it.supply_w_id = W > 1 && rng.range(1, 100) == 1 ? remote() : home;
        if (it.supply_w_id != home) q.all_local = false;
        it.quantity = static_cast<uint16_t>(rng.range(1, 10));
      }
    } else {  // clause 2.5.1
      q.h_amount = static_cast<int64_t>(rng.range(100, 500'000));
      // 2.5.1.2: 85% pay at home, 15% through a remote warehouse.
      if (W == 1 || rng.range(1, 100) <= 85) {
        q.c_w_id = home;
        q.c_d_id = q.d_id;
      } else {
        q.c_w_id = remote();
        q.c_d_id = static_cast<uint16_t>(rng.range(1, kDistrictsPerWarehouse));
      }
      pick_customer(q);
    }
    qs.queries.push_back(q);
  }
  if (cfg_.materialize == Materialize::Queried) load_queried(qs);
  return qs;
}

void Tpcc::partitions_of(const Queries& qs, std::size_t i, std::vector<uint32_t>& out) const {
  out.clear();
  const Query& q = qs.queries[i];
  out.push_back(q.w_id - 1u);
  if (q.type == kNewOrderTxn) {
    for (uint32_t k = 0; k < q.ol_cnt; k++) out.push_back(q.items[k].supply_w_id - 1u);
  } else if (q.type == kPaymentTxn) {
    out.push_back(q.c_w_id - 1u);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
}

namespace {

constexpr WorkloadMetric kTpccMetrics[] = {
    {"tpmC", "tpmC", "NewOrder commits/min",
     [](const WorkerStats& total, double seconds, const Config& /*config*/) {
       return seconds > 0 && total.types.size() > Tpcc::kNewOrderTxn
                  ? static_cast<double>(total.types[Tpcc::kNewOrderTxn][Counter::Commits]) * 60 / seconds
                  : 0.0;
     }},
};

}  // namespace

std::span<const WorkloadMetric> Tpcc::metrics() { return kTpccMetrics; }

std::string Tpcc::validate(const Config& config) {
  const TpccConfig& cfg = config.settings<TpccConfig>();
  if (cfg.materialize == Materialize::Queried && cfg.scans()) {
    return "--tpcc-materialize queried loads no initial orders, which Delivery, Order-Status and Stock-Level read "
           "(--tpcc-mix " +
           tpcc_mix_string(cfg.mix) + "): run NewOrder and Payment alone, or use --tpcc-materialize all";
  }
  return {};
}

std::vector<Knob> Tpcc::knobs() {
  using knob_detail::lower;
  std::vector<Knob> t;
  Knob k;
  t.push_back(integer<uint32_t>(
      "warehouses", "tpcc.warehouses", 1, kMaxWarehouses,
      +[](Config& c) -> uint32_t& { return c.settings<TpccConfig>().warehouses; },
      "TPC-C warehouses (H-STORE: one partition each)"));
  t.push_back(choice(
      "tpcc-schema", "tpcc.schema", kTpccSchemaNames,
      +[](Config& c) -> TpccSchema& { return c.settings<TpccConfig>().schema; },
      "TPC-C cardinalities: full (the spec's) or small (DBx1000's, as in Abyss)"));
  t.push_back(on_off(
      "tpcc-inserts", "tpcc.inserts", +[](Config& c) -> bool& { return c.settings<TpccConfig>().inserts; },
      "TPC-C: insert ORDER, NEW-ORDER, ORDER-LINE and HISTORY rows: on | off (DBx1000's variant)"));
  t.push_back(on_off(
      "tpcc-replicate-item", "tpcc.replicate_item",
      +[](Config& c) -> bool& { return c.settings<TpccConfig>().replicate_item; },
      "TPC-C: a copy of the read-only ITEM table on each memory node, read by that node's workers: on | off "
      "(Tale §4.3; the simulated numa topology's sockets in use, or this machine's nodes)"));
  t.back().ignored_because = +[](const cc::SchemeTraits& /*scheme*/, const Config& c) -> std::string {
    if (!c.settings<TpccConfig>().replicate_item || platform::memory_nodes() > 1) return {};
    return platform::kSimulated
               ? "the simulated machine's cores fill one socket (a mesh has one memory node), so ITEM has one copy"
               : "this machine has one memory node, so ITEM has one copy";
  };
  t.push_back(choice(
      "tpcc-materialize", "tpcc.materialize", kMaterializeNames,
      +[](Config& c) -> Materialize& { return c.settings<TpccConfig>().materialize; },
      "TPC-C rows the load makes: all, or of CUSTOMER and STOCK only those the workers' pre-generated queries name "
      "(the papers' 1,024 warehouses without their memory; NewOrder and Payment only)"));
  k = Knob{};
  k.name = "tpcc-mix";
  k.json = "tpcc.mix";
  k.kind = KnobKind::Text;
  k.syntax = "neworder=P,payment=P,delivery=P,orderstatus=P,stocklevel=P";
  k.help = "TPC-C transaction mix in percent, summing to 100 (names left out get 0), e.g. neworder=50,payment=50";
  k.set = [](Config& c, std::string_view text) { return parse_tpcc_mix(lower(text), c.settings<TpccConfig>().mix); };
  k.get = [](const Config& c) { return nlohmann::json(tpcc_mix_string(c.settings<TpccConfig>().mix)); };
  t.push_back(std::move(k));
  return t;
}

}  // namespace abyss
