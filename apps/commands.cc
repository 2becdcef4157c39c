#include "apps/commands.h"

#include <cstdio>
#include <fstream>
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
#include "workload/ycsb/ycsb_config.h"

namespace abyss::cli {

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
  if (scheme.declares_partitions && cfg.workload == "ycsb" && cfg.settings<YcsbConfig>().partitions < cfg.threads) {
    notes.push_back("--cc " + std::string(scheme.name) + " with " +
                    std::to_string(cfg.settings<YcsbConfig>().partitions) + " partition(s) for " +
                    std::to_string(cfg.threads) +
                    " threads: workers queue on shared partition locks; the papers run one partition per worker "
                    "(--partitions " +
                    std::to_string(cfg.threads) + ")");
  }
  return notes;
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
        cfg.settings<YcsbConfig>().theta = theta;
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
