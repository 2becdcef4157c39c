#include "apps/commands.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <fstream>
#include <map>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cc/schemes.h"
#include "engine/engine.h"
#include "engine/knobs.h"
#include "engine/report.h"
#include "platform/atomic.h"
#include "platform/clock.h"
#include "platform/process.h"
#include "platform/thread.h"
#include "platform/ts_source.h"
#include "workload/workloads.h"

namespace abyss::cli {

namespace {

// Adds `--flag NAME` that stores the enum whose name is NAME; any other value
// fails with the value and the allowed names (CLI11 prefixes the flag).
template <class Enum, std::size_t N>
CLI::Option* add_enum_option(CLI::App& app, const std::string& flag, Enum& target,
                             const std::array<std::string_view, N>& names, const std::string& help) {
  std::string allowed;
  for (const auto& n : names) allowed += (allowed.empty() ? "" : ", ") + std::string(n);
  auto index_of = [names](const std::string& v) {
    return static_cast<std::size_t>(std::find(names.begin(), names.end(), v) - names.begin());
  };
  return app
      .add_option_function<std::string>(
          flag, [&target, index_of](const std::string& v) { target = static_cast<Enum>(index_of(v)); }, help)
      ->check(CLI::Validator(
          [index_of, allowed](const std::string& v) {
            return index_of(v) < N ? std::string() : "'" + v + "' is not one of " + allowed;
          },
          "{" + allowed + "}", flag))
      ->default_str(std::string(names[static_cast<std::size_t>(target)]));
}

// Every registered scheme's name, in registry order.
std::vector<std::string> all_schemes() {
  std::vector<std::string> names;
  for (const cc::SchemeTraits& s : cc::schemes()) names.emplace_back(s.name);
  return names;
}

// The flags every run-based benchmark shares: the window of each run, the
// repetitions per point, and where to write every run's report.
void add_window_flags(CLI::App& app, double& duration_s, double& warmup_s) {
  app.add_option("--duration", duration_s, "seconds per run")->check(CLI::Range(0.01, 3600.0))->capture_default_str();
  app.add_option("--warmup", warmup_s, "warm-up seconds per run")->check(CLI::Range(0.0, 600.0))->capture_default_str();
}

void add_reps_json_flags(CLI::App& app, uint32_t& reps, uint32_t& prime_runs, std::string& json_path) {
  app.add_option("--reps", reps, "repetitions per point; the median is shown")
      ->check(CLI::Range(1, 101))
      ->capture_default_str();
  app.add_option("--prime-runs", prime_runs,
                 "runs of the first point before the table, discarded (the first run in a process also pays "
                 "for memory the allocator keeps for later runs)")
      ->check(CLI::Range(0, 10))
      ->capture_default_str();
  app.add_option("--json", json_path, "write every run's report as JSON to FILE");
}

// H-STORE runs with one partition per worker, as the papers ran it.
void partition_for_hstore(Config& cfg) {
  if (cc::scheme(cfg.cc).declares_partitions) cfg.ycsb.partitions = cfg.threads;
}

// A bench command runs every point in one process. The first run pays page
// faults on memory that the allocator then keeps and hands to later runs, so
// without a discarded run the first column would be measured on colder memory
// than the rest.
void prime(const Config& cfg, uint32_t runs) {
  if (runs == 0) return;
  std::printf("(%u discarded priming run%s of %s)\n", runs, runs == 1 ? "" : "s", cfg.cc.c_str());
  for (uint32_t i = 0; i < runs; i++) (void)run(cfg);
}

}  // namespace

void add_run_flags(CLI::App& app, Config& cfg) {
  for (const Knob& knob : run_knobs()) {
    const Knob* k = &knob;  // the table is static: the pointer outlives the parser
    const std::string help =
        std::string(k->help) + (k->workload.empty() ? "" : " [--workload " + std::string(k->workload) + "]");
    if (k->kind == KnobKind::Switch) {
      app.add_flag_callback(
          k->flag(), [&cfg, k] { (void)k->set(cfg, "true"); }, help);
      continue;
    }
    CLI::Option* opt = app.add_option_function<std::string>(
        k->flag(), [&cfg, k](const std::string& v) { (void)k->apply(cfg, v); }, help);
    opt->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);  // a later flag overrides, as in a script's defaults
    opt->check(CLI::Validator(
        [k](std::string& v) {
          Config scratch;
          return k->apply(scratch, v);
        },
        k->allowed(), std::string(k->name)));
    const nlohmann::json value = k->get(Config{});
    if (value.is_boolean() && k->kind == KnobKind::Choice) {
      opt->default_str(value.get<bool>() ? "on" : "off");
    } else if (value.is_string()) {
      if (!value.get<std::string>().empty()) opt->default_str(value.get<std::string>());
    } else {
      opt->default_str(value.dump());
    }
  }
}

