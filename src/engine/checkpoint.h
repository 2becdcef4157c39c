#pragma once
// Checkpoints of a logging run (docs/durability.md, "Checkpoints"): every
// table's live rows with their commit ids, written while the workers run,
// then the journal segments the checkpoint covers removed.
#include <cstdint>
#include <functional>
#include <string>

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

}  // namespace abyss
