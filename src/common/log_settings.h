#pragma once
// How a run makes its commits durable (docs/durability.md): plain data, set
// by the knobs --log, --journal, --fsync, --group-commit-us, --log-dir,
// --power-loss-at.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace abyss {

// Where committed transactions' log records go: nowhere, a buffer in memory
// that is dropped (the cost of building and handing over records alone), or
// journal files in --log-dir.
enum class LogPolicy : uint8_t { Off, Memory, File };
inline constexpr std::array<std::string_view, 3> kLogPolicyNames = {"off", "memory", "file"};

// One journal that every worker appends to under a latch, or one per worker.
enum class JournalLayout : uint8_t { Shared, PerWorker };
inline constexpr std::array<std::string_view, 2> kJournalLayoutNames = {"shared", "per-worker"};

// When a journal's writes are synced: after every commit, once per group,
// or never (written to the OS only: they survive the process, not the
// machine).
enum class FsyncPolicy : uint8_t { Always, Group, Never };
inline constexpr std::array<std::string_view, 3> kFsyncPolicyNames = {"always", "group", "never"};

struct LogSettings {
  LogPolicy policy = LogPolicy::Off;
  JournalLayout journal = JournalLayout::PerWorker;
  FsyncPolicy fsync = FsyncPolicy::Group;
  // The longest a commit waits in a worker's buffer before the group is
  // written (and synced), microseconds.
  uint32_t group_commit_us = 1000;
  // --log file: a checkpoint of every table this often, milliseconds (0:
  // none); the journals' segments it covers are removed.
  uint32_t checkpoint_every_ms = 0;
  std::string dir;      // --log file: where the journals go
  std::string ack_log;  // empty: none; else a line per commit and per acknowledgement (docs/durability.md)
  // Start from the database the log in `dir` holds, as `abyss recover`
  // rebuilds it, instead of a fresh load (abyss run --recover).
  bool recover = false;
  // --log file, a fault test: simulate a power loss at this file event in
  // `dir` (platform/power_loss.h) and end the process; 0: never.
  uint64_t power_loss_at = 0;
};

}  // namespace abyss
