#pragma once
// One database under one scheme, from its load to its teardown: what
// `abyss run`, `abyss serve` and `abyss recover` each set up the same way.
// In the order a caller goes through it:
//
//   RunContext<CC> ctx(cfg, W::partitions(cfg));  the config, the row layout, the empty database
//   ctx.load(workload)                            the tables, on every core
//   ctx.recover()                                 --recover: the log's durable commits over the load
//   ctx.start_workers()                           workers, timestamp source, epochs (txn/worker_set.h)
//   ctx.open_log()                                --log: journals and checkpointer, before any commit
//   ctx.start_cc()                                the scheme's shared state
//   run_threads(ctx.threads(helpers), ...)        workers, the caller's helper threads, the checkpointer
//   ctx.throw_if_log_failed(); ctx.close_log(); ctx.finish()
//
// `abyss recover` stops after the load. The context owns the config the
// workloads keep references into, so it is never moved or copied.
#include <cstdint>
#include <functional>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>

#include "common/config.h"
#include "engine/checkpoint.h"
#include "engine/recover.h"
#include "engine/result.h"
#include "log/logger.h"
#include "platform/clock.h"
#include "platform/power_loss.h"
#include "platform/thread.h"
#include "storage/database.h"
#include "txn/worker_set.h"

namespace abyss {

template <class CC>
class RunContext final {
  using RowMeta = typename CC::RowMeta;

 public:
  // `partitions`: what a scheme that locks partitions sizes its table by
  // (the workload's W::partitions).
  RunContext(const Config& given, uint32_t partitions)
      : cfg_(with_partitions(given, partitions)),
        layout_(RowLayout::for_meta(sizeof(RowMeta), alignof(RowMeta), cfg_.storage.align)),
        db_(layout_, cfg_.storage, &init_row) {}
  RunContext(const RunContext&) = delete;
  RunContext& operator=(const RunContext&) = delete;

  static void init_row(void* meta) { new (meta) RowMeta(); }

  const Config& config() const { return cfg_; }
  Database& db() { return db_; }
  RowLayout layout() const { return layout_; }

  // Loads the tables with `loader` (a workload, the served table) on every
  // core; answers the seconds it took.
  template <class Loader>
  double load(Loader& loader) {
    const uint64_t start = platform::wall_ns();
    loader.load(db_, platform::hardware_cores(), &init_row);
    return static_cast<double>(platform::wall_ns() - start) / 1e9;
  }

  // --recover: the load is the logged run's (adopt_logged_workload); its log
  // brings it to where that run's durable commits left it. Null without.
  const RecoverResult* recover() {
    if (!cfg_.log.recover) return nullptr;
    recovered_.emplace(recover_into(db_, &init_row, cfg_.log.dir, platform::hardware_cores()));
    return &recovered_->result;
  }

  // The workers, after the load and recovery (each keeps a cursor per
  // table: `tables`, or the database's); commit ids go on past a recovered
  // log's.
  WorkerSet& start_workers(std::size_t tables = 0) {
    workers_ = std::make_unique<WorkerSet>(cfg_, cfg_.threads, tables > 0 ? tables : db_.tables().size(),
                                           checkpoints() ? 1 : 0);
    if (recovered_) workers_->continue_commit_ids(recovered_->result.max_commit_id);
    return *workers_;
  }
  WorkerSet& workers() { return *workers_; }

  // --log (docs/durability.md): the files are written before any worker
  // commits, so a crash from here on leaves a directory recovery can read.
  // With --checkpoint-every-ms, the checkpointer holds the epochs' last slot.
  // With --power-loss-at, the directory is armed first, so the simulated
  // power loss can land anywhere from the log's creation on.
  void open_log() {
    if (cfg_.log.policy == LogPolicy::Off) return;
    if (cfg_.log.power_loss_at > 0 && cfg_.log.policy == LogPolicy::File) {
      if (auto err = platform::power_loss::arm(cfg_.log.dir, cfg_.log.power_loss_at, cfg_.seed); !err.empty()) {
        throw std::runtime_error("--power-loss-at: " + err);
      }
    }
    OpenLog log = recovered_ ? abyss::open_log(cfg_, db_, cfg_.threads, true, recovered_->checkpoint_number,
                                               recovered_->result.durable_epoch)
                             : abyss::open_log(cfg_, db_, cfg_.threads, false, 0, 0);
    logger_ = std::move(log.logger);
    first_checkpoint_ = log.first_checkpoint;
    workers_->attach(*logger_);
    log_start_ = platform::wall_ns();
    if (checkpoints()) checkpointer_ = std::make_unique<Checkpointer>(*logger_, db_, workers_->epochs(), cfg_.threads);
  }
  bool logs() const { return logger_ != nullptr; }

