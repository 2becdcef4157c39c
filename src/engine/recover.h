#pragma once
// Durability's two ends in the engine (docs/durability.md): what a run
// checks and writes before it logs, and `abyss recover`, which rebuilds the
// database a log directory describes.
#include <cstdint>
#include <string>

#include "common/config.h"

namespace abyss {

// Why the run's --log flags do not go together, or do not suit this build;
// empty when they do.
std::string check_log(const Config& cfg);

// The manifest of a log directory: what recovery needs to rebuild the load
// (every knob of the run as flags) and the journals' layout.
std::string log_manifest(const Config& cfg);

struct RecoverOptions {
  std::string dir;            // the log directory
  std::string dump_dir;       // empty: no dump; else as `run --dump`
  std::string versions_path;  // empty: none; else "table,key,writer,deleted" per replayed row
  std::string json_path;      // empty: none; else the result as JSON
  uint32_t threads = 0;       // replay threads; 0: one per journal segment, at most the cores
};

struct RecoverResult {
  std::string workload;
  std::string cc;
  uint32_t journals = 0;   // journal segments found
  std::string checkpoint;  // the checkpoint in place; empty: none
  uint64_t checkpoint_rows = 0;
  uint64_t checkpoint_bytes = 0;
  uint64_t replay_from = 0;  // the checkpoint's: older records are in it
  uint64_t durable_epoch = 0;
  uint64_t journal_bytes = 0;      // read
  uint64_t records = 0;            // read and checked
  uint64_t records_applied = 0;    // of epochs up to the durable one
  uint64_t records_beyond = 0;     // of later epochs: never acknowledged, not applied
  uint64_t records_covered = 0;    // of epochs before replay_from: the checkpoint holds them
  uint64_t writes_applied = 0;     // rows that took a write's version
  uint64_t writes_superseded = 0;  // writes a later version of the row had already replaced
  uint32_t torn_journals = 0;      // journals that end in a record a crash cut off
  std::string torn_note;           // the first such journal and what was cut
  double load_seconds = 0;         // rebuilding the load
  double replay_seconds = 0;       // reading, checking and applying the journals
  double seconds() const { return load_seconds + replay_seconds; }
};

// Why `options` cannot be followed (no such directory, an output path that
// cannot be written), before any work; empty when they can.
std::string check_recover_options(const RecoverOptions& options);

// Rebuilds the database of the log directory `options.dir`: its load, then
// every record of an epoch up to the durable one, each row taking the
// version with the highest commit id. Throws std::invalid_argument for a
// directory that is not a log directory or a journal that fails its checks
// (what, where, and that recovery stopped there), std::runtime_error when
// an output cannot be written.
RecoverResult recover(const RecoverOptions& options);

}  // namespace abyss
