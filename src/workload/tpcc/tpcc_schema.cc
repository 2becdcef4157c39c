#include "workload/tpcc/tpcc_schema.h"

#include <string>

namespace abyss::tpcc {

// Clause 1.3.1: column names, and the widths of their spec types.
Schema warehouse_schema() {
  Schema s;
  s.add_int64("W_ID").add_chars("W_NAME", 10).add_chars("W_STREET_1", 20).add_chars("W_STREET_2", 20);
  s.add_chars("W_CITY", 20).add_chars("W_STATE", 2).add_chars("W_ZIP", 9).add_double("W_TAX").add_int64("W_YTD");
  return s;
}

Schema district_schema() {
  Schema s;
  s.add_int64("D_ID").add_int64("D_W_ID").add_chars("D_NAME", 10).add_chars("D_STREET_1", 20);
  s.add_chars("D_STREET_2", 20).add_chars("D_CITY", 20).add_chars("D_STATE", 2).add_chars("D_ZIP", 9);
  s.add_double("D_TAX").add_int64("D_YTD").add_int64("D_NEXT_O_ID");
  return s;
}

Schema customer_schema() {
  Schema s;
  s.add_int64("C_ID").add_int64("C_D_ID").add_int64("C_W_ID").add_chars("C_FIRST", 16).add_chars("C_MIDDLE", 2);
  s.add_chars("C_LAST", 16).add_chars("C_STREET_1", 20).add_chars("C_STREET_2", 20).add_chars("C_CITY", 20);
  s.add_chars("C_STATE", 2).add_chars("C_ZIP", 9).add_chars("C_PHONE", 16).add_int64("C_SINCE");
  s.add_chars("C_CREDIT", 2).add_int64("C_CREDIT_LIM").add_double("C_DISCOUNT").add_int64("C_BALANCE");
  s.add_int64("C_YTD_PAYMENT").add_int64("C_PAYMENT_CNT").add_int64("C_DELIVERY_CNT").add_chars("C_DATA", 500);
  return s;
}

Schema history_schema() {
  Schema s;
  s.add_int64("H_C_ID").add_int64("H_C_D_ID").add_int64("H_C_W_ID").add_int64("H_D_ID").add_int64("H_W_ID");
  s.add_int64("H_DATE").add_int64("H_AMOUNT").add_chars("H_DATA", 24);
  return s;
}

Schema new_order_schema() {
  Schema s;
  s.add_int64("NO_O_ID").add_int64("NO_D_ID").add_int64("NO_W_ID");
  return s;
}

Schema order_schema() {
  Schema s;
  s.add_int64("O_ID").add_int64("O_D_ID").add_int64("O_W_ID").add_int64("O_C_ID").add_int64("O_ENTRY_D");
  s.add_int64("O_CARRIER_ID").add_int64("O_OL_CNT").add_int64("O_ALL_LOCAL");
  return s;
}

Schema order_line_schema() {
  Schema s;
  s.add_int64("OL_O_ID").add_int64("OL_D_ID").add_int64("OL_W_ID").add_int64("OL_NUMBER").add_int64("OL_I_ID");
  s.add_int64("OL_SUPPLY_W_ID").add_int64("OL_DELIVERY_D").add_int64("OL_QUANTITY").add_int64("OL_AMOUNT");
  s.add_chars("OL_DIST_INFO", 24);
  return s;
}

Schema item_schema() {
  Schema s;
  s.add_int64("I_ID").add_int64("I_IM_ID").add_chars("I_NAME", 24).add_int64("I_PRICE").add_chars("I_DATA", 50);
  return s;
}

Schema stock_schema() {
  Schema s;
  s.add_int64("S_I_ID").add_int64("S_W_ID").add_int64("S_QUANTITY");
  for (int d = 1; d <= 10; d++) s.add_chars(std::string("S_DIST_") + (d < 10 ? "0" : "") + std::to_string(d), 24);
  s.add_int64("S_YTD").add_int64("S_ORDER_CNT").add_int64("S_REMOTE_CNT").add_chars("S_DATA", 50);
  return s;
}

WarehouseCols warehouse_cols(const Schema& s) {
  return {s.column("W_ID"),    s.column("W_NAME"), s.column("W_STREET_1"), s.column("W_STREET_2"), s.column("W_CITY"),
          s.column("W_STATE"), s.column("W_ZIP"),  s.column("W_TAX"),      s.column("W_YTD")};
}

DistrictCols district_cols(const Schema& s) {
  return {s.column("D_ID"),       s.column("D_W_ID"), s.column("D_NAME"),     s.column("D_STREET_1"),
          s.column("D_STREET_2"), s.column("D_CITY"), s.column("D_STATE"),    s.column("D_ZIP"),
          s.column("D_TAX"),      s.column("D_YTD"),  s.column("D_NEXT_O_ID")};
}

CustomerCols customer_cols(const Schema& s) {
  return {s.column("C_ID"),      s.column("C_D_ID"),        s.column("C_W_ID"),        s.column("C_FIRST"),
          s.column("C_MIDDLE"),  s.column("C_LAST"),        s.column("C_STREET_1"),    s.column("C_STREET_2"),
          s.column("C_CITY"),    s.column("C_STATE"),       s.column("C_ZIP"),         s.column("C_PHONE"),
          s.column("C_SINCE"),   s.column("C_CREDIT"),      s.column("C_CREDIT_LIM"),  s.column("C_DISCOUNT"),
          s.column("C_BALANCE"), s.column("C_YTD_PAYMENT"), s.column("C_PAYMENT_CNT"), s.column("C_DELIVERY_CNT"),
          s.column("C_DATA")};
}

HistoryCols history_cols(const Schema& s) {
  return {s.column("H_C_ID"), s.column("H_C_D_ID"), s.column("H_C_W_ID"), s.column("H_D_ID"),
          s.column("H_W_ID"), s.column("H_DATE"),   s.column("H_AMOUNT"), s.column("H_DATA")};
}

NewOrderCols new_order_cols(const Schema& s) { return {s.column("NO_O_ID"), s.column("NO_D_ID"), s.column("NO_W_ID")}; }

OrderCols order_cols(const Schema& s) {
  return {s.column("O_ID"),      s.column("O_D_ID"),       s.column("O_W_ID"),   s.column("O_C_ID"),
          s.column("O_ENTRY_D"), s.column("O_CARRIER_ID"), s.column("O_OL_CNT"), s.column("O_ALL_LOCAL")};
}

OrderLineCols order_line_cols(const Schema& s) {
  return {s.column("OL_O_ID"),   s.column("OL_D_ID"),        s.column("OL_W_ID"),       s.column("OL_NUMBER"),
          s.column("OL_I_ID"),   s.column("OL_SUPPLY_W_ID"), s.column("OL_DELIVERY_D"), s.column("OL_QUANTITY"),
          s.column("OL_AMOUNT"), s.column("OL_DIST_INFO")};
}

ItemCols item_cols(const Schema& s) {
  return {s.column("I_ID"), s.column("I_IM_ID"), s.column("I_NAME"), s.column("I_PRICE"), s.column("I_DATA")};
}

StockCols stock_cols(const Schema& s) {
  StockCols c;
  c.i_id = s.column("S_I_ID");
  c.w_id = s.column("S_W_ID");
  c.quantity = s.column("S_QUANTITY");
  for (int d = 0; d < 10; d++) c.dist[d] = s.column(3 + static_cast<std::size_t>(d));
  c.ytd = s.column("S_YTD");
  c.order_cnt = s.column("S_ORDER_CNT");
  c.remote_cnt = s.column("S_REMOTE_CNT");
  c.data = s.column("S_DATA");
  return c;
}

}  // namespace abyss::tpcc
