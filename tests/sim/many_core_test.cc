// The engine on simulated cores, run as a user runs it (docs/many-core.md):
// a seed gives the same report byte for byte, in two processes, for every
// scheme at 64 and 1024 cores; every scheme's history at 256 cores passes
// the serializability checker, and `none`'s does not.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cc/schemes.h"
#include "check/tpcc.h"
#include "support/run_abyss.h"

namespace abyss {
namespace {

using test::run_abyss;
using test::slurp;
using test::temp_path;

// The report less what the host measured (load time, memory, the host's
// time for the run) and provenance (the date, the command line with its
// output path, the host's clock).
std::string simulated_part(const std::string& json_text) {
  nlohmann::json j = nlohmann::json::parse(json_text);
  for (const char* k : {"git_rev", "build_type", "cpu_model", "cpu_mhz", "load_average", "host_seconds", "date",
                        "command_line", "hostname", "kernel", "compiler", "compile_flags"}) {
    j.erase(k);
  }
  for (const char* k : {"load_seconds", "rss_after_load_bytes", "rss_at_end_bytes", "rss_samples"}) {
    j["results"].erase(k);
  }
  for (auto& s : j["results"]["samples"]) s.erase("rss_bytes");
  return j.dump();
}

// YCSB with a hot spot (theta 0.9, 4 requests): small enough for CI at
// 1024 cores, contended enough that schemes wait, abort and back off.
std::vector<std::string> ycsb_run(const std::string& cc, uint32_t cores) {
  return {"run",
          "--sim-cores",
          std::to_string(cores),
          "--cc",
          cc,
          "--workload",
          "ycsb",
          "--rows",
          "65536",
          "--theta",
          "0.9",
          "--req-per-txn",
          "4",
          "--duration",
          "0.0002",
          "--warmup",
          "0.00005",
          "--queries-per-worker",
          "64"};
}

// Every registered scheme's name: one test per scheme, so ctest -j runs them side by side.
std::vector<std::string> scheme_names() {
  std::vector<std::string> names;
  for (const cc::SchemeTraits& s : cc::schemes()) names.emplace_back(s.name);
  return names;
}

class SimDeterminism : public ::testing::TestWithParam<std::tuple<uint32_t, std::string>> {};

TEST_P(SimDeterminism, SameSeedSameReportInTwoProcesses) {
  const auto& [cores, scheme] = GetParam();
  std::string reports[2];
  for (std::string& report : reports) {
    const std::string json = temp_path("report.json");
    std::vector<std::string> args = ycsb_run(scheme, cores);
    args.insert(args.end(), {"--json", json});
    const auto o = run_abyss(args);
    ASSERT_EQ(o.exit_code, 0) << o.command << "\n" << o.err;
    report = simulated_part(slurp(json));
    std::filesystem::remove(json);
  }
  // The run simulated something (H-STORE's one partition may commit
  // nothing in so short a window at 1024 cores).
  EXPECT_GT(nlohmann::json::parse(reports[0])["sim_counters"]["accesses"].get<uint64_t>(), 0u);
  // Compared as strings, but printed only as a verdict: a report is long.
  EXPECT_TRUE(reports[0] == reports[1]) << "the two runs' reports differ";
}

INSTANTIATE_TEST_SUITE_P(Cores, SimDeterminism,
                         ::testing::Combine(::testing::Values(64u, 1024u), ::testing::ValuesIn(scheme_names())),
                         [](const ::testing::TestParamInfo<SimDeterminism::ParamType>& i) {
                           return std::to_string(std::get<0>(i.param)) + "_" + std::get<1>(i.param);
                         });

// Abyss §4.3's hardware counter exists on the simulated mesh chip, and only
// there: every timestamp it hands out is distinct, and the numa machine
// refuses it before the run.
TEST(SimHardwareCounter, MeshHasItNumaRefusesIt) {
  const std::string json = temp_path("ts.json");
  const auto ran = run_abyss({"run", "--sim-cores", "64", "--workload", "tsalloc", "--cc", "none", "--ts-alloc", "hw",
                              "--duration", "0.0002", "--warmup", "0.00005", "--json", json});
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
  const nlohmann::json report = nlohmann::json::parse(slurp(json));
  std::filesystem::remove(json);
  EXPECT_GT(report["results"]["timestamps_per_second"].get<double>(), 0);
  const auto refused = run_abyss({"run", "--sim-cores", "64", "--topology", "numa", "--workload", "tsalloc", "--cc",
                                  "none", "--ts-alloc", "hw", "--duration", "0.0002"});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("--ts-alloc hw"), std::string::npos) << refused.err;
}

// The probe measures the host: the simulated build has none to measure and
// says which binary does.
TEST(SimProbe, RefusedWithTheNativeBinaryNamed) {
  const auto refused = run_abyss({"probe"});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("native build"), std::string::npos) << refused.err;
}

