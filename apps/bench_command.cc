// `abyss probe` and `abyss bench memory|index|scan`: measurements of this
// machine the binary makes itself; and the bench tables that are harness
// specs, which ./abyss runs.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "abyss_bench_specs.h"
#include "apps/commands.h"
#include "bench/index_bench.h"
#include "bench/probe.h"
#include "bench/scan_bench.h"
#include "common/knob.h"

namespace abyss::cli {

namespace {

// `abyss probe`: the measurements `abyss sim calibrate` reads.
int probe_command(bool as_json) {
  HostProbe p;
  if (auto err = probe_host(p); !err.empty()) {
    std::fprintf(stderr, "abyss: %s\n", err.c_str());
    return 2;
  }
  if (as_json) {
    nlohmann::json j;
    j["core_ghz"] = p.core_ghz;
    j["clock_read_ns"] = p.clock_read_ns;
    j["rmw_ns"] = p.rmw_ns;
    j["independent_ns"] = p.independent_ns;
    j["stream_gbps"] = p.stream_gbps;
    for (std::size_t i = 0; i < p.latency_ns.size(); i++) {
      j["latency_ns"].push_back({{"bytes", p.latency_ns[i].first},
                                 {"ns", p.latency_ns[i].second},
                                 {"independent_ns", p.independent_by_set[i].second}});
    }
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  std::printf("core clock        %8.2f GHz\n", p.core_ghz);
  std::printf("cycle counter     %8.1f ns per read\n", p.clock_read_ns);
  std::printf("atomic RMW        %8.1f ns, uncontended\n", p.rmw_ns);
  std::printf("random reads        dependent      independent\n");
  for (std::size_t i = 0; i < p.latency_ns.size(); i++) {
    const auto [bytes, ns] = p.latency_ns[i];
    const double free_ns = p.independent_by_set[i].second;
    std::printf("%8llu KiB  %8.1f ns %5.0f cyc  %8.2f ns %5.1f cyc\n", static_cast<unsigned long long>(bytes >> 10), ns,
                ns * p.core_ghz, free_ns, free_ns * p.core_ghz);
  }
  std::printf("stream read       %8.1f GB/s\n", p.stream_gbps);
  return 0;
}

// `abyss bench memory`: what random line reads cost on this machine, on small
// and huge pages, the read-only YCSB throughput they bound, and the
// throughput of transactions that do nothing but an indexed read's misses.
struct MemoryBench {
  uint64_t size_mib = 2048;
  std::string pages = "both";
  uint32_t lines_per_txn = 32;
  uint32_t accesses_per_txn = 16;
  std::string work_ns = "0";  // parsed by the command: CLI11's range check lets NaN through
  bool as_json = false;
};

int memory_bench_command(const MemoryBench& b) {
  double work_ns = 0;
  if (auto err = abyss::parse_real(b.work_ns, 0, 100'000, work_ns); !err.empty()) {
    std::fprintf(stderr, "abyss: --work-ns %s\n", err.c_str());
    return 2;
  }
  std::vector<bool> kinds;
  if (b.pages != "huge") kinds.push_back(false);
  if (b.pages != "small") kinds.push_back(true);
  // Each access a bucket line and its row's lines: measured when the lines
  // divide into whole accesses of at least one row line.
  abyss::ChainedShape shape;
  if (b.lines_per_txn % b.accesses_per_txn == 0 && b.lines_per_txn / b.accesses_per_txn >= 2) {
    shape = {b.accesses_per_txn, b.lines_per_txn / b.accesses_per_txn - 1, work_ns};
  }
  nlohmann::json j;
  j["size_bytes"] = b.size_mib << 20;
  j["lines_per_txn"] = b.lines_per_txn;
  j["accesses_per_txn"] = b.accesses_per_txn;
  j["work_ns"] = work_ns;
  if (!b.as_json) {
    std::printf("one core's random 64-byte line reads over %llu MiB; bound for a read-only transaction of %u lines\n",
                static_cast<unsigned long long>(b.size_mib), b.lines_per_txn);
    if (shape.row_lines > 0) {
      std::printf(
          "chained: %u accesses a transaction, each a bucket line and then its row's %u, prefetched in a burst "
          "a transaction or pipelined; %.0f ns of work after each access\n",
          shape.accesses, shape.row_lines, work_ns);
    } else {
      std::printf("chained: not measured (%u lines are not %u accesses of a bucket line and at least one row line)\n",
                  b.lines_per_txn, b.accesses_per_txn);
    }
    std::printf("%-6s %16s %16s %18s %18s %15s %15s\n", "pages", "dependent M/s", "independent M/s",
                "bound txn/s (dep)", "bound txn/s (ind)", "chained burst", "chained pipe");
  }
  for (const bool huge : kinds) {
    abyss::MemoryProbe p;
    if (auto err = abyss::probe_memory(b.size_mib << 20, huge, shape, p); !err.empty()) {
      std::fprintf(stderr, "abyss: %s\n", err.c_str());
      return 2;
    }
    const double dependent = 1e3 / p.dependent_ns;  // M reads/s
    const double independent = 1e3 / p.independent_ns;
    const double chained = p.chained_ns > 0 ? 1e9 / p.chained_ns : 0;  // txn/s
    const double pipelined = p.chained_pipeline_ns > 0 ? 1e9 / p.chained_pipeline_ns : 0;
    const char* name = huge ? "huge" : "small";
    nlohmann::json row = {{"pages", name},
                          {"dependent_ns", p.dependent_ns},
                          {"independent_ns", p.independent_ns},
                          {"dependent_lines_per_s", dependent * 1e6},
                          {"independent_lines_per_s", independent * 1e6},
                          {"bound_txn_per_s_dependent", dependent * 1e6 / b.lines_per_txn},
                          {"bound_txn_per_s_independent", independent * 1e6 / b.lines_per_txn}};
    if (chained > 0) {
      row["chained_ns_per_txn"] = p.chained_ns;
      row["chained_txn_per_s"] = chained;
      row["chained_pipeline_ns_per_txn"] = p.chained_pipeline_ns;
      row["chained_pipeline_txn_per_s"] = pipelined;
    }
    j["pages"].push_back(row);
    if (!b.as_json) {
      std::printf("%-6s %16.2f %16.2f %18.0f %18.0f", name, dependent, independent, dependent * 1e6 / b.lines_per_txn,
                  independent * 1e6 / b.lines_per_txn);
      if (chained > 0) {
        std::printf(" %15.0f %15.0f\n", chained, pipelined);
      } else {
        std::printf(" %15s %15s\n", "-", "-");
      }
    }
  }
  if (b.as_json) std::printf("%s\n", j.dump(2).c_str());
  return 0;
}

// `abyss bench index`: the index structures alone, as a table of M ops/s,
// one row per operation and structure, one column per thread count.
int index_bench_command(const abyss::IndexBenchOptions& o, bool as_json) {
  if (auto why = abyss::index_bench_refusal(o); !why.empty()) {
    std::fprintf(stderr, "abyss: %s\n", why.c_str());
    return 2;
  }
  std::vector<abyss::IndexBenchResult> results;
  const std::string err =
      abyss::run_index_bench(o, results, [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); });
  if (!err.empty()) {
    std::fprintf(stderr, "abyss: %s\n", err.c_str());
    return 1;
  }
  if (as_json) {
    nlohmann::json j;
    j["keys"] = o.keys;
    j["seconds_per_measurement"] = o.seconds;
    for (const auto& r : results) {
      j["results"].push_back({{"structure", r.structure},
                              {"op", r.op},
                              {"threads", r.threads},
                              {"ops", r.ops},
                              {"seconds", r.seconds},
                              {"keys_visited", r.keys_visited},
                              {"mops", r.mops()}});
    }
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  std::printf("index structures alone: %llu keys loaded, %.2f s a measurement, M operations/s\n",
              static_cast<unsigned long long>(o.keys), o.seconds);
  std::printf("%-12s %-10s", "op", "structure");
  for (const uint32_t t : o.threads) std::printf(" %9u thr", t);
  std::printf("\n");
  const std::vector<std::string> ops = {"lookup", "scan-" + std::to_string(o.short_scan),
                                        "scan-" + std::to_string(o.long_scan), "insert"};
  for (const std::string& op : ops) {
    for (const std::string& s : o.structures) {
      std::printf("%-12s %-10s", op.c_str(), s.c_str());
      for (const uint32_t t : o.threads) {
        const auto it = std::find_if(results.begin(), results.end(), [&](const abyss::IndexBenchResult& r) {
          return r.op == op && r.structure == s && r.threads == t;
        });
        if (it == results.end()) {
          std::printf(" %13s", "-");
        } else {
          std::printf(" %13.3g", it->mops());
        }
      }
      std::printf("\n");
    }
  }
  return 0;
}

// `abyss bench scan`: the Terrier study's five designs through its
// correctness workload and its benchmarks, as the study's tables: per
// benchmark, N and design, the elapsed ms, items a ms, both against N = 1,
// and the speedup over the coarse latch.
int scan_bench_command(const abyss::ScanBenchOptions& o, bool as_json) {
  if (auto why = abyss::scan_bench_refusal(o); !why.empty()) {
    std::fprintf(stderr, "abyss: %s\n", why.c_str());
    return 2;
  }
  std::vector<abyss::ScanBenchCheck> checks;
  std::vector<abyss::ScanBenchResult> results;
  const std::string err = abyss::run_scan_bench(
      o, checks, results, [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); });
  if (!err.empty()) {
    std::fprintf(stderr, "abyss: %s\n", err.c_str());
    return 1;
  }
  const std::string table = abyss::scan_bench_table(o, checks, results);
  if (!as_json) {
    std::printf("%s", table.c_str());
    return 0;
  }
  nlohmann::json j;
  j["tuples"] = o.tuples;
  j["reps"] = o.reps;
  const abyss::scan_designs::CheckShape shape = abyss::scan_bench_check_shape(o);
  j["check"] = {
      {"inserters", shape.inserters}, {"scanners", shape.scanners}, {"loaded", shape.loaded}, {"each", shape.each}};
  j["checks"] = nlohmann::json::array();
  for (const auto& k : checks) j["checks"].push_back({{"design", k.design}, {"scans", k.scans}, {"ms", k.ms}});
  j["table"] = table;
  for (const auto& r : results) {
    j["results"].push_back({{"benchmark", r.benchmark},
                            {"design", r.design},
                            {"threads", r.threads},
                            {"items", r.items},
                            {"ms", r.ms},
                            {"runs", r.runs},
                            {"mitems_per_s", r.mitems_per_s()}});
  }
  std::printf("%s\n", j.dump(2).c_str());
  return 0;
}

}  // namespace

std::vector<Command> add_bench(CLI::App& app) {
  auto probe_as_json = std::make_shared<bool>(false);
  CLI::App* probe = app.add_subcommand(
      "probe", "measure this machine's clock, memory latencies and bandwidth (what abyss sim calibrate reads)");
  probe->add_flag("--json", *probe_as_json, "as JSON");

  auto memory_bench = std::make_shared<MemoryBench>();
  CLI::App* bench = app.add_subcommand("bench", "benchmarks of this machine (the bench tables are harness specs)");
  bench->require_subcommand(1);
  CLI::App* bench_memory = bench->add_subcommand(
      "memory", "one core's dependent and independent random line reads, small and huge pages (the memory bound)");
  bench_memory
      ->add_option("--size-mib", memory_bench->size_mib,
                   "region to read, MiB (default 2048; the bound needs one far larger than the caches, a smaller one "
                   "measures the caches)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 20));
  bench_memory->add_option("--pages", memory_bench->pages, "small | huge | both (default both)")
      ->check(CLI::IsMember({"small", "huge", "both"}));
  bench_memory
      ->add_option("--lines-per-txn", memory_bench->lines_per_txn,
                   "lines a read-only transaction reads, for its bound (default 32: 16 accesses x 2 lines)")
      ->check(CLI::Range(1u, 1'000'000u));
  bench_memory
      ->add_option("--accesses-per-txn", memory_bench->accesses_per_txn,
                   "accesses the chained transactions make, each a bucket line and the rest of its share of "
                   "--lines-per-txn as its row (default 16)")
      ->check(CLI::Range(1u, 4096u));
  bench_memory->add_option(
      "--work-ns", memory_bench->work_ns,
      "register-only work after each chained access, in nanoseconds from 0 to 100000, standing for an "
      "engine's (default 0)");
  bench_memory->add_flag("--json", memory_bench->as_json, "as JSON");
  auto index_bench = std::make_shared<IndexBenchOptions>();
  auto index_bench_json = std::make_shared<bool>(false);
  CLI::App* bench_index = bench->add_subcommand("index",
                                                "the index structures alone: look-ups, scans and inserts in hash, "
                                                "ordered, absl::btree_map and std::map (M ops/s)");
  bench_index->add_option("--keys", index_bench->keys, "keys loaded before each measurement (default 1000000)")
      ->check(CLI::Range(uint64_t{1000}, uint64_t{1} << 32));
  bench_index->add_option("--threads", index_bench->threads, "thread counts, comma-separated (default 1,2)")
      ->delimiter(',')
      ->check(CLI::Range(1u, 1024u));
  bench_index->add_option("--seconds", index_bench->seconds, "seconds a measurement (default 1)")
      ->check(CLI::Range(0.01, 600.0));
  bench_index->add_option("--short-scan", index_bench->short_scan, "entries a short scan visits (default 10)")
      ->check(CLI::Range(1u, 1'000'000u));
  bench_index->add_option("--long-scan", index_bench->long_scan, "entries a long scan visits (default 1000)")
      ->check(CLI::Range(1u, 1'000'000u));
  bench_index
      ->add_option("--structures", index_bench->structures, "hash, ordered, btree, map, comma-separated (default all)")
      ->delimiter(',')
      ->check(CLI::IsMember(kIndexBenchStructures));
  bench_index->add_option("--seed", index_bench->seed, "seed of the key order and the look-ups (default 1)");
  bench_index->add_flag("--json", *index_bench_json, "as JSON");
  auto scan_bench = std::make_shared<ScanBenchOptions>();
  auto scan_bench_json = std::make_shared<bool>(false);
  CLI::App* bench_scan = bench->add_subcommand(
      "scan",
      "the Terrier study's five table designs under its concurrent scan, insert and iterator benchmarks, each "
      "checked first by its correctness workload");
  bench_scan->add_option("--tuples", scan_bench->tuples,
                         "tuples a table holds, or each inserter inserts (default 10000000)");
  bench_scan
      ->add_option("--threads", scan_bench->threads, "thread counts, comma-separated (default 1, 2 and the cores)")
      ->delimiter(',');
  bench_scan->add_option("--reps", scan_bench->reps,
                         "runs of a measurement, the median reported (default 3; no more once 1 s is spent)");
  bench_scan
      ->add_option("--benchmarks", scan_bench->benchmarks, "scan, insert, iterator, comma-separated (default all)")
      ->delimiter(',');
  bench_scan
      ->add_option("--designs", scan_bench->designs,
                   "coarse, fine-grained, snapshot, ordered-map, lock-free, comma-separated (default all)")
      ->delimiter(',');
  bench_scan->add_option("--check-threads", scan_bench->check_threads,
                         "threads of the correctness workload, half inserting, half scanning (default 16; 0 skips it)");
  bench_scan->add_flag("--json", *scan_bench_json, "as JSON");

  return {{probe, [=] { return probe_command(*probe_as_json); }},
          {bench_memory, [=] { return memory_bench_command(*memory_bench); }},
          {bench_index, [=] { return index_bench_command(*index_bench, *index_bench_json); }},
          {bench_scan, [=] { return scan_bench_command(*scan_bench, *scan_bench_json); }}};
}

std::optional<int> refuse_spec(int argc, char** argv) {
  const std::string first = argc > 1 ? argv[1] : "";
  const std::string second = argc > 2 ? argv[2] : "";
  if (first != "demo" && first != "bench") return std::nullopt;
  if (first == "bench" && (second == "memory" || second == "index" || second == "scan")) return std::nullopt;
  if (first == "bench" && (second == "kv" || second == "redis")) {
    std::fprintf(stderr, "abyss: `bench %s` starts servers and clients: run ./abyss bench %s (docs/server.md)\n",
                 second.c_str(), second.c_str());
    return 2;
  }
  if (first == "demo") {
    std::fprintf(stderr, "abyss: `demo` is a harness spec: run ./abyss demo (./abyss sweep harness/specs/demo.toml)\n");
    return 2;
  }
  // The bench tables are the files harness/specs/bench-NAME.toml, named at build time.
  std::string names;
  for (const std::string_view name : kBenchSpecs) {
    names += (names.empty() ? "" : ", ") + std::string(name);
    if (second == name) {
      std::fprintf(stderr,
                   "abyss: `bench %s` is a harness spec: run ./abyss bench %s (./abyss sweep "
                   "harness/specs/bench-%s.toml)\n",
                   second.c_str(), second.c_str(), second.c_str());
      return 2;
    }
  }
  std::fprintf(stderr, "abyss: the bench tables are harness specs: run ./abyss bench NAME, NAME one of %s\n",
               names.c_str());
  return 2;
}

}  // namespace abyss::cli
