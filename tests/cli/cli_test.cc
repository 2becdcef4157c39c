// The `abyss` binary's handling of bad input (docs/architecture.md, "External contracts"): a bad
// invocation or configuration exits 2 with ONE line on stderr that names the
// flag, the value and what is allowed, and runs nothing (no report on stdout).
// The binary is run as a child process, exactly as a user or a script runs it.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cc/schemes.h"
#include "common/config.h"
#include "engine/knobs.h"
#include "stats/stats.h"
#include "support/run_abyss.h"
#include "workload/tpcc/tpcc_config.h"
#include "workload/workloads.h"
#include "workload/ycsb/ycsb_config.h"

namespace abyss {
namespace {

namespace fs = std::filesystem;

using test::Outcome;
using test::run_abyss;
using test::slurp;
using test::temp_path;

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// Whether `token` occurs in `line` as a whole word: "0" must not match inside
// "1024", nor "--theta" inside "--theta-x", nor "1.0" inside "1.05". A
// following "->" (CLI11's map notation) or punctuation ends a token.
bool names_token(std::string_view line, std::string_view token) {
  for (std::size_t pos = line.find(token); pos != std::string_view::npos; pos = line.find(token, pos + 1)) {
    const std::size_t end = pos + token.size();
    const char before = pos == 0 ? ' ' : line[pos - 1];
    const char after = end < line.size() ? line[end] : ' ';
    const char after2 = end + 1 < line.size() ? line[end + 1] : ' ';
    const bool starts = !word_char(before) && before != '-' && before != '.';
    const bool ends = !word_char(after) && !(after == '-' && (word_char(after2) || after2 == '-')) &&
                      !(after == '.' && std::isdigit(static_cast<unsigned char>(after2)) != 0);
    if (starts && ends) return true;
  }
  return false;
}

// Stderr less the note a run prints when the machine is busier than its
// workers leave room for: it depends on the load (ctest runs tests side by
// side), not on the flags under test.
std::string without_machine_note(const std::string& err) {
  std::istringstream in(err);
  std::string out;
  for (std::string line; std::getline(in, line);) {
    if (line.find("abyss: note: ") == 0 && line.find(" worker(s) on ") != std::string::npos) continue;
    out += line + "\n";
  }
  return out;
}

// ---- bad invocations ---------------------------------------------------------

struct BadCase {
  std::string name;
  std::vector<std::string> args;
  // Words the one stderr line must contain: the flag, the bad value, and what
  // is allowed (every allowed name of a choice, the bound of a range).
  std::vector<std::string> must_name;
};

std::ostream& operator<<(std::ostream& os, const BadCase& c) { return os << c.name; }

template <std::size_t N>
std::vector<std::string> with_names(std::vector<std::string> words, const std::array<std::string_view, N>& names) {
  for (auto n : names) words.emplace_back(n);
  return words;
}

std::vector<std::string> with_scheme_names(std::vector<std::string> words) {
  for (const cc::SchemeTraits& s : cc::schemes()) words.emplace_back(s.name);
  return words;
}

std::vector<std::string> with_workload_names(std::vector<std::string> words) {
  for (const WorkloadInfo& w : workloads()) words.emplace_back(w.traits.name);
  return words;
}

std::vector<BadCase> bad_cases() {
  const std::string missing = "/nonexistent-abyss-dir/history.jsonl";
  return {
      // Choices: the line lists every allowed name, taken from the registry so
      // a newly added scheme is checked too.
      {"cc_unknown", {"run", "--cc", "bogus"}, with_scheme_names({"--cc", "bogus"})},
      {"workload_unknown", {"run", "--workload", "bogus"}, with_workload_names({"--workload", "bogus"})},
      {"latch_unknown", {"run", "--latch", "x"}, with_names({"--latch", "x"}, kLatchNames)},
      {"backoff_unknown", {"run", "--backoff", "x"}, with_names({"--backoff", "x"}, kBackoffNames)},
      {"key_order_unknown", {"run", "--key-order", "x"}, with_names({"--key-order", "x"}, kKeyOrderNames)},
      {"dl_detect_maybe", {"run", "--dl-detect", "maybe"}, {"--dl-detect", "maybe", "on", "off"}},
      {"ts_alloc_bogus", {"run", "--ts-alloc", "bogus"}, {"--ts-alloc", "bogus", "mutex", "atomic", "batch", "clock"}},
      {"ts_alloc_batch_zero", {"run", "--ts-alloc", "batch:0"}, {"--ts-alloc", "batch:0"}},
      {"ts_alloc_hw_needs_the_simulated_mesh", {"run", "--ts-alloc", "hw"}, {"--ts-alloc", "hw", "--sim-cores"}},
      {"sim_cores_needs_the_simulated_build", {"run", "--sim-cores", "64"}, {"--sim-cores", "simulated"}},
      {"ts_alloc_batch_not_a_number", {"run", "--ts-alloc", "batch:abc"}, {"--ts-alloc", "batch:abc"}},
      // Ranges: the line names the value and the bound it broke.
      {"threads_zero", {"run", "--threads", "0"}, {"--threads", "0", "4096"}},
      {"sample_interval_nan", {"run", "--sample-interval", "nan"}, {"--sample-interval", "nan", "auto"}},
      {"sample_interval_negative", {"run", "--sample-interval", "-1"}, {"--sample-interval", "-1", "auto"}},
      {"sample_interval_too_fine", {"run", "--sample-interval", "0.00001"}, {"--sample-interval", "0.00001"}},
      {"samples_the_machine_cannot_hold",
       {"run", "--duration", "86400", "--sample-interval", "0.0001", "--threads", "64", "--rows", "1000"},
       {"GiB"}},
      {"threads_too_many", {"run", "--threads", "5000"}, {"--threads", "5000", "4096"}},
      {"theta_one", {"run", "--theta", "1.0"}, {"--theta", "1.0"}},
      {"theta_negative", {"run", "--theta", "-0.1"}, {"--theta", "-0.1"}},
      {"write_ratio_above_one", {"run", "--write-ratio", "1.5"}, {"--write-ratio", "1.5"}},
      {"req_per_txn_zero", {"run", "--req-per-txn", "0"}, {"--req-per-txn", "0", "64"}},
      {"req_per_txn_too_many", {"run", "--req-per-txn", "65"}, {"--req-per-txn", "65", "64"}},
      {"partitions_zero", {"run", "--partitions", "0"}, {"--partitions", "0", "1024"}},
      {"backoff_base_above_1s", {"run", "--backoff-base-ns", "2e9"}, {"--backoff-base-ns", "2e9", "1000000000"}},
      {"dl_detect_every_zero", {"run", "--dl-detect-every-ns", "0"}, {"--dl-detect-every-ns", "0", "1000000000"}},
      {"dl_max_edges_zero", {"run", "--dl-max-edges", "0"}, {"--dl-max-edges", "0", "1024"}},
      {"mvcc_refresh_every_negative", {"run", "--mvcc-refresh-every", "-1"}, {"--mvcc-refresh-every", "-1"}},
      {"silo_epoch_zero", {"run", "--silo-epoch-ms", "0"}, {"--silo-epoch-ms", "0", "10000"}},
      // Cross-field checks (Config::validate): both flags and both values.
      {"parts_per_txn_above_partitions",
       {"run", "--parts-per-txn", "4", "--partitions", "2"},
       {"--parts-per-txn", "4", "--partitions", "2"}},
      {"req_per_txn_above_rows",
       {"run", "--req-per-txn", "32", "--rows", "16"},
       {"--req-per-txn", "32", "--rows", "16"}},
      {"scans_of_a_hash_index", {"run", "--scan-ratio", "0.5"}, {"--scan-ratio", "0.5", "--primary-index ordered"}},
      {"scans_and_inserts_above_one",
       {"run", "--primary-index", "ordered", "--scan-ratio", "0.7", "--insert-ratio", "0.4"},
       {"--scan-ratio", "0.7", "--insert-ratio", "0.4", "at most 1"}},
      {"scans_of_partitions",
       {"run", "--primary-index", "ordered", "--scan-ratio", "0.5", "--partitions", "2"},
       {"--scan-ratio", "0.5", "--partitions", "2"}},
      {"scan_length_zero", {"run", "--max-scan-length", "0"}, {"--max-scan-length", "0", "1000"}},
      // Invocation errors.
      {"unknown_flag", {"run", "--no-such-flag"}, {"--no-such-flag"}},
      {"missing_subcommand", {}, {"run", "check", "describe", "version"}},
      {"check_history_missing_file", {"check", "history", missing}, {missing}},
      // TPC-C flags.
      {"warehouses_zero", {"run", "--workload", "tpcc", "--warehouses", "0"}, {"--warehouses", "0", "2047"}},
      {"warehouses_too_many", {"run", "--workload", "tpcc", "--warehouses", "2048"}, {"--warehouses", "2048", "2047"}},
      {"tpcc_schema_unknown",
       {"run", "--tpcc-schema", "tiny"},
       with_names({"--tpcc-schema", "tiny"}, kTpccSchemaNames)},
      {"tpcc_inserts_maybe", {"run", "--tpcc-inserts", "maybe"}, {"--tpcc-inserts", "maybe", "on", "off"}},
      {"tpcc_mix_not_100",
       {"run", "--tpcc-mix", "neworder=50,payment=40"},
       {"--tpcc-mix", "neworder=50,payment=40", "100"}},
      {"tpcc_mix_unknown_txn",
       {"run", "--tpcc-mix", "refund=100"},
       {"--tpcc-mix", "refund=100", "neworder", "stocklevel"}},
      {"check_tpcc_missing_dir", {"check", "tpcc", "/nonexistent-abyss-dir"}, {"/nonexistent-abyss-dir"}},
      // A flag of the other workload would be ignored: refused instead.
      {"ycsb_flag_on_tpcc", {"run", "--workload", "tpcc", "--theta", "0.5"}, {"--theta", "0.5", "ycsb", "tpcc"}},
      {"tpcc_flag_on_ycsb", {"run", "--warehouses", "4"}, {"--warehouses", "4", "ycsb", "tpcc"}},
      // The run-based tables are harness specs: the line names the spec.
      {"bench_ycsb_is_a_spec", {"bench", "ycsb", "--reps", "3"}, {"./abyss", "harness/specs/bench-ycsb.toml"}},
      {"bench_latch_is_a_spec", {"bench", "latch"}, {"harness/specs/bench-latch.toml"}},
      {"bench_ts_is_a_spec", {"bench", "ts", "--duration", "0.1"}, {"./abyss bench ts", "harness/specs/bench-ts.toml"}},
      {"bench_alone_names_the_specs", {"bench"}, {"./abyss bench", "ycsb", "hstore", "tpcc", "latch", "ts"}},
      {"demo_is_a_spec", {"demo"}, {"./abyss", "demo", "harness/specs/demo.toml"}},
      // The index bench runs in the binary: its sizes and names are checked first.
      {"bench_index_keys_beyond_memory", {"bench", "index", "--keys", "4294967296"}, {"--keys", "GiB", "available"}},
      {"bench_memory_no_accesses", {"bench", "memory", "--accesses-per-txn", "0"}, {"--accesses-per-txn", "0"}},
      {"bench_memory_no_region", {"bench", "memory", "--size-mib", "0"}, {"--size-mib", "0"}},
      {"bench_memory_work_nan", {"bench", "memory", "--work-ns", "nan"}, {"--work-ns", "nan"}},
      {"bench_index_structure_unknown",
       {"bench", "index", "--structures", "trie"},
       {"--structures", "trie", "hash", "ordered", "btree", "map"}},
      {"bench_index_seconds_nan", {"bench", "index", "--seconds", "nan"}, {"--seconds", "nan"}},
      {"bench_scan_no_tuples", {"bench", "scan", "--tuples", "0"}, {"--tuples", "0"}},
      {"bench_scan_beyond_memory", {"bench", "scan", "--tuples", "4000000000"}, {"4000000000", "GiB", "available"}},
      {"bench_scan_unknown_design",
       {"bench", "scan", "--designs", "foo"},
       {"foo", "coarse", "ordered-map", "lock-free"}},
      {"bench_scan_one_check_thread", {"bench", "scan", "--check-threads", "1"}, {"--check-threads 1", "0 (no check)"}},
      // Numbers that are not numbers, or do not fit.
      {"threads_not_a_number", {"run", "--threads", "abc"}, {"--threads", "abc", "not", "number", "4096"}},
      {"threads_not_an_integer", {"run", "--threads", "1.5"}, {"--threads", "1.5", "integer"}},
      {"seed_negative", {"run", "--seed", "-1"}, {"--seed", "-1", "18446744073709551615"}},
      {"seed_above_64_bits", {"run", "--seed", "18446744073709551616"}, {"--seed", "18446744073709551616"}},
      {"rows_empty", {"run", "--rows", ""}, {"--rows", "number"}},
      {"hotspot_past_the_accesses",
       {"run", "--hotspot-position", "17", "--req-per-txn", "16"},
       {"--hotspot-position", "17", "--req-per-txn", "16"}},
      {"bamboo_retire_unknown", {"run", "--bamboo-retire", "never"}, {"--bamboo-retire", "never", "access", "commit"}},
      // Output paths are checked before anything runs, with the OS's reason.
      {"json_in_missing_dir", {"run", "--json", missing}, {"--json", missing, "No", "such", "file"}},
      {"json_onto_directory", {"run", "--json", testing::TempDir()}, {"--json", "directory"}},
      {"history_onto_directory", {"run", "--history", testing::TempDir()}, {"--history", "directory"}},
      {"history_empty", {"run", "--history", ""}, {"--history", "path"}},
      {"dump_empty", {"run", "--dump", ""}, {"--dump", "path"}},
      {"dump_onto_file", {"run", "--dump", "/proc/self/exe"}, {"--dump", "/proc/self/exe", "not", "directory"}},
      // Durability's flags go together, and recover reads log directories only.
      {"log_file_without_dir", {"run", "--log", "file"}, {"--log", "file", "--log-dir"}},
      {"log_dir_onto_file", {"run", "--log", "file", "--log-dir", "/proc/self/exe"}, {"--log-dir", "not", "directory"}},
      {"log_unknown", {"run", "--log", "disk"}, {"--log", "disk", "off", "memory", "file"}},
      {"journal_unknown", {"run", "--journal", "many"}, {"--journal", "many", "shared", "per-worker"}},
      {"fsync_unknown", {"run", "--fsync", "sometimes"}, {"--fsync", "sometimes", "always", "group", "never"}},
      {"group_commit_zero", {"run", "--group-commit-us", "0"}, {"--group-commit-us", "0"}},
      // A retired write is named by an id taken at the write; a log takes it at the install.
      {"bamboo_history_with_log",
       {"run", "--cc", "bamboo", "--log", "file", "--log-dir", testing::TempDir(), "--history",
        testing::TempDir() + "/bamboo_history.jsonl"},
       {"--history", "--log", "bamboo"}},
      {"recover_missing_dir", {"recover", missing}, {missing, "No", "such", "file"}},
      {"recover_not_a_log_dir", {"recover", testing::TempDir()}, {"not", "log", "directory", "manifest.json"}},
      {"recover_dump_onto_file",
       {"recover", testing::TempDir(), "--dump", "/proc/self/exe"},
       {"--dump", "/proc/self/exe", "not", "directory"}},
      // A window sized by rule takes no samples, and its cap holds a window.
      {"steady_with_samples",
       {"run", "--steady-commits", "10", "--sample-interval", "0.1"},
       {"--sample-interval", "--steady-commits"}},
      {"steady_cap_too_short",
       {"run", "--steady-commits", "10", "--duration", "0.5", "--max-duration", "0.1"},
       {"--max-duration", "0.1", "--warmup", "--duration", "0.5"}},
      {"steady_tolerance_zero", {"run", "--steady-tolerance", "0"}, {"--steady-tolerance", "0"}},
      // Sizes no machine here can hold: refused before anything is allocated.
      {"rows_beyond_memory", {"run", "--rows", "17179869184"}, {"GiB", "available", "--memory-check"}},
      {"fields_beyond_memory",
       {"run", "--fields", "64", "--field-size", "4096", "--rows", "16777216"},
       {"GiB", "available", "--memory-check"}},
      {"warehouses_beyond_memory", {"run", "--workload", "tpcc", "--warehouses", "1024"}, {"GiB", "available"}},
      // Misspellings are named, with the closest match.
      {"flag_misspelt", {"run", "--thread", "2"}, {"--thread", "--threads"}},
      {"subcommand_unknown", {"bogus"}, {"bogus", "run", "check", "describe"}},
      {"subcommand_misspelt", {"chek"}, {"chek", "check"}},
  };
}

// NaN and the infinities on every real-valued knob of the table, so a knob
// added later is covered too.
std::vector<BadCase> non_finite_cases() {
  std::vector<BadCase> cases;
  for (const Knob& k : run_knobs()) {
    if (k.kind != KnobKind::Real) continue;
    const std::vector<std::string> workload = k.workload.empty()
                                                  ? std::vector<std::string>{}
                                                  : std::vector<std::string>{"--workload", std::string(k.workload)};
    for (const std::string value : {"nan", "inf", "-inf", "NaN"}) {
      std::string name = std::string(k.name) + "_" + (value[0] == '-' ? "minus_" + value.substr(1) : value);
      for (char& c : name) c = c == '-' ? '_' : c;
      std::vector<std::string> args = {"run"};
      args.insert(args.end(), workload.begin(), workload.end());
      args.insert(args.end(), {k.flag(), value});
      cases.push_back({name, args, {k.flag(), value}});
    }
  }
  return cases;
}

class CliBadInvocation : public testing::TestWithParam<BadCase> {};

TEST_P(CliBadInvocation, ExitsTwoWithOneLineNamingFlagValueAndAllowed) {
  const BadCase& c = GetParam();
  const Outcome o = run_abyss(c.args);
  SCOPED_TRACE(o.command);

  EXPECT_EQ(o.exit_code, 2) << "stderr: " << o.err;
  EXPECT_EQ(o.out, "") << "nothing may run, so nothing may be reported";

  // Exactly one non-empty line, newline-terminated.
  ASSERT_FALSE(o.err.empty());
  EXPECT_EQ(o.err.back(), '\n') << o.err;
  const std::string line = o.err.substr(0, o.err.find('\n'));
  EXPECT_FALSE(line.empty());
  EXPECT_EQ(o.err.size(), line.size() + 1) << "more than one line on stderr:\n" << o.err;

  // Only printable text: a control byte means a value was printed as a raw
  // character (an enum shown as a char, say), and a NUL truncates the line.
  for (std::size_t i = 0; i < line.size(); i++) {
    const auto b = static_cast<unsigned char>(line[i]);
    EXPECT_TRUE(b >= 0x20 && b != 0x7f) << "control byte 0x" << std::hex << int{b} << " at " << std::dec << i
                                        << " in: " << line;
  }
  for (const auto& word : c.must_name) {
    EXPECT_TRUE(names_token(line, word)) << "does not name '" << word << "': " << line;
  }
}

INSTANTIATE_TEST_SUITE_P(Cli, CliBadInvocation, testing::ValuesIn(bad_cases()),
                         [](const testing::TestParamInfo<BadCase>& info) { return info.param.name; });
INSTANTIATE_TEST_SUITE_P(NonFinite, CliBadInvocation, testing::ValuesIn(non_finite_cases()),
                         [](const testing::TestParamInfo<BadCase>& info) { return info.param.name; });

TEST(CliTokens, MatchWholeWordsOnly) {
  // The helper that the cases above rely on.
  EXPECT_TRUE(names_token("abyss: --threads: Value 0 not in range 1 to 1024", "0"));
  EXPECT_FALSE(names_token("abyss: --threads: Value 5 not in range 1 to 1024", "0"));
  EXPECT_FALSE(names_token("abyss: --theta-x: bad", "--theta"));
  EXPECT_TRUE(names_token("abyss: --theta: Value 1.0 not", "1.0"));
  EXPECT_FALSE(names_token("abyss: --theta: Value 1.05 not", "1.0"));
  EXPECT_TRUE(names_token("abyss: x is -0.1.", "-0.1"));
  EXPECT_TRUE(names_token("in {dl_detect->3,none->0}", "dl_detect"));
  EXPECT_TRUE(names_token("must be at most --partitions (2)", "2"));
}

// ---- runs that succeed ---------------------------------------------------------

TEST(CliRun, ShortRunExitsZeroAndReportsThroughput) {
  const Outcome o =
      run_abyss({"run", "--cc", "no_wait", "--threads", "1", "--rows", "1000", "--duration", "0.05", "--warmup", "0"});
  SCOPED_TRACE(o.command);
  EXPECT_EQ(o.exit_code, 0) << "stderr: " << o.err;
  EXPECT_NE(o.out.find("throughput"), std::string::npos) << o.out;
  EXPECT_EQ(without_machine_note(o.err), "");
}

// The scan bench's table: each design's check, then each of the Terrier
// study's benchmarks at 1 and 2 threads in every design, with its speedups;
// its JSON has a check per design, the table, and a result per measurement,
// every one with items done.
TEST(CliBenchScan, TableAndJsonCoverEveryBenchmarkAndDesign) {
  const std::vector<std::string> args = {"bench", "scan", "--tuples", "20000", "--threads", "1,2", "--reps", "1"};
  const Outcome table = run_abyss(args);
  SCOPED_TRACE(table.command);
  EXPECT_EQ(table.exit_code, 0) << "stderr: " << table.err;
  for (const std::string row : {"coarse        passed", "ordered-map   passed", "ConcurrentScan1        coarse",
                                "ConcurrentScan2        lock-free", "ConcurrentInsert2      fine-grained",
                                "ConcurrentIterator2    snapshot", "ConcurrentIterator2    ordered-map"}) {
    EXPECT_NE(table.out.find(row), std::string::npos) << row << " in:\n" << table.out;
  }
  std::vector<std::string> json_args = args;
  json_args.push_back("--json");
  const Outcome o = run_abyss(json_args);
  ASSERT_EQ(o.exit_code, 0) << "stderr: " << o.err;
  const auto j = nlohmann::json::parse(o.out);
  ASSERT_EQ(j["results"].size(), 30u);  // 3 benchmarks x 5 designs x 2 thread counts
  for (const auto& r : j["results"]) EXPECT_GT(r["items"].get<uint64_t>(), 0u) << r.dump();
  ASSERT_EQ(j["checks"].size(), 5u);
  for (const auto& c : j["checks"]) EXPECT_GT(c["scans"].get<uint64_t>(), 0u) << c.dump();
  EXPECT_NE(j["table"].get<std::string>().find("vs coarse"), std::string::npos);
}

// The index bench's table: a row per operation and structure, a column per
// thread count, a dash where the hash index has no scans; its JSON has a
// result per measurement, every one with operations done.
TEST(CliBenchIndex, TableAndJsonCoverEveryStructure) {
  const std::vector<std::string> args = {"bench", "index", "--keys", "2000", "--seconds", "0.02", "--threads", "1,2"};
  const Outcome table = run_abyss(args);
  SCOPED_TRACE(table.command);
  EXPECT_EQ(table.exit_code, 0) << "stderr: " << table.err;
  for (const std::string row : {"lookup       hash", "scan-10      ordered", "scan-1000    map", "insert       ordered",
                                "lookup       btree"}) {
    EXPECT_NE(table.out.find(row), std::string::npos) << row << " in:\n" << table.out;
  }
  EXPECT_NE(table.out.find("scan-10      hash                   -             -"), std::string::npos) << table.out;
  EXPECT_NE(table.err.find("index bench: ordered scan-1000 on 2 threads"), std::string::npos) << table.err;

  std::vector<std::string> json_args = args;
  json_args.push_back("--json");
  const Outcome o = run_abyss(json_args);
  ASSERT_EQ(o.exit_code, 0) << "stderr: " << o.err;
  const auto j = nlohmann::json::parse(o.out);
  ASSERT_EQ(j["results"].size(), 28u);  // hash: lookup, insert; ordered, btree, map: 4 ops; at 1 and 2 threads
  for (const auto& r : j["results"]) {
    EXPECT_GT(r["ops"].get<uint64_t>(), 0u) << r;
    if (r["op"] == "scan-10") {
      EXPECT_GE(r["keys_visited"].get<uint64_t>(), r["ops"].get<uint64_t>()) << r;
    }
  }
}

// The chained transactions are measured when the lines divide into whole
// accesses (a bucket line and at least one row line each), and said not to
// be otherwise. A region of 4 MiB keeps it short: the figures measure the
// caches then, which is all this test needs of them.
TEST(CliBenchMemory, ChainedTransactionsWhenTheLinesMakeWholeAccesses) {
  const Outcome o = run_abyss(
      {"bench", "memory", "--size-mib", "4", "--pages", "small", "--lines-per-txn", "48", "--work-ns", "20", "--json"});
  SCOPED_TRACE(o.command);
  ASSERT_EQ(o.exit_code, 0) << "stderr: " << o.err;
  const auto j = nlohmann::json::parse(o.out);
  EXPECT_EQ(j["accesses_per_txn"], 16);
  EXPECT_EQ(j["work_ns"], 20.0);
  ASSERT_EQ(j["pages"].size(), 1u);
  const auto& p = j["pages"][0];
  EXPECT_EQ(p["pages"], "small");
  EXPECT_GT(p["dependent_ns"].get<double>(), 0) << p;
  EXPECT_GT(p["chained_txn_per_s"].get<double>(), 0) << p;
  EXPECT_DOUBLE_EQ(p["chained_txn_per_s"].get<double>() * p["chained_ns_per_txn"].get<double>(), 1e9) << p;
  EXPECT_GT(p["chained_pipeline_txn_per_s"].get<double>(), 0) << p;
  EXPECT_DOUBLE_EQ(p["chained_pipeline_txn_per_s"].get<double>() * p["chained_pipeline_ns_per_txn"].get<double>(), 1e9)
      << p;
  // No bound on the times themselves: the work after each access is counted
  // in cycles of the clock measured first, and a loaded machine measures it
  // wrong (a pipeline under ctest -j2 and a build took 252 ns, under the
  // 16 x 20 ns it would take at the measured clock).

  const Outcome ragged = run_abyss({"bench", "memory", "--size-mib", "4", "--pages", "small", "--lines-per-txn", "40"});
  SCOPED_TRACE(ragged.command);
  ASSERT_EQ(ragged.exit_code, 0) << "stderr: " << ragged.err;
  EXPECT_NE(ragged.out.find("chained: not measured (40 lines are not 16 accesses"), std::string::npos) << ragged.out;
  EXPECT_NE(ragged.out.find("small "), std::string::npos) << ragged.out;
  EXPECT_EQ(ragged.out.back(), '\n');
  EXPECT_NE(ragged.out.find("-               -\n"), std::string::npos) << ragged.out;
}

// Plots print scheme names in capitals, and researchers write 1e3: both are
// accepted for what they mean.
TEST(CliRun, SchemeNamesInAnyCaseAndIntegersInScientificNotation) {
  const std::string json = temp_path("case.json");
  const Outcome o = run_abyss({"run", "--cc", "NO_WAIT", "--rows", "1e3", "--threads", "2", "--duration", "0.05",
                               "--warmup", "0", "--json", json});
  SCOPED_TRACE(o.command);
  EXPECT_EQ(o.exit_code, 0) << "stderr: " << o.err;
  const auto j = nlohmann::json::parse(slurp(json));
  EXPECT_EQ(j["config"]["cc"], "no_wait");
  EXPECT_EQ(j["config"]["ycsb"]["rows"], 1000);
  fs::remove(json);
}

TEST(CliDescribe, JsonListsEverySchemeWorkloadAndKnob) {
  const Outcome o = run_abyss({"describe", "--json"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const auto j = nlohmann::json::parse(o.out);
  ASSERT_EQ(j["schemes"].size(), cc::schemes().size());
  for (std::size_t i = 0; i < cc::schemes().size(); i++) {
    EXPECT_EQ(j["schemes"][i]["name"], cc::schemes()[i].name);
    EXPECT_EQ(j["schemes"][i]["allocates_timestamps"], cc::schemes()[i].allocates_timestamps);
    const auto& levels = j["schemes"][i]["isolation"];
    ASSERT_FALSE(levels.empty());
    EXPECT_EQ(levels[0], "serializable");
    EXPECT_EQ(levels.size(), cc::schemes()[i].weaker_isolation ? 3u : 1u) << levels.dump();
  }
  ASSERT_EQ(j["knobs"].size(), run_knobs().size());
  for (const auto& k : j["knobs"]) {
    EXPECT_TRUE(k.contains("default")) << k.dump();
    if (k["kind"] == "integer" || k["kind"] == "real") {
      EXPECT_LE(k["min"], k["max"]) << k.dump();
    }
  }
  ASSERT_EQ(j["workloads"].size(), workloads().size());
  for (std::size_t i = 0; i < workloads().size(); i++) {
    EXPECT_EQ(j["workloads"][i]["name"], workloads()[i].traits.name);
    EXPECT_EQ(j["workloads"][i]["allocates_timestamps"], workloads()[i].traits.allocates_timestamps);
  }
}

// A weaker --isolation is refused, in one line with the reason and before
// any work, by a scheme that does not offer it; serializable is every
// scheme's.
TEST(CliRun, AWeakerIsolationIsRefusedByASchemeThatDoesNotOfferIt) {
  for (const std::string scheme : {"no_wait", "silo", "none"}) {
    const Outcome o = run_abyss({"run", "--cc", scheme, "--isolation", "snapshot", "--duration", "0.01"});
    EXPECT_EQ(o.exit_code, 2) << o.err;
    EXPECT_NE(o.err.find("--isolation snapshot: --cc " + scheme), std::string::npos) << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
    EXPECT_EQ(o.out, "");
  }
  const Outcome ok = run_abyss(
      {"run", "--cc", "silo", "--isolation", "serializable", "--duration", "0.01", "--warmup", "0", "--rows", "1000"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  const Outcome bad = run_abyss({"run", "--cc", "mvcc", "--isolation", "repeatable-read"});
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  // Commit timestamps must grow with time across workers: a batch or a
  // clock per worker does not.
  for (const std::string ts : {"batch:16", "clock"}) {
    const Outcome o = run_abyss({"run", "--cc", "mvcc", "--isolation", "snapshot", "--ts-alloc", ts});
    EXPECT_EQ(o.exit_code, 2) << o.err;
    EXPECT_NE(o.err.find("--isolation snapshot with --ts-alloc " + ts), std::string::npos) << o.err;
    // So does a scheme that orders its commits by timestamp at any level.
    for (const cc::SchemeTraits& s : cc::schemes()) {
      if (!s.commit_timestamps) continue;
      const std::string name(s.name);
      const Outcome h = run_abyss({"run", "--cc", name, "--ts-alloc", ts});
      EXPECT_EQ(h.exit_code, 2) << h.err;
      EXPECT_NE(h.err.find("--cc " + name + " with --ts-alloc " + ts), std::string::npos) << h.err;
      EXPECT_EQ(std::count(h.err.begin(), h.err.end(), '\n'), 1) << h.err;
    }
  }
}

// A scheme that locks partitions, given fewer partitions than workers, gets a
// note whatever the workload: its partition count comes from the workload.
TEST(CliRun, FewerPartitionsThanWorkersIsNotedForEveryWorkload) {
  for (const std::string workload : {"ycsb", "tsalloc"}) {
    std::vector<std::string> args = {"run", "--cc",       "hstore", "--workload", workload, "--threads",
                                     "2",   "--duration", "0.05",   "--warmup",   "0"};
    if (workload == "ycsb") args.insert(args.end(), {"--rows", "1000"});
    const Outcome o = run_abyss(args);
    SCOPED_TRACE(o.command);
    EXPECT_EQ(o.exit_code, 0) << o.err;
    EXPECT_NE(o.err.find("abyss: note: --cc hstore with 1 partition(s) for 2 threads"), std::string::npos) << o.err;
  }
  const Outcome one_each = run_abyss({"run", "--cc", "hstore", "--threads", "2", "--partitions", "2", "--rows", "1000",
                                      "--duration", "0.05", "--warmup", "0"});
  EXPECT_EQ(one_each.exit_code, 0) << one_each.err;
  EXPECT_EQ(one_each.err.find("partition(s) for"), std::string::npos) << one_each.err;
}

// The timestamp micro-benchmark is a workload: under `none` the --ts-alloc
// method is what it measures, so the flag is not noted as ignored, and the
// report carries its metric.
TEST(CliRun, TsallocMeasuresTheTimestampSourceUnderAnyScheme) {
  const std::string json = temp_path("tsalloc.json");
  const Outcome o = run_abyss({"run", "--workload", "tsalloc", "--cc", "none", "--ts-alloc", "batch:8", "--threads",
                               "1", "--duration", "0.05", "--warmup", "0", "--json", json});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.err.find("--ts-alloc has no effect"), std::string::npos) << o.err;
  const auto j = nlohmann::json::parse(slurp(json));
  EXPECT_EQ(j["config"]["ts_alloc"], "batch:8");
  EXPECT_GT(j["results"]["timestamps_per_second"].get<double>(), 0.0);
  EXPECT_GT(j["results"]["breakdown"]["ts_alloc"]["seconds"].get<double>(), 0.0);
  fs::remove(json);
}

TEST(CliRun, FlagsWithoutEffectOnThisSchemeAreNotedOnStderr) {
  const Outcome o =
      run_abyss({"run", "--cc", "no_wait", "--dl-timeout", "50", "--ts-alloc", "batch:8", "--silo-epoch-ms", "5",
                 "--threads", "1", "--rows", "1000", "--duration", "0.05", "--warmup", "0"});
  SCOPED_TRACE(o.command);
  EXPECT_EQ(o.exit_code, 0) << "stderr: " << o.err;
  EXPECT_NE(o.out.find("throughput"), std::string::npos) << o.out;
  EXPECT_NE(o.err.find("abyss: note: --dl-timeout has no effect: it applies to --cc dl_detect only\n"),
            std::string::npos)
      << o.err;
  EXPECT_NE(
      o.err.find(
          "abyss: note: --ts-alloc has no effect: --cc no_wait allocates no timestamps (nor does --workload ycsb)\n"),
      std::string::npos)
      << o.err;
  EXPECT_NE(o.err.find("abyss: note: --silo-epoch-ms has no effect: it applies to --cc silo only\n"), std::string::npos)
      << o.err;

  // The same flags where they take effect: no note.
  const Outcome used = run_abyss({"run", "--cc", "dl_detect", "--dl-timeout", "50", "--threads", "1", "--rows", "1000",
                                  "--duration", "0.05", "--warmup", "0"});
  EXPECT_EQ(used.exit_code, 0) << "stderr: " << used.err;
  EXPECT_EQ(without_machine_note(used.err), "");
  const Outcome stamped = run_abyss({"run", "--cc", "wait_die", "--ts-alloc", "batch:8", "--threads", "1", "--rows",
                                     "1000", "--duration", "0.05", "--warmup", "0"});
  EXPECT_EQ(stamped.exit_code, 0) << "stderr: " << stamped.err;
  EXPECT_EQ(without_machine_note(stamped.err), "");

  // The search interval of a scheme that does not search.
  const Outcome off = run_abyss({"run", "--cc", "dl_detect", "--dl-detect", "off", "--dl-detect-every-ns", "8",
                                 "--threads", "1", "--rows", "1000", "--duration", "0.05", "--warmup", "0"});
  EXPECT_EQ(off.exit_code, 0) << "stderr: " << off.err;
  EXPECT_NE(off.err.find("abyss: note: --dl-detect-every-ns has no effect: --dl-detect off searches no cycles\n"),
            std::string::npos)
      << off.err;
}

TEST(CliRun, JsonReportCarriesConfigAndEveryMetric) {
  // The layout docs/metrics.md describes; tools join runs on config_hash.
  const std::string json_path = temp_path("report.json");
  const Outcome o = run_abyss({"run", "--cc", "no_wait", "--threads", "2", "--rows", "1000", "--duration", "0.05",
                               "--warmup", "0", "--json", json_path});
  SCOPED_TRACE(o.command);
  ASSERT_EQ(o.exit_code, 0) << "stderr: " << o.err;
  const std::string text = slurp(json_path);
  fs::remove(json_path);
  const auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(j.is_discarded()) << text;

  for (const char* key : {"config", "config_hash", "git_rev", "build_type", "cpu_model", "cores", "results"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["config"]["threads"], 2);
  EXPECT_EQ(j["config"]["cc"], "no_wait");
  EXPECT_EQ(j["config_hash"].get<std::string>().size(), 16u);
  // Provenance: what ran, where, when, built how.
  EXPECT_EQ(j["schema_version"], 2);
  for (const char* key : {"date", "hostname", "kernel", "compiler", "compile_flags", "command_line"}) {
    ASSERT_TRUE(j[key].is_string()) << key;
    EXPECT_FALSE(j[key].get<std::string>().empty()) << key;
  }
  EXPECT_EQ(j["date"].get<std::string>().size(), 20u) << j["date"];  // 2026-11-24T10:00:00Z
  EXPECT_NE(j["command_line"].get<std::string>().find(" run --cc no_wait --threads 2 "), std::string::npos);
  EXPECT_TRUE(j["cpu_mhz"].is_number() && j["load_average"].is_number());

  const auto& r = j["results"];
  for (const char* key : {"seconds", "throughput", "commits", "cc_aborts", "logical_aborts", "abort_rate", "latency_us",
                          "per_type", "breakdown", "breakdown_per_worker"}) {
    EXPECT_TRUE(r.contains(key)) << key;
  }
  for (const char* q : {"mean", "p50", "p90", "p95", "p99", "p999", "max"}) {
    EXPECT_TRUE(r["latency_us"][q].is_number()) << q;
  }
  // Each type's histogram is there, and its buckets add up to its commits.
  for (const auto& [type, t] : r["per_type"].items()) {
    const auto& h = t["latency_histogram"];
    EXPECT_EQ(h["unit"], "ns");
    uint64_t counted = 0;
    uint64_t last_edge = 0;
    for (const auto& b : h["buckets"]) {
      EXPECT_GT(b[0].get<uint64_t>() + 1, last_edge) << type;  // ascending
      last_edge = b[0].get<uint64_t>() + 1;
      counted += b[1].get<uint64_t>();
    }
    EXPECT_EQ(counted, t["commits"].get<uint64_t>()) << type;
    EXPECT_EQ(h["count"], t["commits"]) << type;
  }
  EXPECT_GT(r["commits"].get<uint64_t>(), 0u);
  ASSERT_EQ(r["breakdown_per_worker"].size(), 2u);

  // Every category is there, and with `other` as the remainder the fractions
  // cover the measured window.
  double fractions = 0;
  for (auto name : kTimeCatNames) {
    ASSERT_TRUE(r["breakdown"].contains(std::string(name))) << name;
    fractions += r["breakdown"][std::string(name)]["fraction"].get<double>();
  }
  EXPECT_NEAR(fractions, 1.0, 0.01);
}

std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string cell; std::getline(in, cell, sep);) out.push_back(cell);
  return out;
}

// Per-interval samples (--sample-interval): one per interval in the JSON,
// typed, adding up to the run's totals, and the same rows in a CSV beside it
// whose count columns are integers.
TEST(CliRun, SamplesCoverTheWindowInJsonAndCsv) {
  const std::string json_path = temp_path("sampled.json");
  const std::string csv_path = json_path.substr(0, json_path.size() - 5) + ".samples.csv";
  const Outcome o = run_abyss({"run", "--cc", "silo", "--threads", "2", "--rows", "1000", "--theta", "0.9",
                               "--duration", "0.4", "--warmup", "0", "--sample-interval", "0.1", "--json", json_path});
  ASSERT_EQ(o.exit_code, 0) << o.command << "\n" << o.err;
  const auto j = nlohmann::json::parse(slurp(json_path));
  const std::string csv = slurp(csv_path);
  fs::remove(json_path);
  fs::remove(csv_path);
  const auto& r = j["results"];
  EXPECT_EQ(j["config"]["sample_interval_s"], 0.1);
  ASSERT_EQ(r["samples"].size(), 4u);
  uint64_t commits = 0;
  uint64_t aborts = 0;
  double last_end = 0;
  for (const auto& s : r["samples"]) {
    for (const char* key : {"commits", "cc_aborts", "logical_aborts", "rss_bytes"}) {
      EXPECT_TRUE(s[key].is_number_unsigned()) << key << " " << s[key];
    }
    for (const char* key : {"start_s", "end_s", "throughput", "abort_rate"}) EXPECT_TRUE(s[key].is_number()) << key;
    EXPECT_TRUE(s["latency_us"]["p50"].is_number() && s["latency_us"]["p99"].is_number());
    EXPECT_DOUBLE_EQ(s["start_s"].get<double>(), last_end);
    last_end = s["end_s"].get<double>();
    uint64_t per_type = 0;
    for (const auto& [name, t] : s["per_type"].items()) per_type += t["commits"].get<uint64_t>();
    EXPECT_EQ(per_type, s["commits"].get<uint64_t>());
    double shares = 0;
    for (auto name : kTimeCatNames) shares += s["breakdown"][std::string(name)].get<double>();
    EXPECT_NEAR(shares, 1.0, 0.01);
    commits += s["commits"].get<uint64_t>();
    aborts += s["cc_aborts"].get<uint64_t>();
  }
  EXPECT_EQ(commits, r["commits"].get<uint64_t>());
  EXPECT_EQ(aborts, r["cc_aborts"].get<uint64_t>());
  EXPECT_NEAR(last_end, r["seconds"].get<double>(), 1e-9);

  std::istringstream lines(csv);
  std::string header;
  std::getline(lines, header);
  const std::vector<std::string> columns = split(header, ',');
  std::vector<std::string> row;
  int rows = 0;
  for (std::string line; std::getline(lines, line); rows++) {
    row = split(line, ',');
    ASSERT_EQ(row.size(), columns.size()) << line;
    for (std::size_t c = 0; c < columns.size(); c++) {
      const bool count = columns[c] == "interval" || columns[c] == "rss_bytes" || columns[c].ends_with("commits") ||
                         columns[c].ends_with("aborts");
      if (count) {
        EXPECT_EQ(row[c].find_first_not_of("0123456789"), std::string::npos) << columns[c] << "=" << row[c];
      }
    }
  }
  EXPECT_EQ(rows, 4);
}

// A short run takes no samples unless asked, and writes no CSV.
// The breakdown says how many attempts it timed, and when a worker timed
// too few of its own for its split of the sampled categories to hold.
TEST(CliRun, TheBreakdownCountsItsTimedAttemptsAndSaysWhenTooFew) {
  auto run = [](const std::string& every) {
    const std::string json = temp_path("samples.json");
    const Outcome o = run_abyss({"run", "--threads", "1", "--rows", "1000", "--duration", "0.05", "--warmup", "0",
                                 "--time-sample", every, "--json", json});
    EXPECT_EQ(o.exit_code, 0) << o.err;
    const nlohmann::json r = nlohmann::json::parse(slurp(json))["results"];
    std::filesystem::remove(json);
    return std::make_pair(o.out, r);
  };
  const auto [every_out, every] = run("1");
  const nlohmann::json& s = every["breakdown_samples"];
  EXPECT_GE(s["timed_attempts"].get<uint64_t>(), every["commits"].get<uint64_t>());
  EXPECT_EQ(s["least_per_worker"], s["timed_attempts"]);
  EXPECT_EQ(s["workers_with_few"], 0);
  EXPECT_EQ(every_out.find("fewer than"), std::string::npos) << every_out;
  const auto [rare_out, rare] = run("1000000");
  EXPECT_EQ(rare["breakdown_samples"]["workers_with_few"], 1);
  EXPECT_NE(rare_out.find("1 of 1 workers timed fewer than 8 attempts"), std::string::npos) << rare_out;
}

TEST(CliRun, ShortRunsAreNotSampledByDefault) {
  const std::string json_path = temp_path("unsampled.json");
  const Outcome o = run_abyss({"run", "--rows", "1000", "--duration", "0.05", "--warmup", "0", "--json", json_path});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const auto j = nlohmann::json::parse(slurp(json_path));
  fs::remove(json_path);
  EXPECT_EQ(j["config"]["sample_interval_s"], "auto");
  EXPECT_TRUE(j["results"]["samples"].empty());
  EXPECT_FALSE(fs::exists(json_path.substr(0, json_path.size() - 5) + ".samples.csv"));
}

// ---- check history -------------------------------------------------------------

Outcome check_history_text(const std::string& text) {
  const std::string path = temp_path("history.jsonl");
  std::ofstream(path) << text;
  Outcome o = run_abyss({"check", "history", path});
  fs::remove(path);
  return o;
}

TEST(CliCheckHistory, SerializableHistoryExitsZero) {
  //    T1     | T2
  //    --------------
  //    W(x)   |
  //    COMMIT |
  //           | R(x)     <- reads T1's x
  //           | W(x)
  //           | COMMIT
  const Outcome o = check_history_text(R"({"id": 1, "reads": [], "writes": [["t", 1, 0]]})"
                                       "\n"
                                       R"({"id": 2, "reads": [["t", 1, 1]], "writes": [["t", 1, 1]]})"
                                       "\n");
  SCOPED_TRACE(o.command);
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_EQ(without_machine_note(o.err), "");
}

TEST(CliCheckHistory, LostUpdateExitsOne) {
  //    T1     | T2
  //    --------------
  //    R(x@0) |
  //           | R(x@0)
  //    W(x)   |
  //    COMMIT |
  //           | W(x)     <- replaces the loaded x too: T1's update is lost
  //           | COMMIT
  const Outcome o = check_history_text(R"({"id": 1, "reads": [["t", 1, 0]], "writes": [["t", 1, 0]]})"
                                       "\n"
                                       R"({"id": 2, "reads": [["t", 1, 0]], "writes": [["t", 1, 0]]})"
                                       "\n");
  SCOPED_TRACE(o.command);
  EXPECT_EQ(o.exit_code, 1) << o.out << o.err;
  EXPECT_NE(o.out.find("lost update"), std::string::npos) << o.out;
}

TEST(CliTpcc, RunReportsTpmcAndCheckPassesItsDump) {
  const std::string json_path = temp_path("tpcc.json");
  const std::string dump = temp_path("tpcc_dump");
  const Outcome o =
      run_abyss({"run", "--workload", "tpcc", "--warehouses", "1", "--tpcc-schema", "small", "--cc", "no_wait",
                 "--threads", "2", "--duration", "0.05", "--warmup", "0", "--json", json_path, "--dump", dump});
  SCOPED_TRACE(o.command);
  ASSERT_EQ(o.exit_code, 0) << "stderr: " << o.err;
  EXPECT_NE(o.out.find("tpmC"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("new_order"), std::string::npos) << o.out;
  const auto j = nlohmann::json::parse(slurp(json_path), nullptr, /*allow_exceptions=*/false);
  fs::remove(json_path);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_TRUE(j["results"].contains("tpmC"));
  EXPECT_TRUE(j["results"]["per_type"].contains("payment"));
  EXPECT_EQ(j["config"]["tpcc"]["warehouses"], 1);

  const Outcome c = run_abyss({"check", "tpcc", dump});
  SCOPED_TRACE(c.command);
  EXPECT_EQ(c.exit_code, 0) << c.out << c.err;
  EXPECT_NE(c.out.find("3.3.2.1 "), std::string::npos) << c.out;
  fs::remove_all(dump);
}

}  // namespace
}  // namespace abyss
