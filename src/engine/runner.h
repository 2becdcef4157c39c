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
#include "txn/attempts.h"
#include "txn/txn.h"
#include "txn/worker.h"
#include "workload/registry.h"

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
template <class CC, class W>
class Runner final : public AttemptHooks {
 public:
  Runner(const Config& cfg, CC& cc, const W& workload, const typename W::Queries& queries, Worker& w, RowLayout layout,
         const platform::Atomic<uint32_t>& phase, const platform::Atomic<uint32_t>& boundaries,
         std::vector<WorkerStats>& snapshots, platform::Atomic<uint64_t>* published, bool yield_after_abort)
      : cfg_(cfg),
        workload_(workload),
        queries_(queries),
        w_(w),
        txn_(cc, w, layout, access_capacity<W>(cfg)),
        phase_(phase),
        boundaries_(boundaries),
        snapshots_(snapshots),
        published_(published),
        yield_after_abort_(yield_after_abort),
        stats_(W::kTypeNames.size()),
        cycles_per_ns_(platform::cycles_per_ns()) {
    parked_.reserve(cfg.abort_buffer);
  }

  template <class MarkReady>
  WorkerStats run(MarkReady&& mark_ready) {
    mark_ready();
    for (;;) {
      if (sampling_ && measuring_) {
        const uint32_t passed = boundaries_.load(platform::memory_order_acquire);
        if (snapshots_.size() < passed) {
          WorkerStats now = stats_;
          now.total_cycles = platform::cycles() - window_start_;
          snapshots_.resize(passed, now);
        }
      }
      if (phase_of(phase_.load(platform::memory_order_acquire)) == Phase::Done) break;
      uint64_t first_start = 0;
      uint32_t first_aborts = 0;
      if (!resume_parked(first_start, first_aborts)) {
        query_ = next_++ % queries_.size();
        first_start = platform::cycles();
      }
      type_ = workload_.type_of(queries_, query_);
      parking_first_start_ = first_start;
      const Attempts a = run_attempts(txn_, w_, cfg_, yield_after_abort_, first_aborts, *this);
      if (a.rc == Rc::NotFound) throw std::runtime_error("workload left a missing key unhandled");
      if constexpr (requires { workload_.committed(uint32_t{0}); }) {
        if (a.rc == Rc::Ok) workload_.committed(w_.id.value);
      }
      if (a.rc == Rc::Ok && published_ != nullptr) {
        published_->store(published_->load(platform::memory_order_relaxed) + 1, platform::memory_order_relaxed);
      }
      if (a.rc == Rc::Ok || a.rc == Rc::LogicalAbort) ended(a, first_start);
      // A commit is acknowledged once its log record is durable
      // (log/logger.h); its latency runs to then.
      if (w_.log != nullptr) {
        const uint64_t spent = w_.log->poll([&](const log::WorkerLog::Pending& p, uint64_t at) {
          if (!p.measured || !measuring_ || p.token != window_) return;  // a commit of an earlier window
          TypeStats& ts = stats_.types[p.type];
          ts[Counter::Acknowledged]++;
          ts.latency.record(static_cast<uint64_t>(static_cast<double>(at - p.start) / cycles_per_ns_));
        });
        if (measuring_) stats_[TimeCat::Log] += spent;
      }
    }
    if (measuring_) stats_.total_cycles = platform::cycles() - window_start_;
    stats_.finish();
    w_.sink = sink_;
    return stats_;
  }

  // The attempt loop's hooks (txn/attempts.h).
  // Checked before every attempt, so a transaction that is restarting when
  // the window opens has its later attempts counted; --time-sample N: one
  // attempt in N times its sampled sections.
  void prepare() {
    const uint32_t word = phase_.load(platform::memory_order_acquire);
    if (phase_of(word) == Phase::Measure && window_of(word) != window_) {
      stats_ = WorkerStats(W::kTypeNames.size());
      measuring_ = true;
      window_ = window_of(word);
      window_start_ = platform::cycles();
    }
    w_.timing = until_timed_ == 0;
    until_timed_ = until_timed_ + 1 == cfg_.time_sample ? 0 : until_timed_ + 1;
  }
  void declare(Txn<CC>& txn) {
    if constexpr (CC::kTraits.declares_partitions) {
      txn.timed(TimeCat::CcManager, [&] {
        workload_.partitions_of(queries_, query_, txn.partitions());
        return 0;
      });
    }
  }
  Rc body(Txn<CC>& txn) { return workload_.run(txn, queries_, query_, sink_); }
  void aborted(uint64_t start, uint64_t rolled_back) {
    if (!measuring_) return;
    stats_[TimeCat::Abort] += rolled_back - start;
    stats_.types[type_][Counter::CcAborts]++;
    stats_.types[type_].aborts_by_cause[static_cast<std::size_t>(txn_.abort_cause())]++;
  }
  // --abort-buffer: the transaction waits out its penalty parked.
  bool park(uint64_t penalty_ns, uint64_t rolled_back, uint32_t aborts) {
    if (cfg_.abort_buffer == 0) return false;
    parked_.push_back({query_, rolled_back + static_cast<uint64_t>(static_cast<double>(penalty_ns) * cycles_per_ns_),
                       parking_first_start_, aborts + 1});
    return true;
  }
  void backed_off(uint64_t rolled_back) {
    if (measuring_) stats_[TimeCat::Backoff] += platform::cycles() - rolled_back;
  }
  bool stop() const { return phase_of(phase_.load(platform::memory_order_relaxed)) == Phase::Done; }

