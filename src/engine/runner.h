#pragma once
// The worker loop: serve the worker's pre-generated queries in order; restart a
// CC-aborted transaction with the same inputs after backoff (or park it in
// the abort buffer and run others meanwhile); count a logical abort and move
// on; keep statistics only inside the measurement window.
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

// The run's phase word: the phase in its two low bits and the window's
// number above them. A run whose window is sized by rule (--steady-commits)
// opens a new window when the last one did not hold steady state; a worker
// starts its statistics again when it sees a new number.
inline uint32_t phase_word(Phase p, uint32_t window) { return window << 2 | static_cast<uint32_t>(p); }
inline Phase phase_of(uint32_t word) { return static_cast<Phase>(word & 3); }
inline uint32_t window_of(uint32_t word) { return word >> 2; }

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
// since it started, warm-up included, for the timekeeper to read (a line of
// its own): the window's halves, the steady-state rule, a progress line.
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
  uint32_t window = 0;  // the number of the window the statistics are of
  uint64_t sink = 0;    // keeps reads from being optimised away
  // --time-sample N: one attempt in N times its sampled sections.
  const uint32_t time_sample = cfg.time_sample;
  uint32_t until_timed = 0;
  // Checked before every attempt, so a transaction that is restarting when
  // the window opens has its later attempts counted.
  auto enter_window_if_open = [&] {
    const uint32_t word = phase.load(platform::memory_order_acquire);
    if (phase_of(word) != Phase::Measure || window_of(word) == window) return;
    stats = WorkerStats(types);
    measuring = true;
    window = window_of(word);
    window_start = platform::cycles();
  };
  // --abort-buffer: aborted transactions waiting out their penalty while
  // the worker runs others (DBx1000's abort buffer), oldest first.
  struct Parked {
    std::size_t query;
    uint64_t ready;        // cycles: when its penalty is over
    uint64_t first_start;  // cycles: its first attempt began
    uint32_t aborts;
  };
  std::vector<Parked> parked;
  parked.reserve(cfg.abort_buffer);
  std::size_t next = 0;
  mark_ready();

  for (;;) {
    if (sampling && measuring) {
      const uint32_t passed = boundaries.load(platform::memory_order_acquire);
      if (snapshots.size() < passed) {
        WorkerStats now = stats;
        now.total_cycles = platform::cycles() - window_start;
        snapshots.resize(passed, now);
      }
    }
    if (phase_of(phase.load(platform::memory_order_acquire)) == Phase::Done) break;
    // --abort-buffer: a parked transaction whose penalty is over goes first,
    // then a new one while the buffer has room; with the buffer full, the
    // worker waits for the parked one that is ready first.
    std::size_t i = 0;
    uint64_t first_start = 0;
    uint32_t first_aborts = 0;
    bool resumed = false;
    if (!parked.empty()) {
      const uint64_t now = platform::cycles();
      auto it = std::find_if(parked.begin(), parked.end(), [&](const Parked& p) { return p.ready <= now; });
      if (it == parked.end() && parked.size() >= cfg.abort_buffer) {
        it = std::min_element(parked.begin(), parked.end(),
                              [](const Parked& a, const Parked& b) { return a.ready < b.ready; });
        platform::pause_for_ns(static_cast<uint64_t>(static_cast<double>(it->ready - now) / cycles_per_ns));
        if (measuring) stats[TimeCat::Backoff] += platform::cycles() - now;
      }
      if (it != parked.end()) {
        i = it->query;
        first_start = it->first_start;
        first_aborts = it->aborts;
        parked.erase(it);
        resumed = true;
      }
    }
    if (!resumed) {
      i = next++ % queries.size();
      first_start = platform::cycles();
    }
    const uint8_t type = workload.type_of(queries, i);
    // A transaction taken from the buffer begins afresh (a new timestamp
    // where its scheme keeps one across restarts); one retried in place
    // after its backoff is a restart.
    bool restart = false;
    for (uint32_t aborts = first_aborts;; aborts++) {
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
        rc = txn.begin(restart);
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
      if (rc == Rc::Ok && published != nullptr) {
        published->store(published->load(platform::memory_order_relaxed) + 1, platform::memory_order_relaxed);
      }
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
            stats.timed_attempts++;
          } else {
            stats.untimed_span += span;  // finish() splits it as the timed attempts' time splits
          }
          TypeStats& ts = stats.types[type];
          if (rc == Rc::Ok) {
            ts[Counter::Commits]++;
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
              {txn.commit_epoch(), txn.logged() ? txn.commit_id().value : 0, first_start, type, measuring, window});
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
      // Tale §5: a random wait below a bound that doubles per abort (exp);
      // DBx1000: below a fixed bound (penalty).
      const uint64_t penalty_ns =
          cfg.backoff == BackoffKind::None ? 0 : w.rng.uniform(cfg.backoff_bound_ns(aborts) + 1);
      if (cfg.abort_buffer > 0) {
        parked.push_back({i, rolled_back + static_cast<uint64_t>(static_cast<double>(penalty_ns) * cycles_per_ns),
                          first_start, aborts + 1});
        if (yield_after_abort) platform::yield_thread();
        break;
      }
      if (penalty_ns > 0) platform::pause_for_ns(penalty_ns);
      restart = true;
      if (yield_after_abort) platform::yield_thread();
      if (measuring) stats[TimeCat::Backoff] += platform::cycles() - rolled_back;
      if (phase_of(phase.load(platform::memory_order_relaxed)) == Phase::Done) break;
    }
    // A commit is acknowledged once its log record is durable
    // (log/logger.h); its latency runs to then.
    if (w.log != nullptr) {
      const uint64_t spent = w.log->poll([&](const log::WorkerLog::Pending& p, uint64_t at) {
        if (!p.measured || !measuring || p.token != window) return;  // a commit of an earlier window
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