std::string workload_flag_mismatch(const CLI::App& run, const Config& cfg) {
  const std::string_view workload = cfg.workload;
  for (const Knob& k : run_knobs()) {
    if (k.workload.empty() || k.workload == workload || run.count(k.flag()) == 0) continue;
    return k.flag() + " " + run.get_option(k.flag())->results().front() + " applies to --workload " +
           std::string(k.workload) + " only, not to --workload " + std::string(workload);
  }
  return {};
}

std::vector<std::string> ineffective_flag_notes(const CLI::App& run, const Config& cfg) {
  const cc::SchemeTraits& scheme = cc::scheme(cfg.cc);
  std::vector<std::string> notes;
  for (const Knob& k : run_knobs()) {
    if (k.ignored_because == nullptr || run.count(k.flag()) == 0) continue;
    if (auto why = k.ignored_because(scheme, cfg); !why.empty()) notes.push_back(k.flag() + " has no effect: " + why);
  }
  if (scheme.declares_partitions && cfg.workload == "ycsb" && cfg.ycsb.partitions < cfg.threads) {
    notes.push_back("--cc " + std::string(scheme.name) + " with " + std::to_string(cfg.ycsb.partitions) +
                    " partition(s) for " + std::to_string(cfg.threads) +
                    " threads: workers queue on shared partition locks; the papers run one partition per worker "
                    "(--partitions " +
                    std::to_string(cfg.threads) + ")");
  }
  return notes;
}

void add_demo_flags(CLI::App& app, DemoOptions& o) {
  add_window_flags(app, o.duration_s, o.warmup_s);
  app.add_option("--rows", o.rows, "YCSB rows")
      ->check(CLI::Range(uint64_t{64}, uint64_t{1} << 34))
      ->capture_default_str();
  app.add_option("--theta", o.theta, "YCSB Zipfian skew")->check(CLI::Range(0.0, 0.9999))->capture_default_str();
  app.add_option("--max-threads", o.max_threads, "largest thread count (0: cores)")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  app.add_option("--json-dir", o.json_dir, "write each run's JSON report into DIR");
}

int demo_command(const DemoOptions& o) {
  const uint32_t max_threads = o.max_threads == 0 ? platform::hardware_cores() : o.max_threads;
  std::printf(
      "YCSB, %llu rows, theta %.2f, 50%% writes, 16 accesses per txn, hstore: one partition per thread; "
      "%g s per run\n\n",
      static_cast<unsigned long long>(o.rows), o.theta, o.duration_s);
  std::printf("%-10s %7s %12s %10s %8s %8s %8s %8s %8s\n", "scheme", "threads", "txn/s", "abort", "useful", "wait",
              "cc_mgr", "abort_t", "other");
  double worst_other = 0;
  int runs = 0;
  for (const std::string& s : all_schemes()) {
    for (uint32_t t = 1; t <= max_threads; t++) {
      Config cfg;
      cfg.cc = s;
      cfg.threads = t;
      cfg.duration_s = o.duration_s;
      cfg.warmup_s = o.warmup_s;
      cfg.ycsb.rows = o.rows;
      cfg.ycsb.theta = o.theta;
      partition_for_hstore(cfg);
      const RunResult r = run(cfg);
      if (!o.json_dir.empty()) {
        std::ofstream(o.json_dir + "/demo-" + s + "-t" + std::to_string(t) + ".json") << report_json(r).dump(2) << '\n';
      }
      std::printf("%-10s %7u %12.0f %10.4f %7.1f%% %7.1f%% %7.1f%% %7.1f%% %7.1f%%\n", s.c_str(), t, r.throughput(),
                  r.abort_rate(), 100 * r.fraction(TimeCat::Useful), 100 * r.fraction(TimeCat::Wait),
                  100 * r.fraction(TimeCat::CcManager), 100 * r.fraction(TimeCat::Abort),
                  100 * r.fraction(TimeCat::Other));
      std::fflush(stdout);
      worst_other = std::max(worst_other, r.fraction(TimeCat::Other));
      runs++;
    }
  }
  std::printf("\nbreakdown: 'other' (time no category claims) is at most %.2f%% of worker time over %d runs\n",
              100 * worst_other, runs);
  return 0;
}