 private:
  // --abort-buffer: aborted transactions waiting out their penalty while
  // the worker runs others (DBx1000's abort buffer), oldest first.
  struct Parked {
    std::size_t query;
    uint64_t ready;        // cycles: when its penalty is over
    uint64_t first_start;  // cycles: its first attempt began
    uint32_t aborts;
  };

  // A parked transaction whose penalty is over goes first, then a new one
  // while the buffer has room; with the buffer full, the worker waits for
  // the parked one that is ready first. True when it took a parked one.
  bool resume_parked(uint64_t& first_start, uint32_t& first_aborts) {
    if (parked_.empty()) return false;
    const uint64_t now = platform::cycles();
    auto it = std::find_if(parked_.begin(), parked_.end(), [&](const Parked& p) { return p.ready <= now; });
    if (it == parked_.end() && parked_.size() >= cfg_.abort_buffer) {
      it = std::min_element(parked_.begin(), parked_.end(),
                            [](const Parked& a, const Parked& b) { return a.ready < b.ready; });
      platform::pause_for_ns(static_cast<uint64_t>(static_cast<double>(it->ready - now) / cycles_per_ns_));
      if (measuring_) stats_[TimeCat::Backoff] += platform::cycles() - now;
    }
    if (it == parked_.end()) return false;
    query_ = it->query;
    first_start = it->first_start;
    first_aborts = it->aborts;
    parked_.erase(it);
    return true;
  }

  // A commit or a logical abort: the attempt's statistics, and a commit's
  // record handed to the log.
  void ended(const Attempts& a, uint64_t first_start) {
    if (measuring_) {
      const uint64_t took = a.end - a.start;
      for (std::size_t c = 0; c < kTimeCats; c++) stats_.cycles[c] += w_.attempt[c];
      // A logical abort did the work the transaction asked for: useful.
      const uint64_t useful = took - std::min(took, w_.charged);
      // The attempt's time outside waits and logging, which are timed in every attempt.
      const uint64_t always_timed =
          w_.attempt[static_cast<std::size_t>(TimeCat::Wait)] + w_.attempt[static_cast<std::size_t>(TimeCat::Log)];
      const uint64_t span = took - std::min(took, always_timed);
      if (w_.timing) {
        stats_[TimeCat::Useful] += useful;
        for (std::size_t c = 0; c < kTimeCats; c++) {
          if (sampled_category(static_cast<TimeCat>(c))) stats_.timed[c] += w_.attempt[c];
        }
        stats_.timed[static_cast<std::size_t>(TimeCat::Useful)] += useful;
        stats_.timed_span += span;
        stats_.timed_attempts++;
      } else {
        stats_.untimed_span += span;  // finish() splits it as the timed attempts' time splits
      }
      TypeStats& ts = stats_.types[type_];
      if (a.rc == Rc::Ok) {
        ts[Counter::Commits]++;
        if (w_.log == nullptr) {
          ts[Counter::Acknowledged]++;
          ts.latency.record(static_cast<uint64_t>(static_cast<double>(a.end - first_start) / cycles_per_ns_));
        }
      } else {
        ts[Counter::LogicalAborts]++;
      }
    }
    if (a.rc == Rc::Ok && w_.log != nullptr) {
      w_.log->committed(
          {txn_.commit_epoch(), txn_.logged() ? txn_.commit_id().value : 0, first_start, type_, measuring_, window_});
    }
  }

  const Config& cfg_;
  const W& workload_;
  const typename W::Queries& queries_;
  Worker& w_;
  Txn<CC> txn_;
  const platform::Atomic<uint32_t>& phase_;
  const platform::Atomic<uint32_t>& boundaries_;
  std::vector<WorkerStats>& snapshots_;
  platform::Atomic<uint64_t>* published_;
  const bool yield_after_abort_;
  const bool sampling_ = cfg_.sample_interval() > 0;
  WorkerStats stats_;
  const double cycles_per_ns_;
  bool measuring_ = false;
  uint64_t window_start_ = 0;
  uint32_t window_ = 0;  // the number of the window the statistics are of
  uint64_t sink_ = 0;    // keeps reads from being optimised away
  uint32_t until_timed_ = 0;
  std::vector<Parked> parked_;
  std::size_t next_ = 0;
  std::size_t query_ = 0;  // the transaction being run: its query and type
  uint8_t type_ = 0;
  uint64_t parking_first_start_ = 0;
};

// One worker's whole run: a Runner's (above).
template <class CC, class W, class MarkReady>
WorkerStats run_worker(const Config& cfg, CC& cc, const W& workload, const typename W::Queries& queries, Worker& w,
                       RowLayout layout, const platform::Atomic<uint32_t>& phase,
                       const platform::Atomic<uint32_t>& boundaries, std::vector<WorkerStats>& snapshots,
                       platform::Atomic<uint64_t>* published, bool yield_after_abort, MarkReady&& mark_ready) {
  Runner<CC, W> runner(cfg, cc, workload, queries, w, layout, phase, boundaries, snapshots, published,
                       yield_after_abort);
  return runner.run(mark_ready);
}

}  // namespace abyss
