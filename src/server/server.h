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
// connections and hands each to the worker with the fewest. Or, with
// --connection-threads per-connection (MongoDB's design), a thread created
// for each connection as it arrives, serving it alone until it closes, on
// one of --threads transaction slots.
#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "common/config.h"
#include "server/lock_manager.h"
#include "stats/histogram.h"

namespace abyss::server {

// How a worker runs the commands it reads (the NoSQL study, §3.2).
enum class Schedule : uint8_t {
  Fifo,             // at once, in the order read: operations on one partition contend under --cc
  ContentionAware,  // an operation first claims its key-space partitions; one claimed waits, not contends
};
inline constexpr std::array<std::string_view, 2> kScheduleNames = {"fifo", "contention-aware"};

// Which threads serve the connections (the NoSQL study, §2: MongoDB's
// thread per client beside a static pool).
enum class ConnectionThreads : uint8_t {
  Pool,           // --threads workers made at start, each an event loop over many connections
  PerConnection,  // a thread created when a connection arrives, serving it alone and ending when it closes
};
inline constexpr std::array<std::string_view, 2> kConnectionThreadsNames = {"pool", "per-connection"};

struct ServeOptions {
  std::string bind = "127.0.0.1";
  uint16_t port = 6380;          // 0: one the system picks
  std::string port_file;         // once listening, the port is written here
  uint32_t max_clients = 10000;  // fitted under the descriptor limit at start (fit_max_clients)
  // What one client may hold (docs/server.md, "Limits"): its input not yet
  // parsed (past it the client is answered an error and closed), one
  // argument (longer is a protocol error), the commands one MULTI queues
  // (past them the transaction is discarded), and how long it may stay idle
  // (seconds; 0: for ever). Redis's defaults, but for the MULTI queue, which
  // Redis does not bound.
  uint64_t client_query_buffer_limit = uint64_t{1} << 30;
  uint64_t proto_max_bulk_len = uint64_t{512} << 20;
  uint32_t multi_max_commands = uint32_t{1} << 20;
  uint32_t timeout_s = 0;
  Schedule schedule = Schedule::Fifo;
  // Under contention-aware scheduling, a weak write (SET ... WEAK, or any
  // SET or MSET with `weak`) whose partition is claimed is dropped and
  // answered +DROPPED instead of waiting.
  bool semantic_drop = false;
  bool weak = false;  // the consistency of a write that names none (--consistency)
  // The lock manager a command passes before its transaction
  // (lock_manager.h): none, MongoDB's hierarchical one, or the wait/signal
  // fast path.
  Locking locking = Locking::None;
  // Per connection, the --threads workers are slots of transaction state a
  // connection's thread takes while it is open: at most that many
  // connections are served at once, and one past them is refused as past
  // --max-clients.
  ConnectionThreads connection_threads = ConnectionThreads::Pool;
};

// What a served store did, over its connections and workers.
struct ServeResult {
  uint64_t connections = 0;
  uint64_t commands = 0;
  uint64_t transactions = 0;  // committed
  uint64_t cc_aborts = 0;     // attempts the scheme aborted, each restarted
  uint64_t errors = 0;        // error replies (protocol errors included)
  uint64_t protocol_errors = 0;
  uint64_t refused = 0;           // connections over --max-clients, or past the descriptor limit, closed at once
  uint64_t over_query_limit = 0;  // clients closed past --client-query-buffer-limit
  uint64_t timed_out = 0;         // idle clients closed after --timeout
  uint64_t waits = 0;             // operations that found a partition claimed and waited (contention-aware)
  uint64_t dropped = 0;           // weak writes dropped instead (--semantic-drop on)
  uint64_t lock_waits = 0;        // times a command found a document locked and waited (--locking)
  uint64_t threads_started = 0;   // per connection: threads created, one per connection served
  Histogram latency;              // ns from a transaction's first attempt to its reply being released
  double seconds = 0;
  uint64_t log_records = 0;
  uint64_t log_bytes = 0;
  uint64_t durable_epoch = 0;
  uint64_t durable_reads = 0;  // transactions that wrote nothing and read only durable versions: replied at once
  uint64_t reply_writes = 0;   // writes to the sockets that sent replies (a pipeline's replies released together: one)
  uint64_t checkpoints = 0;
  bool recovered = false;
  uint64_t recovered_writes = 0;
};

// Why `cfg` and `options` cannot be served (one line naming the flag), or empty.
std::string check_serve(const Config& cfg, const ServeOptions& options);

// Descriptors a server holds besides its clients': the standard streams, the
// listener, the spare kept to refuse clients when none is left, files, and
// each worker's poller, wake-up and journal.
uint64_t reserved_descriptors(uint32_t threads);

// Fits --max-clients under the process's limit on open descriptors
// (RLIMIT_NOFILE): raises the soft limit to max_clients plus the reserve where
// the hard limit allows, else lowers options.max_clients to what the limit
// leaves and says so in `note` (one line). The reason it cannot serve even one
// client, or empty. `threads` as served (0 taken as one per core).
std::string fit_max_clients(uint32_t threads, ServeOptions& options, std::string& note);

// Loads the table (or recovers it, with --recover), listens, calls
// `listening(port, threads)` and serves until SIGTERM or SIGINT; then stops taking
// commands, makes the log durable and closes it. Throws std::invalid_argument
// for what cannot be served or recovered, std::runtime_error for a failure
// while serving.
ServeResult serve(const Config& cfg, const ServeOptions& options,
                  const std::function<void(uint16_t port, uint32_t threads)>& listening);

}  // namespace abyss::server
