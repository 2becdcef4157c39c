#pragma once
// Dumps of short TPC-C runs and the edits the checker tests make to them: one
// clean dump per insert mode and process (copied before each edit), and CSV
// helpers that change one field, so a test corrupts exactly what it names.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "common/config.h"
#include "engine/engine.h"
#include "workload/tpcc/tpcc_config.h"

namespace abyss::testing_dump {

namespace fs = std::filesystem;

// One dump of a short single-worker NO_WAIT run on the small schema. Under
// ctest, the fixture tpcc_dump made it once for the whole test run
// (tests/support/tpcc_dumps.cmake, with the same settings) and
// ABYSS_TEST_TPCC_DUMPS names its folder; a process started otherwise makes
// its own, once, and removes it at exit. Tests never change it: they edit
// copies (copy_dump).
inline const std::string& clean_dump(bool inserts = true) {
  struct Dump {
    std::string dir;
    bool made = false;
    explicit Dump(bool ins) {
      if (const char* shared = std::getenv("ABYSS_TEST_TPCC_DUMPS"); shared != nullptr && *shared != '\0') {
        dir = std::string(shared) + (ins ? "/inserts-on" : "/inserts-off");
        return;
      }
      dir = testing::TempDir() + "abyss_tpcc_dump_" + std::to_string(::getpid()) + (ins ? "" : "_noins");
      fs::remove_all(dir);
      Config cfg;
      cfg.workload = "tpcc";
      cfg.settings<TpccConfig>().schema = TpccSchema::Small;
      cfg.settings<TpccConfig>().warehouses = 1;
      cfg.settings<TpccConfig>().inserts = ins;
      cfg.cc = "no_wait";
      cfg.threads = 1;
      cfg.duration_s = 0.05;
      cfg.warmup_s = 0;
      cfg.dump_dir = dir;
      (void)run(cfg);
      made = true;
    }
    ~Dump() {
      if (made) fs::remove_all(dir);
    }
  };
  if (inserts) {
    static const Dump with_inserts(true);
    return with_inserts.dir;
  }
  static const Dump without_inserts(false);
  return without_inserts.dir;
}

// A copy of the clean dump under a name of its own, in this process's
// temporary folder; the test removes it.
inline std::string copy_dump(const std::string& what, bool inserts = true) {
  const std::string d = testing::TempDir() + "abyss_tpcc_" + std::to_string(::getpid()) + "_" + what;
  fs::remove_all(d);
  fs::copy(clean_dump(inserts), d);
  return d;
}

// A dumped table as lines of fields. Splitting on ',' is safe for the dump:
// the columns the tests touch are integers, and the generated text columns
// hold letters, digits and spaces only (tpcc.cc astring, last_name).
struct Csv {
  std::string path;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;

  explicit Csv(std::string dir_table) : path(std::move(dir_table)) {
    std::ifstream in(path);
    std::string line;
    if (std::getline(in, line)) header = split(line);
    while (std::getline(in, line)) rows.push_back(split(line));
  }

  std::size_t column(const std::string& name) const {
    const auto it = std::find(header.begin(), header.end(), name);
    if (it == header.end()) ADD_FAILURE() << path << " has no column " << name;
    return static_cast<std::size_t>(it - header.begin());
  }
  int64_t get(std::size_t row, const std::string& col) const { return std::stoll(rows.at(row).at(column(col))); }
  void set(std::size_t row, const std::string& col, const std::string& value) { rows.at(row).at(column(col)) = value; }
  void add(std::size_t row, const std::string& col, int64_t delta) {
    set(row, col, std::to_string(get(row, col) + delta));
  }
  // The first row for which `pred` holds, or rows.size().
  std::size_t find(const std::function<bool(std::size_t)>& pred) const {
    for (std::size_t r = 0; r < rows.size(); r++) {
      if (pred(r)) return r;
    }
    return rows.size();
  }
  // The line number of data row `row` in the file (the header is line 1).
  static uint64_t line_of(std::size_t row) { return row + 2; }

  void save() const {
    std::ofstream out(path, std::ios::trunc);
    out << join(header) << '\n';
    for (const auto& r : rows) out << join(r) << '\n';
  }

 private:
  static std::vector<std::string> split(const std::string& line) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string x; std::getline(ss, x, ',');) f.push_back(x);
    if (!line.empty() && line.back() == ',') f.emplace_back();
    return f;
  }
  static std::string join(const std::vector<std::string>& f) {
    std::string s;
    for (std::size_t i = 0; i < f.size(); i++) s += (i ? "," : "") + f[i];
    return s;
  }
};

inline Csv table(const std::string& dir, const std::string& name) { return Csv(dir + "/" + name + ".csv"); }

// Undoes one Payment of the run on its CUSTOMER row only: the HISTORY row and
// the WAREHOUSE and DISTRICT totals keep it, as when a concurrent Payment's
// write of the same customer overwrote it (a lost update). Returns false if
// the run made no Payment.
inline bool lose_one_payment_on_customer(const std::string& dir) {
  const Csv history = table(dir, "history");
  // The loader's HISTORY rows are of 10.00 (4.3.3.1); any other amount is a
  // Payment of the run.
  const std::size_t h = history.find([&](std::size_t r) { return history.get(r, "H_AMOUNT") != 1000; });
  if (h == history.rows.size()) return false;
  const int64_t amount = history.get(h, "H_AMOUNT");
  Csv customer = table(dir, "customer");
  const std::size_t c = customer.find([&](std::size_t r) {
    return customer.get(r, "C_W_ID") == history.get(h, "H_C_W_ID") &&
           customer.get(r, "C_D_ID") == history.get(h, "H_C_D_ID") &&
           customer.get(r, "C_ID") == history.get(h, "H_C_ID");
  });
  if (c == customer.rows.size()) return false;
  customer.add(c, "C_BALANCE", amount);
  customer.add(c, "C_YTD_PAYMENT", -amount);
  customer.add(c, "C_PAYMENT_CNT", -1);
  customer.save();
  return true;
}

}  // namespace abyss::testing_dump
