#pragma once
// `abyss serve` (docs/server.md): the key-value table of workload/kv/kv.h
// served over TCP in RESP2, so Redis clients and load generators drive the
// engine. Each command that reads or writes keys runs as one transaction
// under --cc, and MULTI/EXEC runs its queued commands as one; with --log,
// a reply leaves only once its transaction is durable, so an acknowledged
// write survives a crash.
//
// A fixed pool of --threads workers (0: one per core), each with its own event loop (one
// poller), its connections and its transactions; one more thread accepts
// connections and hands each to the worker with the fewest.
#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "common/config.h"
#include "stats/histogram.h"

namespace abyss::server {

// How a worker runs the commands it reads (the NoSQL study, §3.2).
enum class Schedule : uint8_t {
  Fifo,             // at once, in the order read: operations on one partition contend under --cc
  ContentionAware,  // an operation first claims its key-space partitions; one claimed waits, not contends
};
inline constexpr std::array<std::string_view, 2> kScheduleNames = {"fifo", "contention-aware"};

struct ServeOptions {
  std::string bind = "127.0.0.1";
  uint16_t port = 6380;   // 0: one the system picks
  std::string port_file;  // once listening, the port is written here
  uint32_t max_clients = 10000;
  Schedule schedule = Schedule::Fifo;
  // Under contention-aware scheduling, a weak write (SET ... WEAK, or any
  // SET or MSET with `weak`) whose partition is claimed is dropped and
  // answered +DROPPED instead of waiting.
  bool semantic_drop = false;
  bool weak = false;  // the consistency of a write that names none (--consistency)
};

// What a served store did, over its connections and workers.
struct ServeResult {
  uint64_t connections = 0;
  uint64_t commands = 0;
  uint64_t transactions = 0;  // committed
  uint64_t cc_aborts = 0;     // attempts the scheme aborted, each restarted
  uint64_t errors = 0;        // error replies (protocol errors included)
  uint64_t protocol_errors = 0;
  uint64_t refused = 0;  // connections over --max-clients, closed at once
  uint64_t waits = 0;    // operations that found a partition claimed and waited (contention-aware)
  uint64_t dropped = 0;  // weak writes dropped instead (--semantic-drop on)
  Histogram latency;     // ns from a transaction's first attempt to its reply being released
  double seconds = 0;
  uint64_t log_records = 0;
  uint64_t log_bytes = 0;
  uint64_t durable_epoch = 0;
  uint64_t checkpoints = 0;
  bool recovered = false;
  uint64_t recovered_writes = 0;
};

// Why `cfg` and `options` cannot be served (one line naming the flag), or empty.
std::string check_serve(const Config& cfg, const ServeOptions& options);

// Loads the table (or recovers it, with --recover), listens, calls
// `listening(port, threads)` and serves until SIGTERM or SIGINT; then stops taking
// commands, makes the log durable and closes it. Throws std::invalid_argument
// for what cannot be served or recovered, std::runtime_error for a failure
// while serving.
ServeResult serve(const Config& cfg, const ServeOptions& options,
                  const std::function<void(uint16_t port, uint32_t threads)>& listening);

}  // namespace abyss::server
