#pragma once
// The worker loop: serve the worker's pre-generated queries in order; restart a
// CC-aborted transaction with the same inputs after backoff; count a logical
// abort and move on; keep statistics only inside the measurement window.
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "common/config.h"
#include "platform/atomic.h"
#include "platform/backoff.h"
#include "platform/clock.h"
#include "stats/stats.h"
#include "txn/txn.h"
#include "txn/worker.h"

namespace abyss {

enum class Phase : uint32_t { Warmup, Measure, Done };

// `yield_after_abort`: the machine has more runnable threads than cores, so
// the transaction this one conflicted with may be preempted while holding
// what it waits for, and restarting at once would only abort again; giving
// up the core lets it run (docs/schemes.md, "Liveness"). A worker per idle
// core, as in the papers, never yields here.
// `mark_ready()` is called once the worker is set up and about to run its
// first transaction; the warm-up and the measurement window start only once
// every worker has called it.
// Sampling (cfg.sample_interval() > 0): the timekeeper counts the interval
// boundaries of the window in `boundaries`; after each transaction the
// worker appends a copy of its statistics so far to `snapshots` for every
// boundary it has not yet marked, so snapshot k holds what the worker had
// done by the k-th boundary (up to the transaction it was in).
// `published`, when not null, is where the worker keeps its count of commits
// in the window for a progress line to read (a line of its own).
template <class CC, class W, class MarkReady>
WorkerStats run_worker(const Config& cfg, CC& cc, const W& workload, const typename W::Queries& queries, Worker& w,
                       RowLayout layout, const platform::Atomic<uint32_t>& phase,
                       const platform::Atomic<uint32_t>& boundaries, std::vector<WorkerStats>& snapshots,
                       platform::Atomic<uint64_t>* published, bool yield_after_abort, MarkReady&& mark_ready) {
  Txn<CC> txn(cc, w, layout);
  const std::size_t types = W::kTypeNames.size();
  WorkerStats stats(types);
  const double cycles_per_ns = platform::cycles_per_ns();
  bool measuring = false;
  const bool sampling = cfg.sample_interval() > 0;
  uint64_t window_start = 0;
  uint64_t sink = 0;  // keeps reads from being optimised away
  // --time-sample N: one attempt in N times its sampled sections.
  const uint32_t time_sample = cfg.time_sample;
  uint32_t until_timed = 0;
  // Checked before every attempt, so a transaction that is restarting when
  // the window opens has its later attempts counted.
  auto enter_window_if_open = [&] {
    if (measuring || static_cast<Phase>(phase.load(platform::memory_order_acquire)) != Phase::Measure) return;
    stats = WorkerStats(types);
    measuring = true;
    window_start = platform::cycles();
  };
  mark_ready();

  for (std::size_t next = 0;; next++) {
    if (sampling && measuring) {
      const uint32_t passed = boundaries.load(platform::memory_order_acquire);
      if (snapshots.size() < passed) {
        WorkerStats now = stats;
        now.total_cycles = platform::cycles() - window_start;
        snapshots.resize(passed, now);
      }
    }
    if (static_cast<Phase>(phase.load(platform::memory_order_acquire)) == Phase::Done) break;
    const std::size_t i = next % queries.size();
    const uint8_t type = workload.type_of(queries, i);
    const uint64_t first_start = platform::cycles();
    for (uint32_t aborts = 0;; aborts++) {
      enter_window_if_open();
      w.reset_attempt();
      w.timing = until_timed == 0;
      until_timed = until_timed + 1 == time_sample ? 0 : until_timed + 1;
      const uint64_t start = platform::cycles();
      if constexpr (CC::kTraits.declares_partitions) {
        txn.timed(TimeCat::CcManager, [&] {
          workload.partitions_of(queries, i, txn.partitions());
          return 0;
        });
      }
      Rc rc = Rc::Ok;
      try {
        rc = txn.begin(aborts > 0);
        if (rc == Rc::Ok) rc = workload.run(txn, queries, i, sink);
        if (rc == Rc::Ok) {
          rc = txn.commit();
        } else if (rc == Rc::LogicalAbort) {
          txn.abort();
        }
      } catch (...) {
        // The run fails; the other workers must not wait forever for what
        // this transaction holds.
        txn.abort();
        throw;
      }
      if (rc == Rc::NotFound) {
        txn.abort();  // releases what other workers may be waiting for
        throw std::runtime_error("workload left a missing key unhandled");
      }
      const uint64_t end = platform::cycles();
      if (rc == Rc::Ok || rc == Rc::LogicalAbort) {
        if (measuring) {
          for (std::size_t c = 0; c < kTimeCats; c++) stats.cycles[c] += w.attempt[c];
          // A logical abort did the work the transaction asked for: useful.
          const uint64_t useful = (end - start) - std::min(end - start, w.charged);
          // The attempt's time outside waits and logging, which are timed in every attempt.
          const uint64_t always_timed =
              w.attempt[static_cast<std::size_t>(TimeCat::Wait)] + w.attempt[static_cast<std::size_t>(TimeCat::Log)];
          const uint64_t span = (end - start) - std::min(end - start, always_timed);
          if (w.timing) {
            stats[TimeCat::Useful] += useful;
            for (std::size_t c = 0; c < kTimeCats; c++) {
              if (sampled_category(static_cast<TimeCat>(c))) stats.timed[c] += w.attempt[c];
            }
            stats.timed[static_cast<std::size_t>(TimeCat::Useful)] += useful;
            stats.timed_span += span;
          } else {
            stats.untimed_span += span;  // finish() splits it as the timed attempts' time splits
          }
          TypeStats& ts = stats.types[type];
          if (rc == Rc::Ok) {
            ts[Counter::Commits]++;
            if (published != nullptr) {
              published->store(published->load(platform::memory_order_relaxed) + 1, platform::memory_order_relaxed);
            }
            if (w.log == nullptr) {
              ts[Counter::Acknowledged]++;
              ts.latency.record(static_cast<uint64_t>(static_cast<double>(end - first_start) / cycles_per_ns));
            }
          } else {
            ts[Counter::LogicalAborts]++;
          }
        }
        if (rc == Rc::Ok && w.log != nullptr) {
          w.log->committed(
              {txn.commit_epoch(), txn.logged() ? txn.commit_id().value : 0, first_start, type, measuring, 0});
        }
        break;
      }
      // A CC abort: the whole attempt, and its roll-back, is wasted work.
      txn.abort();
      const uint64_t rolled_back = platform::cycles();
      if (measuring) {
        stats[TimeCat::Abort] += rolled_back - start;
        stats.types[type][Counter::CcAborts]++;
      }
      if (cfg.backoff == BackoffKind::Exp) {
        // Tale §5: wait a random time below a bound that doubles per abort.
        platform::pause_for_ns(w.rng.uniform(cfg.backoff_bound_ns(aborts) + 1));
      }
      if (yield_after_abort) platform::yield_thread();
      if (measuring) stats[TimeCat::Backoff] += platform::cycles() - rolled_back;
      if (static_cast<Phase>(phase.load(platform::memory_order_relaxed)) == Phase::Done) break;
    }
    // A commit is acknowledged once its log record is durable
    // (log/logger.h); its latency runs to then.
    if (w.log != nullptr) {
      const uint64_t spent = w.log->poll([&](const log::WorkerLog::Pending& p, uint64_t at) {
        if (!p.measured || !measuring) return;
        TypeStats& ts = stats.types[p.type];
        ts[Counter::Acknowledged]++;
        ts.latency.record(static_cast<uint64_t>(static_cast<double>(at - p.start) / cycles_per_ns));
      });
      if (measuring) stats[TimeCat::Log] += spent;
    }
  }
  if (measuring) stats.total_cycles = platform::cycles() - window_start;
  stats.finish();
  w.sink = sink;
  return stats;
}

}  // namespace abyss