// A run does not follow the host heap's layout: with --json paths 8, 16
// and 24 characters longer (strings the configuration allocates before the
// objects the workers share), the mutex timestamp source at 4 cores commits
// the same transactions. Its lock queue's nodes are per core, and when they
// fell on lines as the heap left them, the counts were 39 K to 60 K.
TEST(SimLayout, AMutexRunDoesNotFollowTheLengthOfItsOutputPath) {
  std::vector<uint64_t> commits;
  for (const std::string pad : {"", "12345678", "1234567812345678", "123456781234567812345678"}) {
    const std::string json = temp_path("layout" + pad + ".json");
    const auto ran =
        run_abyss({"run", "--sim-cores", "4", "--workload", "tsalloc", "--cc", "none", "--ts-alloc", "mutex",
                   "--ts-per-txn", "1", "--duration", "0.0005", "--warmup", "0.0001", "--json", json});
    ASSERT_EQ(ran.exit_code, 0) << ran.err;
    commits.push_back(nlohmann::json::parse(slurp(json))["results"]["commits"].get<uint64_t>());
    std::filesystem::remove(json);
  }
  EXPECT_GT(commits[0], 0u);
  for (const uint64_t c : commits) EXPECT_EQ(c, commits[0]);
}

// --ts-per-txn sets the timestamps per transaction, and timestamps/s counts
// them: with one per transaction the two rates are equal.
TEST(SimTsalloc, TimestampsPerSecondCountsTsPerTxn) {
  const std::string json = temp_path("ts1.json");
  const auto ran = run_abyss({"run", "--sim-cores", "4", "--workload", "tsalloc", "--cc", "none", "--ts-alloc",
                              "atomic", "--ts-per-txn", "1", "--duration", "0.0002", "--warmup", "0", "--json", json});
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
  const nlohmann::json r = nlohmann::json::parse(slurp(json))["results"];
  std::filesystem::remove(json);
  EXPECT_GT(r["throughput"].get<double>(), 0);
  EXPECT_DOUBLE_EQ(r["timestamps_per_second"].get<double>(), r["throughput"].get<double>());
}

// --time-sample: timing one attempt in 8 gives the breakdown that timing
// every attempt gives, within what the skipped clock reads themselves cost
// (simulated cores pay for a clock read as this machine does), also when
// most cores commit too few transactions to time one of their own.
TEST(SimTimeSample, OneAttemptInEightGivesTheBreakdownOfEvery) {
  auto breakdown = [](const std::string& every) {
    const std::string json = temp_path("breakdown.json");
    // Few commits per core: most cores time none of their own attempts.
    const auto o = run_abyss({"run",  "--sim-cores",   "64",     "--cc",     "no_wait", "--workload",
                              "ycsb", "--rows",        "65536",  "--theta",  "0.6",     "--req-per-txn",
                              "16",   "--duration",    "0.0002", "--warmup", "0.00005", "--queries-per-worker",
                              "64",   "--time-sample", every,    "--json",   json});
    EXPECT_EQ(o.exit_code, 0) << o.command << "\n" << o.err;
    const nlohmann::json b = nlohmann::json::parse(slurp(json))["results"]["breakdown"];
    std::filesystem::remove(json);
    return b;
  };
  const nlohmann::json all = breakdown("1");
  const nlohmann::json sampled = breakdown("8");
  // (Not commit: a scheme that writes in place installs nothing, so its
  // commit holds under 1% of the time here.)
  for (const char* cat : {"index", "cc_manager", "abort", "backoff"}) {
    SCOPED_TRACE(cat);
    const double a = all[cat]["fraction"].get<double>();
    const double s = sampled[cat]["fraction"].get<double>();
    EXPECT_GT(a, 0.01) << "a category this test compares must hold time";
    EXPECT_NEAR(s, a, 0.05 + 0.1 * a);
  }
  EXPECT_LT(sampled["other"]["fraction"].get<double>(), 0.02) << "every attempt's time is attributed";
}

