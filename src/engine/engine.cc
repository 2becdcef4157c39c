#include "engine/engine.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "cc/registry.h"
#include "engine/runner.h"
#include "platform/clock.h"
#include "platform/latch.h"
#include "platform/process.h"
#include "platform/thread.h"
#include "storage/database.h"
#include "storage/footprint.h"
#include "txn/ts_source.h"
#include "workload/registry.h"

namespace abyss {

namespace {

template <class CC, class W>
RunResult run_with(const Config& given) {
  using RowMeta = typename CC::RowMeta;
  Config cfg = given;
  cfg.partitions = W::partitions(given);  // what a scheme that locks partitions sizes its table by
  RunResult result;
  result.config = cfg;
  result.cores = platform::hardware_cores();
  result.load_average = platform::load_average();
  const bool oversubscribed = result.oversubscribed();
  result.type_names.assign(W::kTypeNames.begin(), W::kTypeNames.end());
  result.metrics = W::metrics();

  const RowLayout layout = RowLayout::for_meta(sizeof(RowMeta), alignof(RowMeta));
  Database db(layout);
  W workload(cfg);
  const uint64_t load_start = platform::wall_ns();
  workload.load(db, platform::hardware_cores(), [](void* meta) { new (meta) RowMeta(); });
  result.load_seconds = static_cast<double>(platform::wall_ns() - load_start) / 1e9;
  result.rss_after_load = platform::resident_bytes();

  TsSource ts(cfg.ts_alloc);
  std::vector<std::unique_ptr<Worker>> workers;
  std::vector<typename W::Queries> queries;
  for (uint32_t i = 0; i < cfg.threads; i++) {
    auto& w = workers.emplace_back(std::make_unique<Worker>(WorkerId{i}, cfg.threads, cfg.seed, db.tables().size()));
    w->ts = &ts;
    if (!cfg.history_path.empty()) {
      w->history = std::make_unique<HistoryWriter>(cfg.history_path + ".part" + std::to_string(i));
    }
    queries.push_back(workload.generate(i, cfg.queries_per_worker, w->rng));
  }

  CC cc(cfg, cfg.threads);
  platform::Atomic<uint32_t> phase{static_cast<uint32_t>(Phase::Warmup)};
  platform::Atomic<uint32_t> ready{0};
  result.workers.assign(cfg.threads, WorkerStats(W::kTypeNames.size()));
  std::vector<std::string> errors(cfg.threads);
  uint64_t window_start = 0;
  uint64_t window_end = 0;
  // Threads 0..threads-1 are workers; the last one keeps time.
  platform::run_threads(cfg.threads + 1, cfg.pin, [&](uint32_t i) {
    if (i == cfg.threads) {
      // Starting threads and setting up workers is not part of the run: the
      // clock starts once every worker is about to run (or has failed).
      while (ready.load(platform::memory_order_acquire) < cfg.threads) platform::sleep_ms(1);
      platform::sleep_ms(static_cast<uint64_t>(cfg.warmup_s * 1000));
      window_start = platform::wall_ns();
      phase.store(static_cast<uint32_t>(Phase::Measure), platform::memory_order_release);
      // Sleeps the window in steps of at most a second, sampling memory.
      const auto window_ms = static_cast<uint64_t>(cfg.duration_s * 1000);
      for (uint64_t slept = 0; slept < window_ms;) {
        const uint64_t step = std::min<uint64_t>(1000, window_ms - slept);
        platform::sleep_ms(step);
        slept += step;
        result.rss_samples.emplace_back(static_cast<double>(slept) / 1000, platform::resident_bytes());
      }
      phase.store(static_cast<uint32_t>(Phase::Done), platform::memory_order_release);
      window_end = platform::wall_ns();
      return;
    }
    bool counted = false;
    try {
      result.workers[i] = run_worker(cfg, cc, workload, queries[i], *workers[i], layout, phase, oversubscribed, [&] {
        ready.fetch_add(1, platform::memory_order_release);
        counted = true;
      });
    } catch (const std::exception& e) {
      errors[i] = e.what();
      // A worker that failed before it counted itself never keeps the clock from starting.
      if (!counted) ready.fetch_add(1, platform::memory_order_release);
    }
  });
  for (const auto& e : errors) {
    if (!e.empty()) throw std::runtime_error("worker failed: " + e);
  }
  result.seconds = static_cast<double>(window_end - window_start) / 1e9;
  result.total = WorkerStats(W::kTypeNames.size());
  for (const auto& w : result.workers) result.total.merge(w);
  result.rss_at_end = platform::resident_bytes();

  if (!cfg.history_path.empty()) {
    std::vector<std::string> parts;
    parts.reserve(workers.size());
    for (auto& w : workers) parts.push_back(w->history->close());
    if (auto err = HistoryWriter::merge(cfg.history_path, parts); !err.empty()) throw std::runtime_error(err);
  }
  if (!cfg.dump_dir.empty()) {
    if (auto err = db.dump(cfg.dump_dir); !err.empty()) throw std::runtime_error(err);
  }
  return result;
}

}  // namespace

uint64_t estimate_bytes(const Config& cfg) {
  return cc::Registry::dispatch(cfg.cc, [&]<class CC>() -> uint64_t {
    using Meta = typename CC::RowMeta;
    const uint32_t loaders = platform::hardware_cores();
    return WorkloadRegistry::dispatch(cfg.workload, [&]<class W>() -> uint64_t {
      return W::estimate_load_bytes(cfg, sizeof(Meta), alignof(Meta), loaders) +
             uint64_t{cfg.threads} * W::estimate_worker_bytes(cfg, sizeof(Meta), alignof(Meta));
    });
  });
}

std::string memory_shortfall(const Config& cfg) {
  return footprint::shortfall(estimate_bytes(cfg), platform::available_memory_bytes());
}

std::string oversubscription_note(const Config& cfg) {
  const uint32_t cores = platform::hardware_cores();
  const double load = platform::load_average();
  if (static_cast<double>(cfg.threads) + load <= cores + 0.5) return {};
  char line[320];
  std::snprintf(line, sizeof line,
                "%u worker(s) on %u core(s) with a load average of %.2f: workers share cores, so waits include "
                "preempted holders and a worker yields its core after an abort (docs/schemes.md, Liveness)",
                cfg.threads, cores, load);
  return line;
}

RunResult run(const Config& cfg) {
  // The one place a scheme and a workload are picked: everything below is
  // instantiated for the pair, so no access branches on either.
  return cc::Registry::dispatch(cfg.cc, [&]<class CC>() {
    return WorkloadRegistry::dispatch(cfg.workload, [&]<class W>() { return run_with<CC, W>(cfg); });
  });
}

}  // namespace abyss
