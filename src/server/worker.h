#pragma once
// One worker of `abyss serve` (docs/server.md, "Threads and connections"):
// its own event loop over the connections the acceptor hands it, each
// connection's input parsed into commands, MULTI/EXEC queued per
// connection, each command run as a transaction through the run's attempt
// loop (txn/attempts.h), replies held until their commit is durable, and
// under contention-aware scheduling the partition claims (schedule.h). What
// a command does to the table is commands.h's; the set-up and the acceptor
// are server.cc's.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/config.h"
#include "log/logger.h"
#include "platform/atomic.h"
#include "platform/clock.h"
#include "platform/latch.h"
#include "platform/net.h"
#include "server/commands.h"
#include "server/lock_manager.h"
#include "server/resp.h"
#include "server/schedule.h"
#include "server/server.h"
#include "stats/histogram.h"
#include "txn/attempts.h"
#include "txn/epochs.h"
#include "txn/txn.h"
#include "txn/worker.h"
#include "workload/kv/kv.h"

namespace abyss::server {

// Bytes read from a socket at a time.
inline constexpr std::size_t kReadChunk = std::size_t{64} << 10;
// A connection whose replies wait to be sent past this is neither read from
// nor has its next command run until they drain: a client that pipelines
// without reading cannot grow the server without bound.
inline constexpr std::size_t kMaxUnsent = std::size_t{16} << 20;
// How long a worker waits for its sockets: short with a log, whose epochs
// move on only while every worker polls it.
inline constexpr int kIdleWaitMs = 50;
inline constexpr int kLogWaitMs = 1;
inline constexpr std::size_t kEventsPerWait = 256;

// A reply waiting to leave: those of transactions wait for their commit to
// be durable (with a log), and every later reply of the connection waits
// behind them.
struct Held {
  std::string reply;
  bool needs_ack;
};

struct Connection {
  explicit Connection(const RespLimits& limits) : parser(limits) {}
  platform::Socket socket;
  uint64_t id = 0;
  std::string in;          // received, not yet parsed
  std::size_t used = 0;    // bytes of `in` already parsed
  CommandParser parser;    // how far it has read into the command at `used`
  uint64_t active_ns = 0;  // when it last sent or was sent a byte (--timeout)
  std::string out;         // released, not yet sent
  std::size_t sent = 0;    // bytes of `out` already sent
  std::deque<Held> held;
  std::size_t held_bytes = 0;  // of the replies in `held`
  uint32_t acks = 0;           // commits acknowledged that `held` has not yet released
  bool reads_watched = true;   // what the poller watches it for
  bool writes_watched = false;
  bool parked = false;    // its next command waits for a partition: not read, not parsed
  bool closing = false;   // send what is released, then close (QUIT, a protocol error)
  bool gone = false;      // the peer hung up or failed: close now
  bool stalled = false;   // commands wait unparsed in `in` until its unsent replies drain
  bool released = false;  // poll_log released replies of its: sent once the poll is over
  // MULTI: the commands queued for EXEC, as owned copies.
  bool in_multi = false;
  bool multi_failed = false;  // a queued command was refused: EXEC aborts, and nothing more is queued
  std::vector<std::vector<std::string>> queued;
  std::size_t queued_bytes = 0;  // of the arguments in `queued`
};

// What the acceptor hands a worker.
struct Inbox {
  platform::SpinLatch latch;
  std::vector<platform::Socket> sockets;  // under latch
  std::vector<uint64_t> unparked;         // under latch: connections whose partition was released
};

struct alignas(platform::kCacheLine) WorkerCounters {
  platform::Atomic<uint64_t> connections{0};  // open now: the acceptor picks the least
};

struct Totals {
  uint64_t connections = 0;
  uint64_t commands = 0;
  uint64_t transactions = 0;
  uint64_t cc_aborts = 0;
  uint64_t errors = 0;
  uint64_t protocol_errors = 0;
  uint64_t waits = 0;       // operations that found a partition claimed and waited
  uint64_t dropped = 0;     // weak writes dropped instead (--semantic-drop)
  uint64_t lock_waits = 0;  // times a command found a document locked and waited (--locking)
  uint64_t over_query_limit = 0;
  uint64_t timed_out = 0;
  uint64_t durable_reads = 0;  // with a log: transactions that wrote nothing, saw durable versions, replied at once
  uint64_t reply_writes = 0;   // writes to the sockets that sent replies
  Histogram latency;
  void merge(const Totals& o) {
    reply_writes += o.reply_writes;
    durable_reads += o.durable_reads;
    over_query_limit += o.over_query_limit;
    timed_out += o.timed_out;
    waits += o.waits;
    dropped += o.dropped;
    lock_waits += o.lock_waits;
    connections += o.connections;
    commands += o.commands;
    transactions += o.transactions;
    cc_aborts += o.cc_aborts;
    errors += o.errors;
    protocol_errors += o.protocol_errors;
    latency.merge(o.latency);
  }
};

// State every worker and the acceptor share.
struct Shared {
  Shared(uint32_t workers, uint32_t partitions, Locking locking)
      : inboxes(workers), counters(workers), claims(partitions), locks(locking) {
    for (uint32_t i = 0; i < workers; i++) pollers.push_back(std::make_unique<platform::Poller>());
  }
  // A waiter of the partition claims: its worker and its connection.
  static uint64_t waiter(uint32_t worker, uint64_t conn) { return uint64_t{worker} << 48 | conn; }
  // Hands a released partition's waiter back to its worker.
  void unpark(uint64_t waiter) {
    const auto worker = static_cast<uint32_t>(waiter >> 48);
    inboxes[worker].latch.lock();
    inboxes[worker].unparked.push_back(waiter & ((uint64_t{1} << 48) - 1));
    inboxes[worker].latch.unlock();
    pollers[worker]->wake();
  }
  std::vector<Inbox> inboxes;
  std::vector<WorkerCounters> counters;
  PartitionClaims claims;
  LockManager locks;
  std::vector<std::unique_ptr<platform::Poller>> pollers;
  alignas(platform::kCacheLine) platform::Atomic<bool> stop{false};
  alignas(platform::kCacheLine) platform::Atomic<uint64_t> refused{0};
};

// ---- one worker -----------------------------------------------------------------

template <class CC>
class ServerWorker {
 public:
  // Its connections are numbered from `first_id` + 1 (tokens in its log's
  // pending commits and the partition claims' waiters): a slot's later
  // worker, per connection, numbers past every earlier one's.
  ServerWorker(uint32_t index, const Config& cfg, const ServeOptions& options, CC& cc, Worker& w, RowLayout layout,
               const KvTable& kv, Shared& shared, const std::string& info_head, uint64_t first_id = 0)
      : index_(index),
        cfg_(cfg),
        options_(options),
        w_(w),
        txn_(cc, w, layout),
        kv_(kv),
        shared_(shared),
        poller_(*shared.pollers[index]),
        info_head_(info_head),
        cycles_per_ns_(platform::cycles_per_ns()),
        timeout_ns_(uint64_t{options.timeout_s} * 1'000'000'000),
        next_id_(first_id) {
    limits_.max_bulk_bytes = options.proto_max_bulk_len;
    limits_.max_query_bytes = options.client_query_buffer_limit;
  }

  // Serves until the server stops; with `until_closed` (a connection's own
  // thread) only until the connection it was handed has closed and its log
  // is idle (every commit of its durable, the durable epoch held back by
  // nothing of its), so the slot can be taken by the next connection's.
  Totals run(Epochs* epochs, bool yield_after_abort, bool until_closed = false) {
    yield_after_abort_ = yield_after_abort;
    std::vector<platform::PollEvent> events(kEventsPerWait);
    std::vector<char> chunk(kReadChunk);
    while (!shared_.stop.load(platform::memory_order_acquire)) {
      adopt_new_connections();
      serve_unparked();
      // Between transactions the worker holds no row: idle for reclamation.
      if (epochs != nullptr) epochs->leave(index_);
      // Nothing more to run: its records are written now, not at the group's
      // end, and their replies leave once durable. An idle log needs no polls.
      if (w_.log != nullptr) {
        w_.log->idle();
        poll_log();
      }
      const bool log_waits = w_.log != nullptr && !w_.log->is_idle();
      const std::size_t n = poller_.wait(events, log_waits ? kLogWaitMs : kIdleWaitMs);
      for (std::size_t e = 0; e < n; e++) {
        auto it = conns_.find(events[e].token);
        if (it == conns_.end()) continue;
        Connection& c = *it->second;
        if (c.parked && events[e].closed) c.gone = true;  // its waiting command goes with it
        if (events[e].readable || events[e].closed) read_and_serve(c, chunk);
        if (events[e].writable) send(c);
      }
      poll_log();
      serve_stalled();
      sweep();
      if (until_closed && conns_.empty() && (w_.log == nullptr || w_.log->is_idle())) break;
    }
    // Shutting down: no more commands; what committed is made durable by
    // the log's close, and the replies still held are not sent.
    for (auto& [id, c] : conns_) poller_.remove(c->socket);
    conns_.clear();
    return totals_;
  }

 private:
  void adopt_new_connections() {
    std::vector<platform::Socket> fresh;
    {
      shared_.inboxes[index_].latch.lock();
      fresh.swap(shared_.inboxes[index_].sockets);
      shared_.inboxes[index_].latch.unlock();
    }
    for (platform::Socket& s : fresh) {
      auto c = std::make_unique<Connection>(limits_);
      c->id = ++next_id_;
      c->active_ns = timeout_ns_ > 0 ? platform::wall_ns() : 0;
      c->socket = std::move(s);
      if (auto err = poller_.add(c->socket, c->id); !err.empty()) {
        shared_.counters[index_].connections.fetch_sub(1, platform::memory_order_relaxed);
        continue;  // the socket closes
      }
      totals_.connections++;
      conns_.emplace(c->id, std::move(c));
    }
  }

  void read_and_serve(Connection& c, std::vector<char>& chunk) {
    // Reads what has arrived, serving complete commands as they come, until
    // the socket has no more or the unsent replies are too many.
    for (;;) {
      if (c.closing || c.gone || c.parked || unsent(c) > kMaxUnsent) break;
      platform::Socket::Io io = c.socket.read(chunk.data(), chunk.size());
      if (io.bytes > 0) {
        c.in.append(chunk.data(), io.bytes);
        if (timeout_ns_ > 0) c.active_ns = platform::wall_ns();
        serve_input(c);
        send(c);
        if (io.bytes == chunk.size()) continue;
      }
      if (io.closed) c.gone = true;
      break;
    }
    send(c);
  }

  static std::size_t unsent(const Connection& c) { return c.out.size() - c.sent + c.held_bytes; }

  static void hold(Connection& c, std::string reply, bool needs_ack) {
    c.held_bytes += reply.size();
    c.held.push_back({std::move(reply), needs_ack});
  }

  // Parses and runs every complete command in the connection's input,
  // while its unsent replies are few enough; past them the rest waits,
  // stalled, until they drain (serve_stalled). Input past
  // --client-query-buffer-limit unparsed closes the connection.
  void serve_input(Connection& c) {
    std::string error;
    while (!c.closing) {
      if (unsent(c) > kMaxUnsent) {
        if (!c.stalled && c.used < c.in.size()) {
          c.stalled = true;
          stalled_.push_back(c.id);
        }
        break;
      }
      std::size_t used = 0;
      const ParseStatus st = c.parser.parse(std::string_view(c.in).substr(c.used), args_, used, error);
      if (st == ParseStatus::Incomplete) {
        if (c.in.size() - c.used > limits_.max_query_bytes) {
          totals_.over_query_limit++;
          protocol_error(c, "query buffer limit of " + std::to_string(limits_.max_query_bytes) +
                                " bytes exceeded (--client-query-buffer-limit)");
        }
        break;
      }
      if (st == ParseStatus::Error) {
        protocol_error(c, error);
        break;
      }
      // A command that must wait for a partition stays unparsed, to be
      // parsed and run again once the partition is released.
      if (!args_.empty() && !execute(c, args_)) break;
      c.used += used;
    }
    // Keeps the unparsed tail only.
    if (c.used > 0 && (c.used == c.in.size() || c.used > kReadChunk)) {
      c.in.erase(0, c.used);
      c.used = 0;
    }
  }

  // Answers input the server will not read further and closes the
  // connection once the answer is sent.
  void protocol_error(Connection& c, const std::string& why) {
    totals_.protocol_errors++;
    reply_now(c, "-ERR Protocol error: " + why + "\r\n");
    c.closing = true;
  }

  // Connections whose commands waited for their replies to drain: those
  // with room again run them now.
  void serve_stalled() {
    if (stalled_.empty()) return;
    resumed_.swap(stalled_);
    for (uint64_t id : resumed_) {
      auto it = conns_.find(id);
      if (it == conns_.end()) continue;
      Connection& c = *it->second;
      if (!c.stalled) continue;
      if (c.gone || c.closing || c.parked || unsent(c) > kMaxUnsent) {
        if (c.gone || c.closing) {
          c.stalled = false;
        } else {
          stalled_.push_back(id);
        }
        continue;
      }
      c.stalled = false;
      serve_input(c);
      send(c);
    }
    resumed_.clear();
  }

  // A reply that needs no commit: it leaves once those before it have.
  void reply_now(Connection& c, std::string reply) {
    if (reply.size() > 0 && reply[0] == '-') totals_.errors++;
    if (c.held.empty()) {
      c.out += reply;
    } else {
      hold(c, std::move(reply), false);
    }
  }

  // Runs one command; false when it waits for a partition (nothing of it done).
  bool execute(Connection& c, std::span<const std::string_view> args) {
    totals_.commands++;
    const CommandSpec* spec = find_command(args[0]);
    if (spec == nullptr) {
      if (c.in_multi) c.multi_failed = true;
      std::string name(args[0].substr(0, 128));
      for (char& ch : name) {
        if (ch == '\r' || ch == '\n') ch = ' ';
      }
      reply_now(c, "-ERR unknown command '" + name + "'\r\n");
      return true;
    }
    if (c.in_multi && spec->op != Op::Exec && spec->op != Op::Discard && spec->op != Op::Multi) {
      if (auto err = spec->data ? precheck(*spec, args) : std::string(); !err.empty()) {
        c.multi_failed = true;
        reply_now(c, std::move(err));
        return true;
      }
      if (!spec->data && spec->op != Op::Ping && spec->op != Op::Echo) {
        c.multi_failed = true;
        reply_now(c, "-ERR command '" + std::string(spec->name) + "' is not allowed inside MULTI\r\n");
        return true;
      }
      // A transaction that will be discarded keeps nothing.
      if (c.multi_failed) {
        reply_now(c, "+QUEUED\r\n");
        return true;
      }
      std::size_t bytes = 0;
      for (std::string_view a : args) bytes += a.size();
      if (c.queued.size() >= options_.multi_max_commands ||
          c.queued_bytes + bytes > options_.client_query_buffer_limit) {
        const bool too_many = c.queued.size() >= options_.multi_max_commands;
        c.multi_failed = true;
        c.queued.clear();
        c.queued.shrink_to_fit();
        c.queued_bytes = 0;
        reply_now(c, too_many ? "-ERR MULTI queue limit of " + std::to_string(options_.multi_max_commands) +
                                    " commands exceeded (--multi-max-commands): the transaction is discarded\r\n"
                              : "-ERR MULTI queue limit of " + std::to_string(options_.client_query_buffer_limit) +
                                    " bytes exceeded (--client-query-buffer-limit): the transaction is discarded\r\n");
        return true;
      }
      c.queued.emplace_back(args.begin(), args.end());
      c.queued_bytes += bytes;
      reply_now(c, "+QUEUED\r\n");
      return true;
    }
    if (!arity_ok(*spec, args.size())) {
      reply_now(c, "-ERR wrong number of arguments for '" + std::string(spec->name) + "' command\r\n");
      return true;
    }
    if (spec->data) {
      if (auto err = precheck(*spec, args); !err.empty()) {
        reply_now(c, std::move(err));
        return true;
      }
      std::vector<std::string_view> one(args.begin(), args.end());
      return run_transaction(c, {&one, 1}, false);
    }
    switch (spec->op) {
      case Op::Ping:
        reply_now(c, args.size() > 1 ? bulk(args[1]) : "+PONG\r\n");
        return true;
      case Op::Echo:
        reply_now(c, bulk(args[1]));
        return true;
      case Op::Info:
        reply_now(c, bulk(info()));
        return true;
      case Op::Multi:
        if (c.in_multi) {
          reply_now(c, "-ERR MULTI calls can not be nested\r\n");
          return true;
        }
        c.in_multi = true;
        c.multi_failed = false;
        c.queued.clear();
        c.queued_bytes = 0;
        reply_now(c, "+OK\r\n");
        return true;
      case Op::Discard:
        if (!c.in_multi) {
          reply_now(c, "-ERR DISCARD without MULTI\r\n");
          return true;
        }
        c.in_multi = false;
        c.queued.clear();
        c.queued_bytes = 0;
        reply_now(c, "+OK\r\n");
        return true;
      case Op::Exec: {
        if (!c.in_multi) {
          reply_now(c, "-ERR EXEC without MULTI\r\n");
          return true;
        }
        c.in_multi = false;
        if (c.multi_failed) {
          c.queued.clear();
          c.queued_bytes = 0;
          reply_now(c, "-EXECABORT Transaction discarded because of previous errors.\r\n");
          return true;
        }
        std::vector<std::vector<std::string_view>> views;
        views.reserve(c.queued.size());
        for (const auto& q : c.queued) views.emplace_back(q.begin(), q.end());
        if (!run_transaction(c, views, true)) {
          c.in_multi = true;  // EXEC runs again once its partition is free
          return false;
        }
        c.queued.clear();
        c.queued_bytes = 0;
        return true;
      }
      case Op::Select:
        reply_now(c, args[1] == "0" ? "+OK\r\n" : "-ERR DB index is out of range\r\n");
        return true;
      case Op::ConfigCmd:
        // Clients ask for settings they only print (redis-benchmark: save,
        // appendonly): whether this store logs; it has no other of Redis's.
        if (!equals_lower(args[1], "get") || args.size() != 3) {
          reply_now(c, "-ERR only CONFIG GET of one parameter is supported\r\n");
        } else if (equals_lower(args[2], "save") || equals_lower(args[2], "appendonly")) {
          std::string r;
          append_array(r, 2);
          append_bulk(r, equals_lower(args[2], "save") ? "save" : "appendonly");
          append_bulk(r, equals_lower(args[2], "save") ? "" : w_.log != nullptr ? "yes" : "no");
          reply_now(c, std::move(r));
        } else {
          reply_now(c, "*0\r\n");
        }
        return true;
      case Op::CommandCmd:
        // redis-cli asks for the command table to offer hints: none.
        reply_now(c, "*0\r\n");
        return true;
      case Op::Client:
        reply_now(c, "+OK\r\n");  // names and library versions: nothing to keep
        return true;
      case Op::Quit:
        reply_now(c, "+OK\r\n");
        c.closing = true;
        return true;
      case Op::Hello: {
        // RESP2 only: a client asking for RESP3 is told so, as Redis tells
        // it of a version it lacks, and may go on in RESP2.
        if (args.size() > 1 && args[1] != "2") {
          reply_now(c, "-NOPROTO unsupported protocol version\r\n");
          return true;
        }
        std::string r;
        append_array(r, 6);
        append_bulk(r, "server");
        append_bulk(r, "abyss");
        append_bulk(r, "proto");
        append_integer(r, 2);
        append_bulk(r, "mode");
        append_bulk(r, "standalone");
        reply_now(c, std::move(r));
        return true;
      }
      case Op::DbSize:
        reply_now(c, "-ERR DBSIZE would read every slot: not supported\r\n");
        return true;
      default:
        return true;
    }
  }

  static std::string bulk(std::string_view s) {
    std::string out;
    append_bulk(out, s);
    return out;
  }

  // The partitions `commands` touch, sorted and distinct.
  void partitions_of(std::span<const std::vector<std::string_view>> commands, std::vector<uint32_t>& out) const {
    out.clear();
    for (const auto& args : commands) {
      for_each_key(*find_command(args[0]), args,
                   [&](std::string_view key) { out.push_back(kv_.partition_of(kv_hash(key))); });
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
  }

  // Whether a command may be dropped when its partition is claimed: a
  // write whose consistency is weak, under --semantic-drop on. SET and
  // MSET only: their reply carries no value the client builds on.
  bool droppable(std::span<const std::vector<std::string_view>> commands, bool exec) const {
    if (!options_.semantic_drop || exec || commands.size() != 1) return false;
    const auto& args = commands[0];
    const Op op = find_command(args[0])->op;
    bool weak = options_.weak;
    SetMode mode{};
    if (op == Op::Set) (void)set_mode(args, mode, weak);
    return (op == Op::Set || op == Op::MSet) && weak;
  }

  // Reads a connection while its next command may run and its replies
  // waiting are few enough; watches for room to write while some are unsent.
  void set_interest(Connection& c) {
    const bool read = !c.parked && unsent(c) <= kMaxUnsent;
    const bool write = c.sent < c.out.size();
    if (read == c.reads_watched && write == c.writes_watched) return;
    poller_.watch(c.socket, c.id, read, write);
    c.reads_watched = read;
    c.writes_watched = write;
  }

  // Connections whose partition was released: their waiting command runs again.
  void serve_unparked() {
    Inbox& inbox = shared_.inboxes[index_];
    inbox.latch.lock();
    unparked_.swap(inbox.unparked);
    inbox.latch.unlock();
    for (uint64_t id : unparked_) {
      auto it = conns_.find(id);
      if (it == conns_.end() || !it->second->parked) continue;
      Connection& c = *it->second;
      c.parked = false;
      set_interest(c);
      serve_input(c);
      send(c);
    }
    unparked_.clear();
  }

  // Runs `commands` as one transaction: a single command's reply, or with
  // `exec` an array of their replies. Restarts it whenever the scheme
  // aborts it. With --schedule contention-aware, it first claims the
  // partitions it touches; false when one is claimed and the command waits
  // (nothing of it done, the connection parked until that one is released).
  bool run_transaction(Connection& c, std::span<const std::vector<std::string_view>> commands, bool exec) {
    const bool scheduled = options_.schedule == Schedule::ContentionAware;
    if (scheduled || CC::kTraits.declares_partitions) partitions_of(commands, parts_);
    if (scheduled) {
      uint32_t blocked = 0;
      while (!shared_.claims.try_claim(parts_, index_ + 1, blocked)) {
        if (droppable(commands, exec)) {
          totals_.dropped++;
          reply_now(c, "+DROPPED\r\n");
          return true;
        }
        if (shared_.claims.wait(blocked, Shared::waiter(index_, c.id))) {
          totals_.waits++;
          c.parked = true;
          set_interest(c);
          return false;
        }
      }
    }
    run_locked(c, commands, exec);
    if (scheduled) shared_.claims.release(parts_, [&](uint64_t waiter) { shared_.unpark(waiter); });
    return true;
  }

  // Runs `commands` holding the locks of --locking on their documents:
  // exclusive when one of them writes, else shared.
  void run_locked(Connection& c, std::span<const std::vector<std::string_view>> commands, bool exec) {
    if (options_.locking == Locking::None) {
      run_claimed(c, commands, exec);
      return;
    }
    docs_.clear();
    bool write = false;
    for (const auto& args : commands) {
      const CommandSpec& spec = *find_command(args[0]);
      write = write || (spec.op != Op::Get && spec.op != Op::MGet && spec.op != Op::Exists);
      for_each_key(spec, args, [&](std::string_view key) { docs_.push_back(kv_hash(key) % LockManager::kDocuments); });
    }
    std::sort(docs_.begin(), docs_.end());
    docs_.erase(std::unique(docs_.begin(), docs_.end()), docs_.end());
    totals_.lock_waits += shared_.locks.lock(docs_, write);
    run_claimed(c, commands, exec);
    shared_.locks.unlock(docs_, write);
  }

  // The attempt loop's hooks (txn/attempts.h): the commands of one
  // transaction, their replies built anew at every attempt.
  struct Commands : AttemptHooks {
    ServerWorker& worker;
    std::span<const std::vector<std::string_view>> commands;
    bool exec;
    std::string reply;
    std::size_t mark = 0;  // where the running command's reply starts

    void prepare() {
      reply.clear();
      if (exec) append_array(reply, commands.size());
    }
    void declare(Txn<CC>& txn) {
      if constexpr (CC::kTraits.declares_partitions) txn.partitions() = worker.parts_;
    }
    Rc body(Txn<CC>& txn) {
      Rc rc = Rc::Ok;
      for (std::size_t i = 0; rc == Rc::Ok && i < commands.size(); i++) {
        // A command that fails its own way (MSET of a key with no free
        // slot) rolls the whole transaction back: its reply says why.
        mark = reply.size();
        rc = run_data(txn, worker.kv_, *find_command(commands[i][0]), commands[i], reply, worker.value_);
      }
      return rc;
    }
    void aborted(uint64_t /*start*/, uint64_t /*rolled_back*/) { worker.totals_.cc_aborts++; }
  };

  void run_claimed(Connection& c, std::span<const std::vector<std::string_view>> commands, bool exec) {
    const uint64_t first_start = platform::cycles();
    if (w_.log != nullptr) w_.log->resume();  // before the commit reads its epoch
    Commands hooks{{}, *this, commands, exec, {}, 0};
    Attempts a;
    try {
      a = run_attempts(txn_, w_, cfg_, yield_after_abort_, 0, hooks);
    } catch (const std::runtime_error& e) {
      // Too many rows for one transaction: it rolled back, and says so.
      reply_now(c, "-ERR " + std::string(e.what()) + "\r\n");
      return;
    }
    if (a.rc == Rc::LogicalAbort) {
      reply_now(c, hooks.reply.substr(hooks.mark));
      return;
    }
    if (a.rc == Rc::NotFound) {
      // The commands answer a missing key themselves; one that did not is
      // this server's fault, said as such rather than retried forever.
      reply_now(c, "-ERR internal: a command missed a key it did not handle\r\n");
      return;
    }
    totals_.transactions++;
    if (w_.log == nullptr) {
      totals_.latency.record(ns_since(first_start));
      reply_now(c, std::move(hooks.reply));
      return;
    }
    if (!txn_.logged() && txn_.commit_epoch() <= w_.log->durable()) {
      // It wrote nothing and read only durable versions: its reply leaves
      // now, after the connection's earlier replies.
      totals_.latency.record(ns_since(first_start));
      totals_.durable_reads++;
      if (c.held.empty()) {
        c.out += hooks.reply;
      } else {
        hold(c, std::move(hooks.reply), false);
      }
      return;
    }
    w_.log->committed({txn_.commit_epoch(), txn_.logged() ? txn_.commit_id().value : 0, first_start, 0, true, c.id});
    hold(c, std::move(hooks.reply), true);
  }

  uint64_t ns_since(uint64_t start) const {
    return static_cast<uint64_t>(static_cast<double>(platform::cycles() - start) / cycles_per_ns_);
  }

  // Releases the replies of transactions now durable, and sends each
  // connection's in one write.
  void poll_log() {
    if (w_.log == nullptr) return;
    w_.log->poll([&](const log::WorkerLog::Pending& p, uint64_t at) {
      totals_.latency.record(static_cast<uint64_t>(static_cast<double>(at - p.start) / cycles_per_ns_));
      auto it = conns_.find(p.token);
      if (it == conns_.end()) return;  // gone: its replies with it
      Connection& c = *it->second;
      c.acks++;
      while (!c.held.empty() && (!c.held.front().needs_ack || c.acks > 0)) {
        if (c.held.front().needs_ack) c.acks--;
        c.out += c.held.front().reply;
        c.held_bytes -= c.held.front().reply.size();
        c.held.pop_front();
      }
      if (!c.released) {
        c.released = true;
        released_.push_back(&c);
      }
    });
    for (Connection* c : released_) {
      c->released = false;
      send(*c);
    }
    released_.clear();
  }

  void send(Connection& c) {
    if (c.gone) return;
    if (c.sent < c.out.size()) {
      platform::Socket::Io io = c.socket.write(c.out.data() + c.sent, c.out.size() - c.sent);
      totals_.reply_writes++;
      c.sent += io.bytes;
      if (io.bytes > 0 && timeout_ns_ > 0) c.active_ns = platform::wall_ns();
      if (io.closed) {
        c.gone = true;
        return;
      }
    }
    if (c.sent == c.out.size()) {
      c.out.clear();
      c.sent = 0;
    }
    set_interest(c);
  }

  // Whether a connection has been idle past --timeout: nothing read from it
  // or sent to it for that long, and no command of its waiting, neither for
  // its commit to be durable nor for a partition.
  bool idle_too_long(const Connection& c, uint64_t now) const {
    return timeout_ns_ > 0 && c.held.empty() && !c.parked && now - c.active_ns > timeout_ns_;
  }

  // Closes connections that hung up, those closing with nothing left to
  // send, and those idle past --timeout (without a word, as Redis does).
  void sweep() {
    const uint64_t now = timeout_ns_ > 0 ? platform::wall_ns() : 0;
    for (auto it = conns_.begin(); it != conns_.end();) {
      Connection& c = *it->second;
      if (!c.gone && idle_too_long(c, now)) {
        totals_.timed_out++;
        c.gone = true;
      }
      const bool done = c.gone || (c.closing && c.held.empty() && c.sent == c.out.size());
      if (!done) {
        ++it;
        continue;
      }
      poller_.remove(c.socket);
      shared_.counters[index_].connections.fetch_sub(1, platform::memory_order_relaxed);
      it = conns_.erase(it);
    }
  }

  std::string info() const {
    std::string s = info_head_;
    s += "connected_clients_worker:" + std::to_string(conns_.size()) + "\r\n";
    s += "total_commands_processed_worker:" + std::to_string(totals_.commands) + "\r\n";
    s += "total_transactions_worker:" + std::to_string(totals_.transactions) + "\r\n";
    s += "cc_aborts_worker:" + std::to_string(totals_.cc_aborts) + "\r\n";
    s += "partition_waits_worker:" + std::to_string(totals_.waits) + "\r\n";
    s += "lock_waits_worker:" + std::to_string(totals_.lock_waits) + "\r\n";
    s += "dropped_worker:" + std::to_string(totals_.dropped) + "\r\n";
    s += "worker:" + std::to_string(index_) + "\r\n";
    // The run flags that act within its transactions, as this worker holds them.
    auto on_off = [](bool on) { return on ? "on" : "off"; };
    s += std::string("prefetch_worker:") + on_off(w_.prefetch) + "\r\n";
    s += std::string("alloc_worker:") + (w_.scratch.uses_system_allocator() ? "malloc" : "arena") + "\r\n";
    s += std::string("read_copy_worker:") + on_off(w_.read_copy) + "\r\n";
    s += std::string("read_only_tables_worker:") + (w_.bypass_read_only ? "bypass" : "cc") + "\r\n";
    s += std::string("phantom_protection_worker:") + on_off(w_.phantom_protection) + "\r\n";
    return s;
  }

  uint32_t index_;
  const Config& cfg_;
  const ServeOptions& options_;
  Worker& w_;
  Txn<CC> txn_;
  const KvTable& kv_;
  Shared& shared_;
  platform::Poller& poller_;
  const std::string& info_head_;
  double cycles_per_ns_;
  uint64_t timeout_ns_;  // --timeout; 0: never
  bool yield_after_abort_ = false;
  RespLimits limits_;
  std::vector<uint64_t> stalled_;      // connections whose commands wait for their replies to drain
  std::vector<uint64_t> resumed_;      // those being served again
  std::vector<Connection*> released_;  // poll_log: those with replies released
  std::vector<std::string_view> args_;
  std::string value_;
  std::vector<uint32_t> parts_;     // the running command's partitions
  std::vector<uint32_t> docs_;      // the running command's documents (--locking)
  std::vector<uint64_t> unparked_;  // connections handed back, being served
  uint64_t next_id_;
  std::unordered_map<uint64_t, std::unique_ptr<Connection>> conns_;
  Totals totals_;
};

}  // namespace abyss::server