void add_bench_ycsb_flags(CLI::App& app, BenchYcsbOptions& o) {
  add_window_flags(app, o.duration_s, o.warmup_s);
  app.add_option("--rows", o.rows, "YCSB rows")
      ->check(CLI::Range(uint64_t{64}, uint64_t{1} << 34))
      ->capture_default_str();
  add_reps_json_flags(app, o.reps, o.prime_runs, o.json_path);
}

int bench_ycsb_command(const BenchYcsbOptions& o) {
  struct Mix {
    const char* name;
    double write_ratio;
  };
  constexpr Mix kMixes[] = {{"read-only", 0.0}, {"50% writes", 0.5}};
  constexpr double kThetas[] = {0.0, 0.6, 0.9};
  constexpr uint32_t kThreads[] = {1, 2};
  auto config = [&o](const std::string& s, uint32_t threads, double theta, double write_ratio, uint32_t rep) {
    Config cfg;
    cfg.cc = s;
    cfg.threads = threads;
    cfg.duration_s = o.duration_s;
    cfg.warmup_s = o.warmup_s;
    cfg.seed = 1 + rep;
    cfg.ycsb.rows = o.rows;
    cfg.ycsb.theta = theta;
    cfg.ycsb.write_ratio = write_ratio;
    partition_for_hstore(cfg);
    return cfg;
  };

  std::printf(
      "YCSB throughput (txn/s, median of %u), %llu rows, 16 accesses per txn, hstore: one partition per "
      "thread, %g s per run\n",
      o.reps, static_cast<unsigned long long>(o.rows), o.duration_s);
  std::printf("%-11s %5s %7s", "mix", "theta", "threads");
  for (const std::string& s : all_schemes()) std::printf(" %12s", s.c_str());
  std::printf("   (ratio to none)\n");
  prime(config(all_schemes().front(), kThreads[0], kThetas[0], kMixes[0].write_ratio, 0), o.prime_runs);
  nlohmann::json all = nlohmann::json::array();
  for (const Mix& mix : kMixes) {
    for (double theta : kThetas) {
      for (uint32_t threads : kThreads) {
        std::printf("%-11s %5.1f %7u", mix.name, theta, threads);
        std::vector<double> medians;
        for (const std::string& s : all_schemes()) {
          std::vector<double> tputs;
          for (uint32_t rep = 0; rep < o.reps; rep++) {
            const RunResult r = run(config(s, threads, theta, mix.write_ratio, rep));
            tputs.push_back(r.throughput());
            all.push_back(report_json(r));
          }
          std::sort(tputs.begin(), tputs.end());
          medians.push_back(tputs[tputs.size() / 2]);
          std::printf(" %12.0f", medians.back());
          std::fflush(stdout);
        }
        std::printf("  ");
        for (std::size_t i = 1; i < medians.size(); i++)
          std::printf(" %.2f", medians[0] > 0 ? medians[i] / medians[0] : 0);
        std::printf("\n");
      }
    }
  }
  if (!o.json_path.empty()) std::ofstream(o.json_path) << all.dump(2) << '\n';
  return 0;
}

void add_bench_ts_flags(CLI::App& app, BenchTsOptions& o) {
  app.add_option("--duration", o.duration_s, "seconds per allocation point")
      ->check(CLI::Range(0.01, 600.0))
      ->capture_default_str();
  app.add_option("--max-threads", o.max_threads, "largest thread count (0: cores)")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  app.add_option("--ycsb-duration", o.ycsb_duration_s, "seconds per TIMESTAMP-on-YCSB run (0: skip that table)")
      ->check(CLI::Range(0.0, 600.0))
      ->capture_default_str();
  app.add_option("--ycsb-theta", o.ycsb_theta, "Zipfian skew of the contended YCSB runs")
      ->check(CLI::Range(0.0, 0.9999))
      ->capture_default_str();
  app.add_option("--json", o.json_path, "write every point as JSON to FILE");
}

