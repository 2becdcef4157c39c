#pragma once
// Offline TPC-C consistency checker (`abyss check tpcc DIR`): reads the tables
// that `abyss run --workload tpcc --dump DIR` wrote and verifies the twelve
// consistency conditions of TPC-C rev 5.11 clause 3.3.2, after a run of any
// mix of the five transactions. Condition 11 is checked in a form that also
// holds after Deliveries (the clause's 2,100 holds only before the first);
// tpcc.cc says how. Money columns are integer cents (tpcc_schema.h), so sums
// compare exactly.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "check/input_error.h"

namespace abyss::check {

struct TpccCondition {
  TpccCondition(int c, std::string d) : clause(c), description(std::move(d)) {}
  int clause;               // 3.3.2.<clause>
  std::string description;  // the equation
  bool checked = true;      // false: skipped, for the reason in skip_reason
  std::string skip_reason;  // "the run made no inserts (--tpcc-inserts off), ..."
  bool pass = true;
  uint64_t violations = 0;
  std::string first_violation;  // one line naming the first offending warehouse/district/order/customer
};

struct TpccReport {
  std::vector<TpccCondition> conditions;  // in clause order
  // A hint for a reader of a failed check (empty if none), e.g. that the dump
  // looks like a --tpcc-inserts off run checked as if inserts were on.
  std::string note;
  [[nodiscard]] bool all_pass() const {
    for (const auto& c : conditions) {
      if (c.checked && !c.pass) return false;
    }
    return true;
  }
  // One line per condition: "3.3.2.1   W_YTD = sum(D_YTD)  pass", or
  // "... skipped: <reason>", or "... FAIL (...)"; then the note, then a
  // verdict line.
  [[nodiscard]] std::string summary() const;
};

// `inserts` false: the run did not insert ORDER, NEW-ORDER, ORDER-LINE or
// HISTORY rows (DBx1000's variant), so conditions 2, 8, 9 and 10, which
// relate those rows to counters and sums that still change, are skipped with
// the reason. Both schemas (full, small) are checked alike: nothing reads a
// cardinality from the configuration.
//
// Throws InputError when DIR or a table's CSV cannot be read: missing, empty,
// a header other than the table's TPC-C columns, a row with the wrong number
// of fields or not ending in a newline (truncated), a malformed quote, or an
// integer column that is empty, not an integer, or beyond 64 bits. The
// message names the file, the line and, for a value, the column and value.
[[nodiscard]] TpccReport check_tpcc_dir(const std::string& dir, bool inserts = true);

}  // namespace abyss::check
