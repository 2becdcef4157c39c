#include "check/tpcc.h"

#include <cstdlib>
#include <fstream>
#include <map>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

namespace abyss::check {

namespace {

// The integer columns `want` of every row of DIR/<table>.csv (the dump format
// of docs/formats.md: a header of column names, fields CSV-quoted strings or
// numbers).
std::vector<std::vector<int64_t>> read_columns(const std::string& dir, const std::string& table,
                                               const std::vector<std::string>& want) {
  const std::string path = dir + "/" + table + ".csv";
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  auto split = [&](const std::string& line, uint64_t lineno) {
    std::vector<std::string> fields(1);
    bool quoted = false;
    for (std::size_t i = 0; i < line.size(); i++) {
      const char ch = line[i];
      if (quoted) {
        if (ch == '"' && i + 1 < line.size() && line[i + 1] == '"') {
          fields.back() += '"';
          i++;
        } else if (ch == '"') {
          quoted = false;
        } else {
          fields.back() += ch;
        }
      } else if (ch == '"') {
        quoted = true;
      } else if (ch == ',') {
        fields.emplace_back();
      } else {
        fields.back() += ch;
      }
    }
    if (quoted) throw std::runtime_error(path + ":" + std::to_string(lineno) + ": unterminated quote");
    return fields;
  };
  std::string line;
  if (!std::getline(in, line)) throw std::runtime_error(path + ": empty, no header");
  const auto header = split(line, 1);
  std::vector<std::size_t> idx;
  for (const auto& w : want) {
    std::size_t k = 0;
    while (k < header.size() && header[k] != w) k++;
    if (k == header.size()) throw std::runtime_error(path + ": no column " + w);
    idx.push_back(k);
  }
  std::vector<std::vector<int64_t>> rows;
  for (uint64_t lineno = 2; std::getline(in, line); lineno++) {
    if (line.empty()) continue;
    const auto fields = split(line, lineno);
    if (fields.size() != header.size()) {
      throw std::runtime_error(path + ":" + std::to_string(lineno) + ": " + std::to_string(fields.size()) +
                               " fields, the header has " + std::to_string(header.size()));
    }
    std::vector<int64_t> row;
    for (std::size_t k : idx) {
      const std::string& f = fields[k];
      char* end = nullptr;
      const long long v = std::strtoll(f.c_str(), &end, 10);
      if (f.empty() || *end != '\0') {
        throw std::runtime_error(path + ":" + std::to_string(lineno) + ": " + header[k] + " '" + f +
                                 "' is not an integer");
      }
      row.push_back(v);
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

using District = std::pair<int64_t, int64_t>;  // (W_ID, D_ID)

std::string at_district(const District& d) {
  return "W_ID=" + std::to_string(d.first) + " D_ID=" + std::to_string(d.second);
}

void fail(TpccCondition& c, const std::string& what) {
  c.pass = false;
  if (c.violations++ == 0) c.first_violation = what;
}

}  // namespace

std::string TpccReport::summary() const {
  std::string s;
  for (const auto& c : conditions) {
    s += "3.3.2." + std::to_string(c.clause) + (c.clause < 10 ? "   " : "  ") + c.description + "  ";
    if (!c.checked) {
      s += "skipped (the run made no inserts)\n";
    } else if (c.pass) {
      s += "pass\n";
    } else {
      s += "FAIL (" + std::to_string(c.violations) + " violations; first: " + c.first_violation + ")\n";
    }
  }
  s += all_pass() ? "all conditions pass\n" : "consistency check failed\n";
  return s;
}

TpccReport check_tpcc_dir(const std::string& dir, bool inserts) {
  const auto warehouses = read_columns(dir, "warehouse", {"W_ID", "W_YTD"});
  const auto districts = read_columns(dir, "district", {"D_W_ID", "D_ID", "D_YTD", "D_NEXT_O_ID"});
  const auto customers = read_columns(dir, "customer", {"C_W_ID", "C_D_ID"});
  const auto orders = read_columns(dir, "order", {"O_W_ID", "O_D_ID", "O_ID", "O_OL_CNT"});
  const auto new_orders = read_columns(dir, "new_order", {"NO_W_ID", "NO_D_ID", "NO_O_ID"});
  const auto lines = read_columns(dir, "order_line", {"OL_W_ID", "OL_D_ID", "OL_O_ID"});
  const auto history = read_columns(dir, "history", {"H_W_ID", "H_D_ID", "H_AMOUNT"});

  // Per-district and per-warehouse aggregates.
  struct Agg {
    int64_t max_o = 0, orders = 0, ol_cnt_sum = 0;
    int64_t max_no = 0, min_no = INT64_MAX, new_orders = 0;
    int64_t lines = 0, h_sum = 0, customers = 0;
  };
  std::map<District, Agg> agg;
  std::map<int64_t, int64_t> d_ytd_sum, h_sum_w;
  std::map<std::tuple<int64_t, int64_t, int64_t>, std::pair<int64_t, int64_t>> per_order;  // O_OL_CNT, lines
  for (const auto& r : customers) agg[{r[0], r[1]}].customers++;
  for (const auto& r : orders) {
    Agg& a = agg[{r[0], r[1]}];
    a.max_o = std::max(a.max_o, r[2]);
    a.orders++;
    a.ol_cnt_sum += r[3];
    per_order[{r[0], r[1], r[2]}].first = r[3];
  }
  for (const auto& r : new_orders) {
    Agg& a = agg[{r[0], r[1]}];
    a.max_no = std::max(a.max_no, r[2]);
    a.min_no = std::min(a.min_no, r[2]);
    a.new_orders++;
  }
  for (const auto& r : lines) {
    agg[{r[0], r[1]}].lines++;
    auto it = per_order.find({r[0], r[1], r[2]});
    if (it == per_order.end()) {
      per_order[{r[0], r[1], r[2]}] = {-1, 1};  // a line without its order
    } else {
      it->second.second++;
    }
  }
  for (const auto& r : history) {
    agg[{r[0], r[1]}].h_sum += r[2];
    h_sum_w[r[0]] += r[2];
  }
  for (const auto& r : districts) d_ytd_sum[r[0]] += r[2];

  TpccReport rep;
  rep.conditions.reserve(8);  // the references below must stay valid
  auto& c1 = rep.conditions.emplace_back(TpccCondition{1, "W_YTD = sum(D_YTD)"});
  auto& c2 = rep.conditions.emplace_back(TpccCondition{2, "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)"});
  auto& c3 = rep.conditions.emplace_back(TpccCondition{3, "max(NO_O_ID) - min(NO_O_ID) + 1 = count(NEW-ORDER)"});
  auto& c4 = rep.conditions.emplace_back(TpccCondition{4, "sum(O_OL_CNT) = count(ORDER-LINE)"});
  auto& c6 = rep.conditions.emplace_back(TpccCondition{6, "O_OL_CNT = count(ORDER-LINE) of each order"});
  auto& c8 = rep.conditions.emplace_back(TpccCondition{8, "W_YTD = sum(H_AMOUNT) by H_W_ID"});
  auto& c9 = rep.conditions.emplace_back(TpccCondition{9, "D_YTD = sum(H_AMOUNT) by (H_W_ID, H_D_ID)"});
  auto& c11 = rep.conditions.emplace_back(
      TpccCondition{11, "count(ORDER) - count(NEW-ORDER) = customers - 900 (2,100 in the full schema)"});
  if (!inserts) c2.checked = c8.checked = c9.checked = false;
  if (warehouses.empty()) fail(c1, "no WAREHOUSE rows");

  for (const auto& r : warehouses) {
    const int64_t w = r[0], ytd = r[1];
    if (ytd != d_ytd_sum[w]) {
      fail(c1, "W_ID=" + std::to_string(w) + ": W_YTD " + std::to_string(ytd) + " != sum(D_YTD) " +
                   std::to_string(d_ytd_sum[w]));
    }
    if (ytd != h_sum_w[w]) {
      fail(c8, "W_ID=" + std::to_string(w) + ": W_YTD " + std::to_string(ytd) + " != sum(H_AMOUNT) " +
                   std::to_string(h_sum_w[w]));
    }
  }
  for (const auto& r : districts) {
    const District key{r[0], r[1]};
    const Agg& a = agg[key];
    const int64_t ytd = r[2], next = r[3];
    if (next - 1 != a.max_o || (a.new_orders > 0 && next - 1 != a.max_no)) {
      fail(c2, at_district(key) + ": D_NEXT_O_ID - 1 = " + std::to_string(next - 1) +
                   ", max(O_ID) = " + std::to_string(a.max_o) + ", max(NO_O_ID) = " + std::to_string(a.max_no));
    }
    if (a.new_orders > 0 && a.max_no - a.min_no + 1 != a.new_orders) {
      fail(c3, at_district(key) + ": max - min + 1 = " + std::to_string(a.max_no - a.min_no + 1) +
                   ", NEW-ORDER rows = " + std::to_string(a.new_orders));
    }
    if (a.ol_cnt_sum != a.lines) {
      fail(c4, at_district(key) + ": sum(O_OL_CNT) = " + std::to_string(a.ol_cnt_sum) +
                   ", ORDER-LINE rows = " + std::to_string(a.lines));
    }
    if (ytd != a.h_sum) {
      fail(c9, at_district(key) + ": D_YTD " + std::to_string(ytd) + " != sum(H_AMOUNT) " + std::to_string(a.h_sum));
    }
    const int64_t undelivered = 900;
    if (a.orders - a.new_orders != a.customers - undelivered) {
      fail(c11, at_district(key) + ": count(ORDER) - count(NEW-ORDER) = " + std::to_string(a.orders - a.new_orders) +
                    ", expected " + std::to_string(a.customers - undelivered));
    }
  }
  for (const auto& [key, v] : per_order) {
    if (v.first != v.second) {
      const auto& [w, d, o] = key;
      fail(c6, "W_ID=" + std::to_string(w) + " D_ID=" + std::to_string(d) + " O_ID=" + std::to_string(o) +
                   (v.first < 0 ? ": order lines without an ORDER row"
                                : ": O_OL_CNT " + std::to_string(v.first) + ", lines " + std::to_string(v.second)));
    }
  }
  return rep;
}

}  // namespace abyss::check