namespace {

// Threads allocate timestamps in a tight loop for `seconds` (Abyss Fig. 6).
double timestamps_per_second(const platform::TsAllocConfig& method, uint32_t threads, double seconds) {
  platform::TsSource source(method);
  platform::Atomic<bool> stop{false};
  std::vector<uint64_t> counts(threads);
  uint64_t start = 0;
  uint64_t end = 0;
  platform::run_threads(threads + 1, false, [&](uint32_t i) {
    if (i == threads) {
      start = platform::wall_ns();
      platform::sleep_ms(static_cast<uint64_t>(seconds * 1000));
      stop.store(true, platform::memory_order_release);
      end = platform::wall_ns();
      return;
    }
    platform::TsLocal local;
    uint64_t n = 0;
    uint64_t sink = 0;
    while (!stop.load(platform::memory_order_relaxed)) {
      for (int k = 0; k < 64; k++) sink += source.allocate(i, local);
      n += 64;
    }
    counts[i] = n + (sink == 0 ? 1 : 0);  // sink is never 0: keeps the loop
  });
  uint64_t total = 0;
  for (uint64_t c : counts) total += c;
  return static_cast<double>(total) / (static_cast<double>(end - start) / 1e9);
}

}  // namespace

void add_bench_latch_flags(CLI::App& app, BenchLatchOptions& o) {
  add_window_flags(app, o.duration_s, o.warmup_s);
  app.add_option("--threads", o.threads, "worker threads")->check(CLI::Range(1, 1024))->capture_default_str();
  app.add_option("--theta", o.theta, "YCSB Zipfian skew")->check(CLI::Range(0.0, 0.9999))->capture_default_str();
  app.add_option("--rows", o.rows, "YCSB rows")
      ->check(CLI::Range(uint64_t{64}, uint64_t{1} << 34))
      ->capture_default_str();
  add_reps_json_flags(app, o.reps, o.prime_runs, o.json_path);
}

// Every scheme with spin latches and no backoff, then with the Tale's
// refinements: queuing (MCS) latches and exponential backoff.
int bench_latch_command(const BenchLatchOptions& o) {
  struct Variant {
    const char* name;
    platform::LatchKind latch;
    BackoffKind backoff;
  };
  constexpr Variant kVariants[] = {{"spin, no backoff", platform::LatchKind::Spin, BackoffKind::None},
                                   {"queue, exp backoff", platform::LatchKind::Queue, BackoffKind::Exp}};
  auto config = [&o](const std::string& s, const Variant& v, uint32_t rep) {
    Config cfg;
    cfg.cc = s;
    cfg.threads = o.threads;
    cfg.duration_s = o.duration_s;
    cfg.warmup_s = o.warmup_s;
    cfg.seed = 1 + rep;
    cfg.latch = v.latch;
    cfg.backoff = v.backoff;
    cfg.ycsb.rows = o.rows;
    cfg.ycsb.theta = o.theta;
    partition_for_hstore(cfg);
    return cfg;
  };
  std::printf(
      "YCSB theta %.2f, 50%% writes, 16 accesses per txn, %u threads, %llu rows, %g s per run "
      "(median of %u); hstore: one partition per thread\n",
      o.theta, o.threads, static_cast<unsigned long long>(o.rows), o.duration_s, o.reps);
  std::printf("%-11s", "scheme");
  for (const Variant& v : kVariants) std::printf(" %20s %7s", v.name, "abort");
  std::printf(" %7s\n", "ratio");
  prime(config(all_schemes().front(), kVariants[0], 0), o.prime_runs);
  nlohmann::json all = nlohmann::json::array();
  for (const std::string& s : all_schemes()) {
    std::printf("%-11s", s.c_str());
    std::vector<double> medians;
    for (const Variant& v : kVariants) {
      std::vector<std::pair<double, double>> points;  // throughput, abort rate
      for (uint32_t rep = 0; rep < o.reps; rep++) {
        const RunResult r = run(config(s, v, rep));
        points.emplace_back(r.throughput(), r.abort_rate());
        all.push_back(report_json(r));
      }
      std::sort(points.begin(), points.end());
      const auto& median = points[points.size() / 2];
      medians.push_back(median.first);
      std::printf(" %20.0f %7.3f", median.first, median.second);
      std::fflush(stdout);
    }
    std::printf(" %7.2f\n", medians[0] > 0 ? medians[1] / medians[0] : 0);
  }
  if (!o.json_path.empty()) std::ofstream(o.json_path) << all.dump(2) << '\n';
  return 0;
}

