#pragma once
// Durability's two ends in the engine (docs/durability.md): what a run
// checks and writes before it logs, and `abyss recover`, which rebuilds the
// database a log directory describes.
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "common/arena.h"
#include "common/config.h"
#include "common/knob.h"

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
  uint32_t threads = 0;       // replay threads; 0: one per journal, at most the cores
  // Damage to a journal's durable part drops the rest of that journal,
  // said in the result, instead of stopping recovery.
  bool salvage = false;
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
  // Per journal, where its durable part ends: the segment's file name and
  // the bytes of it (docs/durability.md, "The epoch file").
  std::vector<std::pair<std::string, uint64_t>> durable_ends;
  uint64_t journal_bytes = 0;      // read
  uint64_t records = 0;            // read and checked
  uint64_t records_applied = 0;    // of epochs up to the durable one
  uint64_t records_beyond = 0;     // of later epochs: never acknowledged, not applied
  uint64_t records_covered = 0;    // of epochs before replay_from: the checkpoint holds them
  uint64_t writes_applied = 0;     // rows that took a write's version
  uint64_t writes_superseded = 0;  // writes a later version of the row had already replaced
  uint64_t max_commit_id = 0;      // the highest commit id in the checkpoint and the journals
  uint32_t torn_journals = 0;      // journals that end in a record a crash cut off
  std::string torn_note;           // the first such journal and what was cut
  std::string epoch_note;          // a damaged copy of the epoch file, the other one used
  uint32_t salvaged_journals = 0;  // --salvage: journals damaged where they were durable, cut there
  std::string salvage_note;        // the first such journal, the damage and what was dropped
  uint64_t salvaged_bytes_dropped = 0;
  double load_seconds = 0;    // rebuilding the load
  double replay_seconds = 0;  // reading, checking and applying the journals
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

// ---- abyss run --recover ----------------------------------------------------

class Database;

// A recovered run goes on with the workload of the log in `cfg.log.dir`:
// sets the workload, the seed and every knob of that workload from the
// log's manifest, so the run's load is the logged run's. A knob the command
// line gave (`given`) must have the logged value. Returns the reason it
// cannot (no readable manifest, a given value that differs), else empty.
std::string adopt_logged_workload(Config& cfg, const std::function<bool(const Knob&)>& given);

// What recover_into rebuilt: the numbers `abyss recover` prints, the
// number of the checkpoint it read (0: none), and the arenas that hold the
// index nodes it added, which must live as long as the database.
struct Recovered {
  RecoverResult result;
  uint64_t checkpoint_number = 0;
  std::vector<Arena> nodes;
};

// Recovers the log directory `dir` into `db`, which holds the load its
// manifest describes (adopt_logged_workload): the checkpoint, then every
// durable record, each row at its newest version; removed rows out of the
// ordered indexes, as a run leaves them. Throws as recover() does.
Recovered recover_into(Database& db, void (*init_row)(void*), const std::string& dir, uint32_t threads);

}  // namespace abyss
