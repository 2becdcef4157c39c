#pragma once
// TPC-C tables (TPC-C rev 5.11 clause 1.3) with the spec's column names, and
// the packing of their composite primary keys into the 64-bit keys of the
// transaction API.
//
// Representation:
// - Money (W_YTD, D_YTD, C_BALANCE, H_AMOUNT, I_PRICE, OL_AMOUNT, ...) is an
//   Int64 column holding cents: sums are exact, so the consistency conditions
//   of clause 3.3.2 compare with ==. Dumps therefore show cents.
// - Rates (W_TAX, D_TAX, C_DISCOUNT) are Double columns (fractions, 4 decimals).
// - Dates (C_SINCE, H_DATE, O_ENTRY_D, OL_DELIVERY_D) are Int64 seconds since
//   the epoch; a null date or O_CARRIER_ID is 0 (clause 4.3.3.1 "null").
// - Strings are fixed-size Chars columns of the spec's maximum length; a
//   shorter value ends at a NUL.
#include <cstdint>

#include "storage/schema.h"

namespace abyss::tpcc {

// Primary-key packing. Widths: warehouse 11 bits (1..2047), district 4 bits
// (1..10), customer 12 bits (1..3000), order id 32 bits, order-line number 4
// bits (1..15), item 17 bits (1..100,000).
//   WAREHOUSE   W_ID
//   DISTRICT    W_ID << 4 | D_ID
//   CUSTOMER    (W_ID << 4 | D_ID) << 12 | C_ID
//   ORDER       (W_ID << 4 | D_ID) << 32 | O_ID          (NEW-ORDER: the same)
//   ORDER-LINE  ((W_ID << 4 | D_ID) << 32 | O_ID) << 4 | OL_NUMBER
//   ITEM        I_ID
//   STOCK       W_ID << 17 | I_ID
//   HISTORY     has no primary key in the spec; a surrogate: loaded rows take
//               their customer's key, rows inserted at run time take
//               1 << 62 | worker << 40 | per-worker sequence number.
// When the mix scans (TpccConfig::scans), ORDER, NEW-ORDER and ORDER-LINE
// have ordered primary indexes, so a district's orders and an order's lines
// are key ranges, and ORDER has a second ordered index by customer
// (Order-Status finds a customer's latest order):
//   ORDER by customer  ((W_ID << 4 | D_ID) << 12 | C_ID) << 32 | O_ID
inline constexpr uint64_t warehouse_key(uint64_t w) { return w; }
inline constexpr uint64_t district_key(uint64_t w, uint64_t d) { return w << 4 | d; }
inline constexpr uint64_t customer_key(uint64_t w, uint64_t d, uint64_t c) { return district_key(w, d) << 12 | c; }
inline constexpr uint64_t order_key(uint64_t w, uint64_t d, uint64_t o) { return district_key(w, d) << 32 | o; }
inline constexpr uint64_t order_line_key(uint64_t w, uint64_t d, uint64_t o, uint64_t ol) {
  return order_key(w, d, o) << 4 | ol;
}
inline constexpr uint64_t order_by_customer_key(uint64_t w, uint64_t d, uint64_t c, uint64_t o) {
  return customer_key(w, d, c) << 32 | o;
}
inline constexpr uint64_t item_key(uint64_t i) { return i; }
inline constexpr uint64_t stock_key(uint64_t w, uint64_t i) { return w << 17 | i; }
inline constexpr uint64_t kHistoryRunKeys = uint64_t{1} << 62;  // the history rows inserted at run time
inline constexpr uint64_t history_run_key(uint64_t worker, uint64_t seq) {
  return kHistoryRunKeys | worker << 40 | seq;
}

inline constexpr uint32_t kMaxWarehouses = (1u << 11) - 1;  // the keys' warehouse bits; the Tale runs 1,568
inline constexpr uint32_t kDistrictsPerWarehouse = 10;      // clause 1.2.1
inline constexpr uint32_t kMaxOrderLines = 15;              // clause 2.4.1.3
inline constexpr uint32_t kNewOrdersPerDistrict = 900;      // clause 4.3.3.1: O_ID 2,101..3,000 of 3,000
inline constexpr int64_t kStartDate = 1'700'000'000;        // the load's "current date", seconds
inline constexpr uint64_t kMaxOrderId = 0xffff'fffe;        // O_ID's range in the keys: 1..kMaxOrderId
// With scans, NEW-ORDER holds, above each district's orders, a row no transaction sees
// (deleted from the load on) at O_ID kMaxOrderId + 1: the next key of the
// district's newest order, so a NewOrder's insert writes it rather than the
// oldest NEW-ORDER row of the next district, which Delivery removes.
inline constexpr uint64_t kNewOrderFence = kMaxOrderId + 1;
// Every key of every warehouse lies below the history rows inserted at run time.
static_assert(order_by_customer_key(kMaxWarehouses, kDistrictsPerWarehouse, 4095, kNewOrderFence) < kHistoryRunKeys);
static_assert(order_line_key(kMaxWarehouses, kDistrictsPerWarehouse, kNewOrderFence, kMaxOrderLines) < kHistoryRunKeys);

// Resolved columns of every table (Tale §5: catalogue look-ups once, at
// construction; Tale §5). Built by make_tpcc_schemas().
struct WarehouseCols {
  Column id, name, street_1, street_2, city, state, zip, tax, ytd;
};
struct DistrictCols {
  Column id, w_id, name, street_1, street_2, city, state, zip, tax, ytd, next_o_id;
};
struct CustomerCols {
  Column id, d_id, w_id, first, middle, last, street_1, street_2, city, state, zip, phone, since, credit, credit_lim,
      discount, balance, ytd_payment, payment_cnt, delivery_cnt, data;
};
struct HistoryCols {
  Column c_id, c_d_id, c_w_id, d_id, w_id, date, amount, data;
};
struct NewOrderCols {
  Column o_id, d_id, w_id;
};
struct OrderCols {
  Column id, d_id, w_id, c_id, entry_d, carrier_id, ol_cnt, all_local;
};
struct OrderLineCols {
  Column o_id, d_id, w_id, number, i_id, supply_w_id, delivery_d, quantity, amount, dist_info;
};
struct ItemCols {
  Column id, im_id, name, price, data;
};
// NOLINTNEXTLINE(bugprone-reserved-identifier): the name it reports is the compiler's, from copying dist[10]
struct StockCols {
  Column i_id, w_id, quantity, dist[10], ytd, order_cnt, remote_cnt, data;
};

// Table names as the dump writes them (DIR/<name>.csv).
inline constexpr const char* kWarehouse = "warehouse";
inline constexpr const char* kDistrict = "district";
inline constexpr const char* kCustomer = "customer";
inline constexpr const char* kHistory = "history";
inline constexpr const char* kNewOrder = "new_order";
inline constexpr const char* kOrder = "order";
inline constexpr const char* kOrderLine = "order_line";
inline constexpr const char* kItem = "item";
inline constexpr const char* kStock = "stock";

Schema warehouse_schema();
Schema district_schema();
Schema customer_schema();
Schema history_schema();
Schema new_order_schema();
Schema order_schema();
Schema order_line_schema();
Schema item_schema();
Schema stock_schema();

WarehouseCols warehouse_cols(const Schema& s);
DistrictCols district_cols(const Schema& s);
CustomerCols customer_cols(const Schema& s);
HistoryCols history_cols(const Schema& s);
NewOrderCols new_order_cols(const Schema& s);
OrderCols order_cols(const Schema& s);
OrderLineCols order_line_cols(const Schema& s);
ItemCols item_cols(const Schema& s);
StockCols stock_cols(const Schema& s);

}  // namespace abyss::tpcc