void add_bench_tpcc_flags(CLI::App& app, BenchTpccOptions& o) {
  add_window_flags(app, o.duration_s, o.warmup_s);
  app.add_option("--warehouses", o.warehouses, "warehouse counts, comma-separated")
      ->delimiter(',')
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  app.add_option("--threads", o.threads, "thread counts, comma-separated")
      ->delimiter(',')
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  add_enum_option(app, "--tpcc-schema", o.schema, kTpccSchemaNames, "TPC-C cardinalities: full or small");
  app.add_option_function<std::string>(
         "--tpcc-inserts", [&o](const std::string& v) { o.inserts = v == "on"; },
         "insert ORDER, NEW-ORDER, ORDER-LINE and HISTORY rows: on | off")
      ->check(CLI::IsMember({"on", "off"}))
      ->default_str("on");
  add_reps_json_flags(app, o.reps, o.prime_runs, o.json_path);
}

// Every scheme at each warehouse and thread count: txn/s, abort rate and tpmC
// of the median run.
int bench_tpcc_command(const BenchTpccOptions& o) {
  auto config = [&o](const std::string& s, uint32_t warehouses, uint32_t threads, uint32_t rep) {
    Config cfg;
    cfg.cc = s;
    cfg.workload = "tpcc";
    cfg.threads = threads;
    cfg.duration_s = o.duration_s;
    cfg.warmup_s = o.warmup_s;
    cfg.seed = 1 + rep;
    cfg.tpcc.warehouses = warehouses;
    cfg.tpcc.schema = o.schema;
    cfg.tpcc.inserts = o.inserts;
    if (auto err = validate_workload(cfg); !err.empty()) throw std::runtime_error(err);
    return cfg;
  };
  std::printf(
      "TPC-C, NewOrder 50%% / Payment 50%%, %s schema, inserts %s, %g s per run (median of %u); "
      "columns: warehouses x threads, txn/s and abort rate\n",
      std::string(name_of(kTpccSchemaNames, o.schema)).c_str(), o.inserts ? "on" : "off", o.duration_s, o.reps);
  std::printf("%-11s", "scheme");
  for (uint32_t wh : o.warehouses) {
    for (uint32_t t : o.threads) {
      const std::string label = std::to_string(wh) + " wh, " + std::to_string(t) + " thr";
      std::printf(" %14s %6s", label.c_str(), "abort");
    }
  }
  std::printf("\n");
  prime(config(all_schemes().front(), o.warehouses.front(), o.threads.front(), 0), o.prime_runs);
  nlohmann::json all = nlohmann::json::array();
  for (const std::string& s : all_schemes()) {
    std::printf("%-11s", s.c_str());
    for (uint32_t wh : o.warehouses) {
      for (uint32_t t : o.threads) {
        std::vector<std::pair<double, double>> points;  // throughput, abort rate
        for (uint32_t rep = 0; rep < o.reps; rep++) {
          const RunResult r = run(config(s, wh, t, rep));
          points.emplace_back(r.throughput(), r.abort_rate());
          all.push_back(report_json(r));
        }
        std::sort(points.begin(), points.end());
        const auto& median = points[points.size() / 2];
        std::printf(" %14.0f %6.3f", median.first, median.second);
        std::fflush(stdout);
      }
    }
    std::printf("\n");
  }
  if (!o.json_path.empty()) std::ofstream(o.json_path) << all.dump(2) << '\n';
  return 0;
}

void add_bench_hstore_flags(CLI::App& app, BenchHstoreOptions& o) {
  add_window_flags(app, o.duration_s, o.warmup_s);
  app.add_option("--threads", o.threads, "worker threads (0: cores)")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  app.add_option("--partitions", o.partitions, "YCSB partitions")->check(CLI::Range(4, 1024))->capture_default_str();
  app.add_option("--rows", o.rows, "YCSB rows")
      ->check(CLI::Range(uint64_t{4096}, uint64_t{1} << 34))
      ->capture_default_str();
  add_reps_json_flags(app, o.reps, o.prime_runs, o.json_path);
}

