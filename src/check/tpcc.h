#pragma once
// Offline TPC-C consistency checker (`abyss check tpcc DIR`): reads the tables
// that `abyss run --workload tpcc --dump DIR` wrote and verifies the
// consistency conditions of TPC-C rev 5.11 clause 3.3.2 that NewOrder and
// Payment touch: 1, 2, 3, 4, 6, 8, 9, and 11 (which holds while no Delivery
// runs). Money columns are integer cents (tpcc_schema.h), so sums compare
// exactly.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace abyss::check {

struct TpccCondition {
  TpccCondition(int c, std::string d) : clause(c), description(std::move(d)) {}
  int clause;               // 3.3.2.<clause>
  std::string description;  // the equation
  bool checked = true;      // false: skipped (needs the inserts a --tpcc-inserts off run did not make)
  bool pass = true;
  uint64_t violations = 0;
  std::string first_violation;  // one line naming the first offending warehouse/district/order
};

struct TpccReport {
  std::vector<TpccCondition> conditions;
  bool all_pass() const {
    for (const auto& c : conditions) {
      if (c.checked && !c.pass) return false;
    }
    return true;
  }
  // One line per condition: "3.3.2.1  W_YTD = sum(D_YTD)  pass".
  std::string summary() const;
};

// `inserts` false: the run did not insert ORDER, NEW-ORDER, ORDER-LINE or
// HISTORY rows (DBx1000's variant), so conditions 2, 8 and 9, which relate
// them to counters and sums that still change, are reported as skipped.
// Throws std::runtime_error when a table's CSV is missing or malformed.
TpccReport check_tpcc_dir(const std::string& dir, bool inserts = true);

}  // namespace abyss::check