// --steady-commits: a run opens windows until one holds the commits asked
// for with halves that agree, and says so; with a cap too short for that it
// says the window is not steady. Virtual time makes both exact.
nlohmann::json steady_run(const std::string& cap) {
  const std::string json = temp_path("steady.json");
  const auto o = run_abyss({"run",  "--sim-cores",      "16",     "--cc",           "no_wait", "--workload",
                            "ycsb", "--rows",           "65536",  "--theta",        "0.6",     "--req-per-txn",
                            "4",    "--duration",       "0.0001", "--warmup",       "0.00002", "--queries-per-worker",
                            "64",   "--steady-commits", "100",    "--max-duration", cap,       "--json",
                            json});
  EXPECT_EQ(o.exit_code, 0) << o.command << "\n" << o.err;
  const nlohmann::json r = nlohmann::json::parse(slurp(json))["results"];
  std::filesystem::remove(json);
  return r;
}

TEST(SimSteadyWindow, WindowsGrowUntilOneHoldsTheCommitsWithHalvesThatAgree) {
  const nlohmann::json r = steady_run("0.05")["window"];
  EXPECT_EQ(r["rule"], "steady");
  EXPECT_TRUE(r["steady"].get<bool>()) << r.dump();
  EXPECT_GE(r["commits_per_worker"].get<double>(), 100);
  EXPECT_GT(r["windows"].get<uint32_t>(), 1u) << "a 0.1 ms window holds 100 commits per core";
  EXPECT_NEAR(r["halves_ratio"].get<double>(), 1, 0.1);
  EXPECT_NEAR(r["previous_ratio"].get<double>(), 1, 0.1) << "its rate agrees with the window before";
  EXPECT_GT(r["warmup_seconds"].get<double>(), 0.00002) << "the windows before the last are warm-up";
}

// A rate that still drifts is not steady, however close a window's halves:
// here the third window's halves agree within 0.1% but its rate is 1.15
// times the second's, so a fourth opens, whose rate agrees with the third's.
TEST(SimSteadyWindow, AWindowMustAgreeWithTheOneBeforeIt) {
  const std::string json = temp_path("steady-trend.json");
  const auto o = run_abyss({"run",  "--sim-cores",      "16",     "--cc",           "no_wait", "--workload",
                            "ycsb", "--rows",           "65536",  "--theta",        "0.6",     "--req-per-txn",
                            "4",    "--duration",       "0.0001", "--warmup",       "0.00002", "--queries-per-worker",
                            "64",   "--steady-commits", "10",     "--max-duration", "0.05",    "--json",
                            json});
  ASSERT_EQ(o.exit_code, 0) << o.command << "\n" << o.err;
  const nlohmann::json r = nlohmann::json::parse(slurp(json))["results"]["window"];
  std::filesystem::remove(json);
  EXPECT_TRUE(r["steady"].get<bool>()) << r.dump();
  EXPECT_NEAR(r["previous_ratio"].get<double>(), 1, 0.1) << r.dump();
  EXPECT_NEAR(r["halves_ratio"].get<double>(), 1, 0.1) << r.dump();
  EXPECT_GE(r["windows"].get<uint32_t>(), 4u) << "the third window's rate was 1.15 times the second's: " << r.dump();
}