int bench_hstore_command(const BenchHstoreOptions& o) {
  const uint32_t threads = o.threads == 0 ? platform::hardware_cores() : o.threads;
  constexpr double kRatios[] = {0.0, 0.1, 0.5, 1.0};
  constexpr uint32_t kParts[] = {1, 2, 4};
  auto config = [&o, threads](double ratio, uint32_t parts, uint32_t rep) {
    Config cfg;
    cfg.cc = "hstore";
    cfg.threads = threads;
    cfg.duration_s = o.duration_s;
    cfg.warmup_s = o.warmup_s;
    cfg.seed = 1 + rep;
    cfg.ycsb.rows = o.rows;
    cfg.ycsb.partitions = o.partitions;
    cfg.ycsb.multi_part_ratio = ratio;
    cfg.ycsb.parts_per_txn = parts;
    if (auto err = validate_workload(cfg); !err.empty()) throw std::runtime_error(err);
    return cfg;
  };
  std::printf(
      "H-STORE on YCSB (Abyss Fig. 15): txn/s (median of %u), %u threads, %u partitions, %llu rows, "
      "50%% writes, %g s per run\n",
      o.reps, threads, o.partitions, static_cast<unsigned long long>(o.rows), o.duration_s);
  std::printf("%16s", "multi-part ratio");
  for (uint32_t p : kParts) std::printf(" %10s%-2u", "parts/txn ", p);
  std::printf("\n");
  prime(config(kRatios[0], kParts[0], 0), o.prime_runs);
  nlohmann::json all = nlohmann::json::array();
  for (double ratio : kRatios) {
    std::printf("%16.1f", ratio);
    for (uint32_t parts : kParts) {
      std::vector<double> tputs;
      for (uint32_t rep = 0; rep < o.reps; rep++) {
        const RunResult r = run(config(ratio, parts, rep));
        tputs.push_back(r.throughput());
        all.push_back(report_json(r));
      }
      std::sort(tputs.begin(), tputs.end());
      std::printf(" %12.0f", tputs[tputs.size() / 2]);
      std::fflush(stdout);
    }
    std::printf("\n");
  }
  if (!o.json_path.empty()) std::ofstream(o.json_path) << all.dump(2) << '\n';
  return 0;
}

int bench_ts_command(const BenchTsOptions& o) {
  const uint32_t max_threads = o.max_threads == 0 ? platform::hardware_cores() : o.max_threads;
  const char* kMethods[] = {"mutex", "atomic", "batch:8", "batch:16", "clock"};
  nlohmann::json out = {{"micro", nlohmann::json::array()}, {"ycsb_timestamp", nlohmann::json::array()}};

  std::printf("Timestamp allocation (Abyss Fig. 6): million timestamps per second, %g s per point\n", o.duration_s);
  std::printf("%7s", "threads");
  for (const char* m : kMethods) std::printf(" %10s", m);
  std::printf("\n");
  for (uint32_t t = 1; t <= max_threads; t++) {
    std::printf("%7u", t);
    for (const char* m : kMethods) {
      platform::TsAllocConfig method;
      (void)platform::TsAllocConfig::parse(m, method);
      const double rate = timestamps_per_second(method, t, o.duration_s);
      std::printf(" %10.1f", rate / 1e6);
      std::fflush(stdout);
      out["micro"].push_back({{"method", m}, {"threads", t}, {"timestamps_per_second", rate}});
    }
    std::printf("\n");
  }

  if (o.ycsb_duration_s > 0) {
    // Abyss Fig. 7: TIMESTAMP on write-intensive YCSB. Under contention a
    // restarted transaction takes the next timestamp of its worker's batch,
    // which can still be older than the one that made it abort.
    std::printf("\nTIMESTAMP on YCSB, 50%% writes, %u threads, %g s per run: txn/s (abort rate)\n", max_threads,
                o.ycsb_duration_s);
    std::printf("%6s", "theta");
    for (const char* m : kMethods) std::printf(" %20s", m);
    std::printf("\n");
    for (double theta : {0.0, o.ycsb_theta}) {
      std::printf("%6.2f", theta);
      for (const char* m : kMethods) {
        Config cfg;
        cfg.cc = "timestamp";
        cfg.threads = max_threads;
        cfg.duration_s = o.ycsb_duration_s;
        cfg.ycsb.theta = theta;
        (void)platform::TsAllocConfig::parse(m, cfg.ts_alloc);
        const RunResult r = run(cfg);
        char cell[64];
        std::snprintf(cell, sizeof cell, "%.0f (%.3f)", r.throughput(), r.abort_rate());
        std::printf(" %20s", cell);
        std::fflush(stdout);
        out["ycsb_timestamp"].push_back(report_json(r));
      }
      std::printf("\n");
    }
  }
  if (!o.json_path.empty()) std::ofstream(o.json_path) << out.dump(2) << '\n';
  return 0;
}

}  // namespace abyss::cli