  CC& start_cc() {
    cc_ = std::make_unique<CC>(cfg_, cfg_.threads);
    return *cc_;
  }

  bool checkpoints() const { return cfg_.log.policy == LogPolicy::File && cfg_.log.checkpoint_every_ms > 0; }
  // Threads 0..threads-1 are the workers; then the caller's `helpers` (the
  // run's timekeeper, the server's acceptor); then, with checkpoints, the
  // checkpointer.
  uint32_t threads(uint32_t helpers) const { return cfg_.threads + helpers + (checkpoints() ? 1 : 0); }
  bool is_checkpointer(uint32_t thread, uint32_t helpers) const {
    return checkpoints() && thread == cfg_.threads + helpers;
  }
  // The checkpointer thread's work until `done`; an error line, or empty.
  std::string take_checkpoints(const std::function<bool()>& done) {
    return abyss::take_checkpoints(*checkpointer_, first_checkpoint_, cfg_.log.checkpoint_every_ms, done);
  }

  // A worker that ran to its end: what it logged goes to its journal.
  void worker_finished(uint32_t i) {
    if (logger_) logger_->worker(i).finish();
  }
  // A worker thread's end, failed or not: its epoch slot is idle, so the
  // others' epochs move on without it.
  void worker_left(uint32_t i) { workers_->leave(i); }
  // Once the worker threads are joined: no sync is left in flight, so
  // nothing the log's wakers reach is used after this.
  void log_syncs_ended() {
    if (logger_) logger_->wait_for_syncs();
  }

  // A journal that failed stopped every worker: its error, not theirs.
  void throw_if_log_failed() const {
    if (logger_ && logger_->failed()) throw std::runtime_error("the log failed: " + logger_->error());
  }
  // Closes the log (its last group made durable) and answers what it did.
  RunResult::Log close_log() {
    RunResult::Log out;
    if (!logger_) return out;
    if (auto err = logger_->close(); !err.empty()) throw std::runtime_error("the log failed: " + err);
    // A run that ended before its simulated power loss: what it wrote stays.
    (void)platform::power_loss::disarm();
    const log::LogTotals t = logger_->totals();
    out.records = t.records;
    out.bytes = t.bytes;
    out.flushes = t.flushes;
    out.fsyncs = t.fsyncs;
    out.durable_epoch = t.durable_epoch;
    out.seconds = static_cast<double>(platform::wall_ns() - log_start_) / 1e9;
    if (checkpointer_) {
      const CheckpointTotals& c = checkpointer_->totals();
      out.checkpoints = c.checkpoints;
      out.checkpoint_rows = c.rows;
      out.checkpoint_bytes = c.bytes;
      out.checkpoint_seconds = c.seconds;
    }
    return out;
  }
  // --history: the workers' parts merged; --dump: the tables as CSV.
  void finish() {
    if (auto err = workers_->merge_history(cfg_.history_path); !err.empty()) throw std::runtime_error(err);
    if (!cfg_.dump_dir.empty()) {
      if (auto err = db_.dump(cfg_.dump_dir); !err.empty()) throw std::runtime_error(err);
    }
  }

 private:
  static Config with_partitions(Config cfg, uint32_t partitions) {
    cfg.partitions = partitions;
    return cfg;
  }
  Config cfg_;
  RowLayout layout_;
  Database db_;
  std::optional<Recovered> recovered_;  // its arenas hold index nodes of db_'s rows
  std::unique_ptr<WorkerSet> workers_;
  std::unique_ptr<log::Logger> logger_;
  std::unique_ptr<Checkpointer> checkpointer_;  // refers to the logger, the database and the epochs
  std::unique_ptr<CC> cc_;
  uint64_t first_checkpoint_ = 1;
  uint64_t log_start_ = 0;
};

}  // namespace abyss
