#include "engine/engine.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cc/registry.h"
#include "cc/schemes.h"
#include "engine/knobs.h"
#include "engine/recover.h"
#include "engine/run_context.h"
#include "engine/runner.h"
#include "platform/clock.h"
#include "platform/latch.h"
#include "platform/machine.h"
#include "platform/process.h"
#include "platform/thread.h"
#include "storage/footprint.h"
#include "txn/access.h"
#include "txn/access_index.h"
#include "workload/registry.h"

namespace abyss {

namespace {

// How often the coordinator looks whether every worker is ready: short, so a
// simulated run's workers do not run long before the warm-up starts.
constexpr uint64_t kReadyPollNs = 10'000;
// How often the thread that keeps time looks for a failed worker: a run
// whose worker failed (its log's disk full, say) ends within this, not at the
// end of its window.
constexpr uint64_t kFailurePollNs = 100'000'000;
// Runs whose window is at least this long show a progress line on a terminal.
constexpr double kProgressAfterS = 2;
// The fewest commits a window sized by rule holds, whatever the workers: its
// halves' counts then differ by chance by a few percent at most.
constexpr uint64_t kSteadyLeastCommits = 1000;

// What sampling holds: a copy of every worker's statistics per interval.
uint64_t sample_bytes(const Config& cfg, std::size_t types) {
  const double interval = cfg.sample_interval();
  if (interval <= 0) return 0;
  const double intervals = std::ceil(cfg.duration_s / interval);
  return static_cast<uint64_t>(
      std::min(intervals * cfg.threads * static_cast<double>(types * sizeof(TypeStats)), 1e19));
}

// The window's intervals from each worker's snapshots at the interval
// boundaries (run_worker) and its final statistics: interval k is snapshot k
// less snapshot k-1, summed over workers. A worker that did not mark a
// boundary (it was inside one transaction until the window closed) counts
// its work in the last interval it reached.
std::vector<Sample> samples_of(const RunResult& r, const std::vector<std::vector<WorkerStats>>& snapshots,
                               const std::vector<uint64_t>& boundary_ns, std::size_t types) {
  std::vector<Sample> out(boundary_ns.size() + 1, Sample{0, 0, WorkerStats(types), 0});
  for (std::size_t k = 0; k < out.size(); k++) {
    out[k].start_s = k == 0 ? 0 : static_cast<double>(boundary_ns[k - 1]) / 1e9;
    out[k].end_s = k < boundary_ns.size() ? static_cast<double>(boundary_ns[k]) / 1e9 : r.seconds;
    if (k < r.rss_samples.size()) out[k].rss_bytes = r.rss_samples[k].second;
  }
  for (std::size_t w = 0; w < snapshots.size(); w++) {
    const WorkerStats zero(types);
    auto at = [&](std::size_t k) -> const WorkerStats& {
      return k < snapshots[w].size() ? snapshots[w][k] : r.workers[w];
    };
    for (std::size_t k = 0; k < out.size(); k++) {
      WorkerStats d = at(k);
      d.subtract(k == 0 ? zero : at(k - 1));
      out[k].stats.merge(d);
    }
  }
  for (Sample& s : out) {
    s.stats[TimeCat::Other] = 0;
    s.stats.finish();
  }
  return out;
}

template <class CC, class W>
RunResult run_with(const Config& given) {
  RunContext<CC> ctx(given, W::partitions(given));
  const Config& cfg = ctx.config();
  RunResult result;
  result.config = cfg;
  const platform::MachineInfo machine = platform::machine_info();
  result.platform = machine.platform;
  result.topology = machine.topology;
  result.topology_file = machine.topology_file;
  result.ghz = machine.ghz;
  result.cores = machine.cores;
  // A simulated core runs one worker and nothing else: the host's load is
  // not the simulated machine's.
  result.load_average = platform::kSimulated ? 0 : platform::load_average();
  result.started = platform::utc_now();
  const bool oversubscribed = result.oversubscribed();
  result.type_names.assign(W::kTypeNames.begin(), W::kTypeNames.end());
  result.metrics = W::metrics();

  W workload(cfg);
  result.load_seconds = ctx.load(workload);
  if (const RecoverResult* rr = ctx.recover()) {
    workload.resume(ctx.db());
    result.recovery = {rr->durable_epoch,   rr->records_applied, rr->writes_applied,
                       rr->checkpoint_rows, rr->journal_bytes,   rr->replay_seconds};
  }
  result.rss_after_load = platform::resident_bytes();

  // What the workers share is on the heap (txn/worker_set.h, and RunState
  // below), never on this thread's stack: the simulated machine numbers cache
  // lines by first touch, and a stack's offset within its page differs from
  // process to process (docs/many-core.md).
  WorkerSet& workers = ctx.start_workers();
  std::vector<typename W::Queries> queries;
  queries.reserve(cfg.threads);
  for (uint32_t i = 0; i < cfg.threads; i++) {
    queries.push_back(workload.generate(i, cfg.queries_per_worker, workers[i].rng));
  }
  ctx.open_log();
  std::string checkpoint_error;
  CC& cc = ctx.start_cc();
  const uint64_t host_start = platform::host_ns();
  struct RunState {
    alignas(platform::kCacheLine) platform::Atomic<uint32_t> phase{static_cast<uint32_t>(Phase::Warmup)};
    alignas(platform::kCacheLine) platform::Atomic<uint32_t> ready{0};
    alignas(platform::kCacheLine) platform::Atomic<uint32_t> failed{0};      // workers that threw
    alignas(platform::kCacheLine) platform::Atomic<uint32_t> boundaries{0};  // sample intervals ended
  };
  auto state = std::make_unique<RunState>();
  platform::Atomic<uint32_t>& phase = state->phase;
  platform::Atomic<uint32_t>& ready = state->ready;
  // Sleeps `ns`, or less if a worker fails meanwhile: false then.
  auto sleep_unless_failed = [&](uint64_t ns) {
    for (uint64_t slept = 0; slept < ns;) {
      if (state->failed.load(platform::memory_order_acquire) > 0) return false;
      const uint64_t nap = std::min(kFailurePollNs, ns - slept);
      platform::sleep_ns(nap);
      slept += nap;
    }
    return state->failed.load(platform::memory_order_acquire) == 0;
  };
  result.workers.assign(cfg.threads, WorkerStats(W::kTypeNames.size()));
  std::vector<std::string> errors(cfg.threads);
  std::vector<std::vector<WorkerStats>> snapshots(cfg.threads);
  std::vector<uint64_t> boundary_ns;  // when each sample interval but the last ended, from the window's start
  // A progress line on a terminal, for runs long enough to want one (not on
  // simulated cores, whose host time is not the run's): each worker
  // publishes its commits on a line of its own.
  const bool show_progress = !platform::kSimulated && cfg.steady_commits == 0 && cfg.duration_s >= kProgressAfterS &&
                             platform::stderr_is_terminal();
  struct alignas(platform::kCacheLine) Published {
    platform::Atomic<uint64_t> commits{0};
  };
  auto published = std::make_unique<Published[]>(cfg.threads);
  auto published_commits = [&] {
    uint64_t n = 0;
    for (uint32_t w = 0; w < cfg.threads; w++) n += published[w].commits.load(platform::memory_order_relaxed);
    return n;
  };
  const double interval_s = cfg.sample_interval();
  uint64_t window_start = 0;
  uint64_t window_end = 0;
  // The window's commits: at its start, half-way and at its end (every
  // worker's count, warm-up included, read by the thread that keeps time).
  uint64_t commits_at_start = 0;
  uint64_t commits_at_half = 0;
  uint64_t commits_at_end = 0;
  // (The counts are read before the clock: on many simulated cores reading
  // them takes virtual time, which must not count as part of the window.)
  auto open_window = [&](uint32_t number) {
    commits_at_start = published_commits();
    window_start = platform::wall_ns();
    phase.store(phase_word(Phase::Measure, number), platform::memory_order_release);
  };
  // Whether the window's halves agree within the tolerance; sets the ratio.
  auto halves_agree = [&] {
    const double a = static_cast<double>(commits_at_half - commits_at_start);
    const double b = static_cast<double>(commits_at_end - commits_at_half);
    result.window.halves_ratio = a > 0 ? b / a : 0;
    return a + b > 0 && std::abs(b - a) <= cfg.steady_tolerance * std::max(a, b);
  };
  // One window of --duration, slept in steps of a sample interval (at most a
  // second when not sampling), sampling memory and marking each interval's
  // end. Answers whether every worker is still going.
  auto keep_fixed_window = [&](bool going) {
    open_window(1);
    const auto window_ns = static_cast<uint64_t>(cfg.duration_s * 1e9);
    const uint64_t half_ns = window_ns / 2;
    bool halved = false;
    const uint64_t step_ns =
        interval_s > 0 ? std::max<uint64_t>(1, static_cast<uint64_t>(interval_s * 1e9)) : 1'000'000'000;
    uint64_t shown_commits = commits_at_start;
    uint64_t shown_at = 0;
    for (uint64_t slept = 0; going && slept < window_ns;) {
      const uint64_t step = std::min<uint64_t>(step_ns, window_ns - slept);
      // Asleep a second at most at a time while a progress line is shown,
      // and woken half-way through the window to count its first half.
      for (uint64_t part = 0; going && part < step;) {
        const uint64_t full = show_progress ? std::min<uint64_t>(1'000'000'000, step - part) : step - part;
        const uint64_t nap =
            halved ? full : std::min(full, std::max<uint64_t>(1, half_ns - std::min(half_ns, slept + part)));
        going = sleep_unless_failed(nap);
        part += nap;
        if (!halved && slept + part >= half_ns) {
          commits_at_half = published_commits();
          halved = true;
        }
        if (show_progress && nap == full) {
          const uint64_t now = platform::wall_ns() - window_start;
          const uint64_t commits = published_commits();
          char line[128];
          std::snprintf(
              line, sizeof line, "abyss run: %.1f / %g s, %.0f txn/s", static_cast<double>(now) / 1e9, cfg.duration_s,
              now > shown_at ? static_cast<double>(commits - shown_commits) * 1e9 / static_cast<double>(now - shown_at)
                             : 0.0);
          platform::status_line(line);
          shown_commits = commits;
          shown_at = now;
        }
      }
      slept += step;
      result.rss_samples.emplace_back(static_cast<double>(slept) / 1e9, platform::resident_bytes());
      if (interval_s > 0 && slept < window_ns) {
        boundary_ns.push_back(platform::wall_ns() - window_start);
        state->boundaries.store(static_cast<uint32_t>(boundary_ns.size()), platform::memory_order_release);
      }
    }
    commits_at_end = published_commits();
    window_end = platform::wall_ns();
    result.window.steady = halves_agree();
    return going;
  };
  // --steady-commits: windows of at least --duration, each long enough for
  // the commits asked for at the rate the last one measured, until one holds
  // them and its halves agree; what came before it is warm-up. The last
  // window stands, marked unsteady, when the next would end past
  // --max-duration. Answers whether every worker is still going.
  auto keep_steady_window = [&](bool going, uint64_t ready_at, uint32_t& number) {
    result.window.rule = true;
    const uint64_t need = std::max<uint64_t>(uint64_t{cfg.steady_commits} * cfg.threads, kSteadyLeastCommits);
    const auto shortest = std::max<uint64_t>(2, static_cast<uint64_t>(cfg.duration_s * 1e9));
    const auto cap = static_cast<uint64_t>(cfg.max_duration() * 1e9);
    uint64_t length = shortest;
    // The commit rate of the interval before the window: the warm-up's for
    // the first (from the end of set-up), then the last window's. A window
    // is steady only if its rate agrees with it too, so a throughput that
    // still drifts is not taken for steady because its halves are close.
    double previous_rate = 0;
    for (number = 1; going; number++) {
      open_window(number);
      if (number == 1 && window_start > ready_at) {
        previous_rate = static_cast<double>(commits_at_start) / static_cast<double>(window_start - ready_at);
      }
      going = sleep_unless_failed(length / 2);
      commits_at_half = published_commits();
      going = going && sleep_unless_failed(length - length / 2);
      commits_at_end = published_commits();
      window_end = platform::wall_ns();
      const uint64_t commits = commits_at_end - commits_at_start;
      const bool agree = halves_agree();
      const double rate =
          static_cast<double>(commits) / static_cast<double>(std::max<uint64_t>(1, window_end - window_start));
      const double hi = std::max(rate, previous_rate);
      const bool holds = hi > 0 && std::abs(rate - previous_rate) <= cfg.steady_tolerance * hi;
      result.window.previous_ratio = previous_rate > 0 ? rate / previous_rate : 0;
      previous_rate = rate;
      result.window.windows = number;
      result.window.steady = agree && holds && commits >= need;
      if (result.window.steady || !going) break;
      // Long enough for `need` at this window's rate, with a quarter to spare.
      const double wanted =
          commits > 0 ? 1.25 * static_cast<double>(length) * static_cast<double>(need) / static_cast<double>(commits)
                      : 2.0 * static_cast<double>(length);
      uint64_t next = std::max(length, static_cast<uint64_t>(std::min(wanted, 1e18)));
      const uint64_t used = window_end - ready_at;
      if (used >= cap || cap - used < shortest) break;
      next = std::min(next, cap - used);
      length = next;
    }
    result.rss_samples.emplace_back(static_cast<double>(window_end - window_start) / 1e9, platform::resident_bytes());
    return going;
  };
  // Threads 0..threads-1 are workers; the next one keeps time, and the one
  // after it, with --checkpoint-every-ms, takes checkpoints.
  platform::run_threads(ctx.threads(1), cfg.pin, [&](uint32_t i) {
    if (ctx.is_checkpointer(i, 1)) {
      auto done = [&] { return phase_of(phase.load(platform::memory_order_acquire)) == Phase::Done; };
      while (ready.load(platform::memory_order_acquire) < cfg.threads) platform::sleep_ns(kReadyPollNs);
      checkpoint_error = ctx.take_checkpoints(done);
      return;
    }
    if (i == cfg.threads) {
      // Starting threads and setting up workers is not part of the run: the
      // clock starts once every worker is about to run (or has failed).
      while (ready.load(platform::memory_order_acquire) < cfg.threads) platform::sleep_ns(kReadyPollNs);
      const uint64_t ready_at = platform::wall_ns();
      bool going = sleep_unless_failed(static_cast<uint64_t>(cfg.warmup_s * 1e9));
      uint32_t window = 1;
      if (cfg.steady_commits == 0) {
        going = keep_fixed_window(going);
      } else {
        going = keep_steady_window(going, ready_at, window);
      }
      phase.store(phase_word(Phase::Done, window), platform::memory_order_release);
      result.window.warmup_seconds = static_cast<double>(window_start - ready_at) / 1e9;
      if (show_progress) platform::status_line("");
      return;
    }
    bool counted = false;
    try {
      result.workers[i] = run_worker(cfg, cc, workload, queries[i], workers[i], ctx.layout(), phase, state->boundaries,
                                     snapshots[i], &published[i].commits, oversubscribed, [&] {
                                       ready.fetch_add(1, platform::memory_order_release);
                                       counted = true;
                                     });
      ctx.worker_finished(i);
    } catch (const std::exception& e) {
      errors[i] = e.what();
      state->failed.fetch_add(1, platform::memory_order_release);
      // A worker that failed before it counted itself never keeps the clock from starting.
      if (!counted) ready.fetch_add(1, platform::memory_order_release);
    }
    ctx.worker_left(i);
  });
  ctx.throw_if_log_failed();
  if (!checkpoint_error.empty()) throw std::runtime_error(checkpoint_error);
  for (const auto& e : errors) {
    if (!e.empty()) throw std::runtime_error("worker failed: " + e);
  }
  result.log = ctx.close_log();
  result.host_seconds = static_cast<double>(platform::host_ns() - host_start) / 1e9;
  result.machine_counters = platform::machine_counters();
  result.seconds = static_cast<double>(window_end - window_start) / 1e9;
  // A worker that timed none of its attempts (fewer than --time-sample, as
  // on many simulated cores) splits its time as every worker's timed
  // attempts did.
  WorkerStats pooled(W::kTypeNames.size());
  for (const auto& w : result.workers) pooled.merge(w);
  for (auto& w : result.workers) {
    if (w.timed_span == 0) w.finish(&pooled);
  }
  result.total = WorkerStats(W::kTypeNames.size());
  for (const auto& w : result.workers) result.total.merge(w);
  result.rss_at_end = platform::resident_bytes();
  result.rows_reused = workers.rows_reused();
  for (const auto& t : ctx.db().tables()) result.table_bytes += t->reserved_bytes();
  if (interval_s > 0) result.samples = samples_of(result, snapshots, boundary_ns, W::kTypeNames.size());
  if constexpr (requires { workload.check(); }) result.checks = workload.check();

  ctx.finish();
  return result;
}

}  // namespace

uint64_t estimate_bytes(const Config& cfg) {
  return cc::Registry::dispatch(cfg.cc, [&]<class CC>() -> uint64_t {
    using Meta = typename CC::RowMeta;
    const uint32_t loaders = platform::hardware_cores();
    return WorkloadRegistry::dispatch(cfg.workload, [&]<class W>() -> uint64_t {
      // Each worker's access set, reserved whole, and its index by row.
      const uint64_t accesses = access_capacity<W>(cfg);
      const uint64_t access_set = accesses * sizeof(Access<CC>) + AccessIndex::max_bytes(accesses);
      return W::estimate_load_bytes(cfg, sizeof(Meta), alignof(Meta), loaders) +
             uint64_t{cfg.threads} * (W::estimate_worker_bytes(cfg, sizeof(Meta), alignof(Meta)) + access_set) +
             sample_bytes(cfg, W::kTypeNames.size());
    });
  });
}

std::string memory_shortfall(const Config& cfg) {
  return footprint::shortfall(estimate_bytes(cfg), platform::available_memory_bytes());
}

std::string oversubscription_note(const Config& cfg) {
  if (platform::kSimulated) return {};
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

std::string check_machine(const Config& cfg) {
  if (cfg.sim_cores > 0 && cfg.threads > cfg.sim_cores) {
    return "--threads " + std::to_string(cfg.threads) + " exceeds --sim-cores " + std::to_string(cfg.sim_cores) +
           ": a simulated core runs one worker";
  }
  // The simulated build runs on simulated cores even when none were asked
  // for (a test, the library): one per worker.
  const uint32_t cores = platform::kSimulated && cfg.sim_cores == 0 ? cfg.threads : cfg.sim_cores;
  if (auto err = platform::use_machine(cores, cfg.topology); !err.empty()) return err;
  if (cfg.ts_alloc.method == TsMethod::Hardware && !platform::has_hardware_counter()) {
    return "--ts-alloc hw is the simulated mesh chip's timestamp counter (Abyss §4.3): it needs --sim-cores N "
           "with --topology mesh";
  }
  return {};
}

std::string check_window(const Config& cfg) {
  if (cfg.steady_commits == 0) return {};
  if (cfg.sample_interval_s > 0) {
    return "--sample-interval takes samples of one window of --duration; a window sized by --steady-commits "
           "takes none (use --sample-interval 0 or auto)";
  }
  if (cfg.max_duration_s > 0 && cfg.max_duration_s < cfg.warmup_s + cfg.duration_s) {
    char line[200];
    std::snprintf(line, sizeof line, "--max-duration %g is shorter than --warmup %g and one window of --duration %g",
                  cfg.max_duration_s, cfg.warmup_s, cfg.duration_s);
    return line;
  }
  return {};
}

std::string check_isolation(const Config& cfg) {
  const cc::SchemeTraits& s = cc::scheme(cfg.cc);
  // A commit timestamp must be later than every timestamp taken before it,
  // or a reader could see half a commit (docs/schemes.md).
  const TsMethod m = cfg.ts_alloc.method;
  const bool unordered = m == TsMethod::Batch || m == TsMethod::Clock;
  if (s.commit_timestamps && unordered) {
    return "--cc " + std::string(s.name) + " with --ts-alloc " + cfg.ts_alloc.to_string() +
           ": it orders commits by timestamps that grow with time across workers; use atomic, mutex or hw";
  }
  if (cfg.isolation == Isolation::Serializable) return {};
  const std::string level(name_of(kIsolationNames, cfg.isolation));
  if (s.weaker_isolation) {
    if (unordered) {
      return "--isolation " + level + " with --ts-alloc " + cfg.ts_alloc.to_string() +
             ": the weaker levels order commits by timestamps that grow with time across workers; use atomic, "
             "mutex or hw";
    }
    return {};
  }
  const std::string head = "--isolation " + level + ": --cc " + std::string(s.name);
  if (s.family == cc::Family::None) {
    return head + " orders nothing, so it has no level to choose (it is the checker's negative control)";
  }
  return head +
         " offers serializable only: it keeps one version of each row, and abyss offers the weaker levels on "
         "schemes that keep versions, whose readers see a committed version beside a pending write (mvcc)";
}

RunResult run(const Config& cfg) {
  if (auto err = check_isolation(cfg); !err.empty()) throw std::invalid_argument(err);
  if (auto err = check_window(cfg); !err.empty()) throw std::invalid_argument(err);
  if (auto err = check_machine(cfg); !err.empty()) throw std::invalid_argument(err);
  if (auto err = check_log(cfg); !err.empty()) throw std::invalid_argument(err);
  if (auto err = check_power_loss(cfg); !err.empty()) throw std::invalid_argument(err);
  // The one place a scheme and a workload are picked: everything below is
  // instantiated for the pair, so no access branches on either.
  return cc::Registry::dispatch(cfg.cc, [&]<class CC>() {
    return WorkloadRegistry::dispatch(cfg.workload, [&]<class W>() { return run_with<CC, W>(cfg); });
  });
}

}  // namespace abyss
