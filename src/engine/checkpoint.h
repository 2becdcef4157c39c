#pragma once
// Checkpoints of a logging run (docs/durability.md, "Checkpoints"): every
// table's live rows with their commit ids, written while the workers run,
// then the journal segments the checkpoint covers removed.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "common/config.h"
#include "log/logger.h"
#include "storage/database.h"
#include "txn/epochs.h"

namespace abyss {

struct CheckpointTotals {
  uint64_t checkpoints = 0;  // put in place
  uint64_t rows = 0;
  uint64_t bytes = 0;
  double seconds = 0;  // writing them, waiting for the durable epoch included
};

// What a checkpoint file holds.
struct CheckpointFile {
  uint64_t rows = 0;
  uint64_t bytes = 0;
};

// Writes checkpoint `number` to `path` and syncs it: every live row of
// `db`, in records of epoch `from` (the epoch the journals are replayed
// from over it). With `epochs`, the walk of each table holds `slot` there,
// so no row it reaches is reused under it. Throws std::runtime_error when
// the file cannot be written.
CheckpointFile write_checkpoint(const Database& db, const std::string& path, uint64_t number, uint64_t from,
                                Epochs* epochs, uint32_t slot);

class Checkpointer final {
 public:
  // `slot` is the checkpointer's own slot in `epochs`, which keeps the rows
  // it reads from being reused under it.
  Checkpointer(log::Logger& logger, const Database& db, Epochs& epochs, uint32_t slot)
      : logger_(logger), db_(db), epochs_(epochs), slot_(slot) {}

  // Writes checkpoint `number`, waits until the durable epoch covers every
  // version it copied, then puts it in place (the `checkpoint` file names
  // it), removes the journal segments and the checkpoint it replaces.
  // Returns false, with nothing put in place, when `stop()` turns true
  // while it waits. Throws std::runtime_error when a file cannot be written.
  bool take(uint64_t number, const std::function<bool()>& stop);

  const CheckpointTotals& totals() const { return totals_; }

 private:
  log::Logger& logger_;
  const Database& db_;
  Epochs& epochs_;
  uint32_t slot_;
  CheckpointTotals totals_;
};

// Takes a checkpoint every `every_ms`, numbered from `first`, until `done()`
// turns true (the checkpoint thread of a run or a
// served store). Returns the error that stopped it, or empty.
std::string take_checkpoints(Checkpointer& checkpointer, uint64_t first, uint32_t every_ms,
                             const std::function<bool()>& done);

// The log of a run or a served store, open before its first commit.
struct OpenLog {
  std::unique_ptr<log::Logger> logger;
  uint64_t first_checkpoint = 1;  // the number the first checkpoint takes
};
// Opens `cfg`'s log for `workers` workers (docs/durability.md). A database
// recovered from the same directory (`recovered_checkpoint` its checkpoint's
// number, `recovered_epoch` its durable epoch) is first written there as a
// base checkpoint, so a crash at any step leaves it recoverable. Throws
// std::runtime_error when a file cannot be written.
OpenLog open_log(const Config& cfg, const Database& db, uint32_t workers, bool recovered, uint64_t recovered_checkpoint,
                 uint64_t recovered_epoch);

}  // namespace abyss
