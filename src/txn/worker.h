#pragma once
// What one worker owns: its random stream, arenas, insert cursors, timestamp
// batch, the current attempt's time breakdown and its history buffer. Nothing
// here is shared with other workers.
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "common/arena.h"
#include "common/types.h"
#include "common/zipf.h"
#include "log/logger.h"
#include "platform/atomic.h"
#include "platform/clock.h"
#include "stats/stats.h"
#include "storage/table.h"
#include "txn/epochs.h"
#include "txn/history.h"
#include "txn/ts_source.h"

namespace abyss {

struct alignas(platform::kCacheLine) Worker {
  Worker(WorkerId worker_id, uint32_t worker_count, uint64_t seed, std::size_t tables)
      : id(worker_id), count(worker_count), rng(seed * 0x9e3779b97f4a7c15ULL + worker_id.value), cursors(tables) {}

  WorkerId id;
  uint32_t count;
  Rng rng;
  Arena scratch{std::size_t{1} << 20, "a worker's private copies"};  // reset at every attempt
  // Index nodes of inserted rows and MVCC versions; lives with the database.
  Arena persistent{std::size_t{1} << 20, "a worker's index nodes and versions"};
  std::vector<RowCursor> cursors;  // one per table, for inserts
  // Row slots this worker made unreachable, oldest first, until the epochs
  // free them into their table's cursor (txn/epochs.h). Without `epochs`
  // (set by the engine) no slot is retired or used again.
  struct Retired {
    Table* table;
    Row* row;
    uint64_t epoch;
  };
  Epochs* epochs = nullptr;
  std::deque<Retired> retired;
  uint32_t begins_since_advance = 0;
  TsLocal ts_local;
  TsSource* ts = nullptr;
  std::unique_ptr<HistoryWriter> history;  // null unless --history
  DeletedKeys* deleted_keys = nullptr;     // with --history: the workers' shared record of deletes (null: none kept)
  bool prefetch = false;                   // --prefetch: Txn::prefetch fetches ahead
  bool bypass_read_only = true;            // --read-only-tables bypass: reads skip the scheme
  bool read_copy = false;                  // --read-copy on: an optimistic read_with() copies the row
  bool phantom_protection = true;          // --phantom-protection: scans read, and inserts write, next keys

  // Cycles charged to each category during the current attempt, and their sum:
  // a timed section subtracts what nested sections charged (see Txn::timed).
  TimeArray attempt{};
  uint64_t charged = 0;
  // Whether this attempt times its sampled sections (--time-sample; the
  // runner decides per attempt, stats.h sampled_category).
  bool timing = true;
  uint64_t commits = 0;  // for unique commit ids
  uint64_t sink = 0;     // what the workload read, so reads are not optimised away

  // The clock for a sampled section: the cycle counter when this attempt is
  // timed, else 0, so the section charges nothing and reads no clock.
  uint64_t clock() const { return timing ? platform::cycles() : 0; }
  void charge(TimeCat c, uint64_t cyc) {
    attempt[static_cast<std::size_t>(c)] += cyc;
    charged += cyc;
  }
  void reset_attempt() {
    attempt.fill(0);
    charged = 0;
  }
  // The platform's source hands out raw integers; the engine, Timestamps.
  Timestamp allocate_ts() {
    const uint64_t t0 = clock();
    const Timestamp v{ts->allocate(id.value, ts_local)};
    charge(TimeCat::TsAlloc, clock() - t0);
    return v;
  }
  // Unique among all workers' commits, never 0 (0 is the load).
  TxnId next_commit_id() { return TxnId{++commits * count + id.value}; }

  log::WorkerLog* log = nullptr;  // null with --log off
  uint64_t last_commit_id = 0;    // with a log: the last one (Txn::ordered_commit_id)
};

}  // namespace abyss