TEST(SimSteadyWindow, ACapTooShortLeavesTheWindowMarkedNotSteady) {
  const nlohmann::json r = steady_run("0.00015");
  EXPECT_FALSE(r["window"]["steady"].get<bool>()) << r["window"].dump();
  EXPECT_EQ(r["window"]["windows"].get<uint32_t>(), 1u) << "no second window fits";
  EXPECT_LT(r["window"]["commits_per_worker"].get<double>(), 100);
  EXPECT_LE(r["seconds"].get<double>() + r["window"]["warmup_seconds"].get<double>(), 0.00015 + 1e-6);
}

// --tpcc-replicate-item on: 112 cores of the Tale's machine fill two
// sockets, so ITEM has a copy on each, loaded with the same rows, and the
// run's database passes the TPC-C checker; 56 cores fill one socket, so
// there is one ITEM, and the run says so.
TEST(SimReplicateItem, EachSocketInUseHoldsTheSameItemRows) {
  for (const auto& [cores, copies] : {std::pair{"112", 2}, std::pair{"56", 1}}) {
    const std::string dump = temp_path(std::string("replicas") + cores);
    std::filesystem::remove_all(dump);
    const auto ran = run_abyss({"run",     "--sim-cores",
                                cores,     "--topology",
                                "numa",    "--threads",
                                "2",       "--workload",
                                "tpcc",    "--warehouses",
                                "2",       "--tpcc-schema",
                                "small",   "--tpcc-replicate-item",
                                "on",      "--cc",
                                "no_wait", "--duration",
                                "0.0002",  "--warmup",
                                "0",       "--dump",
                                dump});
    ASSERT_EQ(ran.exit_code, 0) << ran.err;
    EXPECT_EQ(ran.err.find("ITEM has one copy") != std::string::npos, copies == 1) << ran.err;
    const std::string item = slurp(dump + "/item.csv");
    EXPECT_GT(std::count(item.begin(), item.end(), '\n'), 10'000) << "a header and 10,000 rows";
    EXPECT_EQ(std::filesystem::exists(dump + "/item@node1.csv"), copies == 2) << cores << " cores";
    if (copies == 2) {
      EXPECT_TRUE(slurp(dump + "/item@node1.csv") == item);
    }
    const auto report = check::check_tpcc_dir(dump);
    EXPECT_TRUE(report.all_pass()) << report.summary();
    std::filesystem::remove_all(dump);
  }
}

struct HistoryCase {
  std::string name;
  std::vector<std::string> workload;
};

class SimHistory : public ::testing::TestWithParam<std::tuple<HistoryCase, std::string>> {};

TEST_P(SimHistory, EverySchemeIsSerializableAt256CoresAndNoneIsCaught) {
  const auto& [workload, scheme] = GetParam();
  const std::string log = temp_path("history.jsonl");
  std::vector<std::string> args = {"run",        "--sim-cores", "256",      "--cc",    scheme,
                                   "--duration", "0.0003",      "--warmup", "0.00005", "--queries-per-worker",
                                   "64",         "--history",   log};
  args.insert(args.end(), workload.workload.begin(), workload.workload.end());
  const auto ran = run_abyss(args);
  ASSERT_EQ(ran.exit_code, 0) << ran.command << "\n" << ran.err;
  const auto checked = run_abyss({"check", "history", log});
  std::filesystem::remove(log);
  if (scheme == "none") {
    EXPECT_EQ(checked.exit_code, 1) << "the checker missed none's anomalies: " << checked.out;
  } else {
    EXPECT_EQ(checked.exit_code, 0) << checked.out << checked.err;
  }
}

INSTANTIATE_TEST_SUITE_P(Workloads, SimHistory,
                         ::testing::Combine(::testing::Values(HistoryCase{"ycsb",
                                                                          {"--workload", "ycsb", "--rows", "65536",
                                                                           "--theta", "0.9", "--req-per-txn", "4"}},
                                                              HistoryCase{"tpcc",
                                                                          {"--workload", "tpcc", "--warehouses", "4"}}),
                                            ::testing::ValuesIn(scheme_names())),
                         [](const ::testing::TestParamInfo<SimHistory::ParamType>& i) {
                           return std::get<0>(i.param).name + "_" + std::get<1>(i.param);
                         });

}  // namespace
}  // namespace abyss
