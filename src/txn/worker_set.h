#pragma once
// The workers of one database and what they share: the timestamp source and
// the epochs of slot reclamation. `abyss run`, `abyss serve` and the
// embedding Store build their workers here, so a flag that acts within a
// transaction (--prefetch, --alloc, --read-copy, --read-only-tables,
// --phantom-protection, --history) reaches every one of them the same way.
//
// Each shared object is a heap block of its own: the simulated machine
// starts every block on a cache line (platform/sim/new.cc), so which of them
// share a line never depends on how they are declared here.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/config.h"
#include "common/types.h"
#include "log/logger.h"
#include "txn/epochs.h"
#include "txn/history.h"
#include "txn/ts_source.h"
#include "txn/worker.h"

namespace abyss {

class WorkerSet final {
 public:
  // `count` workers for `tables` tables (each keeps an insert cursor per
  // table); `extra_epoch_slots`: epochs slots after the workers' (the
  // checkpointer's). Draws nothing from a worker's random stream.
  WorkerSet(const Config& cfg, uint32_t count, std::size_t tables, uint32_t extra_epoch_slots = 0)
      : ts_(std::make_unique<TsSource>(cfg.ts_alloc)), epochs_(std::make_unique<Epochs>(count + extra_epoch_slots)) {
    workers_.reserve(count);
    for (uint32_t i = 0; i < count; i++) {
      auto& w = workers_.emplace_back(std::make_unique<Worker>(WorkerId{i}, count, cfg.seed, tables));
      w->ts = ts_.get();
      w->epochs = epochs_.get();
      w->prefetch = cfg.prefetch;
      w->phantom_protection = cfg.phantom_protection;
      w->bypass_read_only = cfg.read_only_tables == ReadOnlyTables::Bypass;
      w->read_copy = cfg.read_copy;
      if (cfg.alloc == AllocKind::Malloc) {
        w->scratch.use_system_allocator();
        w->persistent.use_system_allocator();
      }
      if (!cfg.history_path.empty()) {
        w->history = std::make_unique<HistoryWriter>(cfg.history_path + ".part" + std::to_string(i));
        w->deleted_keys = &deleted_keys_;
      }
    }
  }
  WorkerSet(const WorkerSet&) = delete;
  WorkerSet& operator=(const WorkerSet&) = delete;

  uint32_t size() const { return static_cast<uint32_t>(workers_.size()); }
  Worker& operator[](uint32_t i) { return *workers_[i]; }
  const Worker& operator[](uint32_t i) const { return *workers_[i]; }
  Epochs& epochs() { return *epochs_; }

  // Commit ids go on rising past a recovered log's, so each row's versions
  // stay ordered in the log a run writes over them.
  void continue_commit_ids(uint64_t max_commit_id) {
    for (auto& w : workers_) w->last_commit_id = max_commit_id;
  }
  void attach(log::Logger& logger) {
    for (uint32_t i = 0; i < size(); i++) workers_[i]->log = &logger.worker(i);
  }
  // Worker `i` runs no transaction now: the others' epochs move on without it.
  void leave(uint32_t i) { epochs_->leave(i); }

  // Rows whose slots were used again after their removal.
  uint64_t rows_reused() const {
    uint64_t n = 0;
    for (const auto& w : workers_) {
      for (const RowCursor& c : w->cursors) n += c.reused;
    }
    return n;
  }

  // With --history: closes every worker's part and merges them into `path`;
  // an error line, or empty.
  std::string merge_history(const std::string& path) {
    if (path.empty()) return {};
    std::vector<std::string> parts;
    parts.reserve(workers_.size());
    for (auto& w : workers_) parts.push_back(w->history->close());
    return HistoryWriter::merge(path, parts);
  }

 private:
  std::unique_ptr<TsSource> ts_;
  std::unique_ptr<Epochs> epochs_;
  std::vector<std::unique_ptr<Worker>> workers_;
  DeletedKeys deleted_keys_;  // with --history (the workers point at it)
};

}  // namespace abyss
