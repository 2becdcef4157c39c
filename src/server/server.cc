#include "server/server.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "cc/registry.h"
#include "common/build_info.h"
#include "engine/run_context.h"
#include "platform/atomic.h"
#include "platform/clock.h"
#include "platform/file.h"
#include "platform/machine.h"
#include "platform/net.h"
#include "platform/thread.h"
#include "server/worker.h"
#include "workload/kv/kv.h"

namespace abyss::server {

namespace {

// Descriptors kept for the server's own files beyond its clients', as Redis
// keeps 32, and those each worker (and the acceptor) holds: a poller, its
// wake-up, a journal, and one to spare.
constexpr uint64_t kReservedDescriptors = 32;
constexpr uint64_t kDescriptorsPerWorker = 4;
// The least a client limit in bytes may be, as Redis requires.
constexpr uint64_t kMinClientLimitBytes = uint64_t{1} << 20;

// How long the acceptor waits before trying again when the system refuses
// a connection for a reason other than a lack of descriptors (memory): the
// waiting connection keeps the listener ready, and trying at once would spin.
constexpr uint64_t kAcceptRetryMs = 10;

// Answers a connection the server will not serve and closes it. What the
// client sent already is read first, so the close ends the stream and the
// client reads the reply, rather than resetting it.
void refuse(platform::Socket& s, Shared& shared) {
  static constexpr std::string_view kFull = "-ERR max number of clients reached\r\n";
  char sink[4096];
  (void)s.read(sink, sizeof sink);
  (void)s.write(kFull.data(), kFull.size());
  s.close();
  shared.refused.fetch_add(1, platform::memory_order_relaxed);
}

// The acceptor: hands each new connection to `place`, which serves it or
// refuses it; on SIGTERM or SIGINT stops the workers. Out of descriptors,
// it frees the one it keeps spare to accept each waiting connection and
// refuse it, rather than leaving the listener ready with nothing to do and
// the clients waiting for ever.
void accept_loop(platform::Socket& listener, Shared& shared, const std::function<void(platform::Socket&)>& place) {
  platform::Poller poller;
  (void)poller.add(listener, 0);
  platform::SpareDescriptor spare;
  std::vector<platform::PollEvent> events(4);
  while (!platform::termination_requested()) {
    if (poller.wait(events, kIdleWaitMs) == 0) continue;
    for (;;) {
      platform::Socket s;
      const platform::Accept got = platform::accept_tcp(listener, s);
      if (got == platform::Accept::None) break;
      if (got == platform::Accept::NoDescriptors && spare.held()) {
        spare.release();
        const platform::Accept again = platform::accept_tcp(listener, s);
        if (again == platform::Accept::Connection) refuse(s, shared);
        spare.restore();
        if (again == platform::Accept::Connection) continue;
        if (again == platform::Accept::None) break;
      }
      if (got != platform::Accept::Connection) {
        platform::sleep_ms(kAcceptRetryMs);  // without a spare, or refused again: the listener stays ready
        break;
      }
      place(s);
    }
  }
  shared.stop.store(true, platform::memory_order_release);
  for (auto& p : shared.pollers) p->wake();
}

// The static pool's hand-off: to the worker with the fewest connections
// open, or past --max-clients a refusal.
void place_in_pool(platform::Socket& s, Shared& shared, uint32_t workers, uint32_t max_clients) {
  uint32_t best = 0;
  uint64_t open = 0;
  uint64_t least = ~uint64_t{0};
  for (uint32_t i = 0; i < workers; i++) {
    const uint64_t n = shared.counters[i].connections.load(platform::memory_order_relaxed);
    open += n;
    if (n < least) {
      least = n;
      best = i;
    }
  }
  if (open >= max_clients) {
    refuse(s, shared);
    return;
  }
  shared.counters[best].connections.fetch_add(1, platform::memory_order_relaxed);
  shared.inboxes[best].latch.lock();
  shared.inboxes[best].sockets.push_back(std::move(s));
  shared.inboxes[best].latch.unlock();
  shared.pollers[best]->wake();
}

// Thread per connection: each connection gets a thread of its own, created
// as it arrives, and a free slot of transaction state (a worker of the
// run: its Txn state, epoch slot, journal and poller) for as long as it is
// open. The thread serves that one connection (a ServerWorker over it
// alone), then hands the slot back and ends; the acceptor joins a slot's
// last thread before starting the next one on it, and every thread at
// shutdown.
class ConnectionThreadSet final {
 public:
  // serve(slot, first_id): the connection's thread's work on `slot`, its
  // connection numbered past `first_id`.
  ConnectionThreadSet(uint32_t slots, uint32_t max_clients, Shared& shared,
                      std::function<void(uint32_t, uint64_t)> serve)
      : max_clients_(max_clients), shared_(shared), serve_(std::move(serve)), threads_(slots) {
    for (uint32_t i = slots; i > 0; i--) free_.push_back(i - 1);
  }
  ~ConnectionThreadSet() { join_all(); }
  ConnectionThreadSet(const ConnectionThreadSet&) = delete;
  ConnectionThreadSet& operator=(const ConnectionThreadSet&) = delete;

  // From the acceptor only.
  void place(platform::Socket& s) {
    uint32_t slot = 0;
    latch_.lock();
    const bool room = !free_.empty() && threads_.size() - free_.size() < max_clients_;
    if (room) {
      slot = free_.back();
      free_.pop_back();
    }
    latch_.unlock();
    if (!room) {
      refuse(s, shared_);
      return;
    }
    threads_[slot].join();  // it handed the slot back as its last act
    shared_.counters[slot].connections.fetch_add(1, platform::memory_order_relaxed);
    shared_.inboxes[slot].latch.lock();
    shared_.inboxes[slot].sockets.push_back(std::move(s));
    shared_.inboxes[slot].latch.unlock();
    const uint64_t first_id = started_;  // its connection is started_ + 1: past every earlier thread's
    try {
      threads_[slot] = platform::Thread([this, slot, first_id] {
        serve_(slot, first_id);
        latch_.lock();
        free_.push_back(slot);
        latch_.unlock();
      });
    } catch (const std::system_error&) {
      // The system would not create a thread: the connection is refused,
      // as one past the descriptor limit is.
      platform::Socket back;
      shared_.inboxes[slot].latch.lock();
      back = std::move(shared_.inboxes[slot].sockets.back());
      shared_.inboxes[slot].sockets.pop_back();
      shared_.inboxes[slot].latch.unlock();
      shared_.counters[slot].connections.fetch_sub(1, platform::memory_order_relaxed);
      refuse(back, shared_);
      latch_.lock();
      free_.push_back(slot);
      latch_.unlock();
      return;
    }
    started_++;
  }

  void join_all() {
    for (platform::Thread& t : threads_) t.join();
  }
  uint64_t started() const { return started_; }

 private:
  const uint32_t max_clients_;
  Shared& shared_;
  const std::function<void(uint32_t, uint64_t)> serve_;
  platform::SpinLatch latch_;
  std::vector<uint32_t> free_;             // under latch_: slots no connection holds
  std::vector<platform::Thread> threads_;  // the acceptor's: each slot's last thread
  uint64_t started_ = 0;
};

template <class CC>
ServeResult serve_with(const Config& given, const ServeOptions& options,
                       const std::function<void(uint16_t port, uint32_t threads)>& listening) {
  RunContext<CC> ctx(given, Kv::partitions(given));
  const Config& cfg = ctx.config();
  ServeResult result;
  KvTable kv(cfg.settings<KvConfig>());
  ctx.load(kv);
  if (const RecoverResult* rr = ctx.recover()) {
    result.recovered = true;
    result.recovered_writes = rr->writes_applied;
  }
  WorkerSet& workers = ctx.start_workers();
  ctx.open_log();

  platform::Socket listener;
  uint16_t port = 0;
  if (auto err = platform::listen_tcp(options.bind, options.port, listener, port); !err.empty()) {
    throw std::invalid_argument(err);
  }
  if (!options.port_file.empty()) {
    platform::OutputFile f;
    std::string err = f.open(options.port_file);
    if (err.empty()) {
      f.write(std::to_string(port) + "\n");
      err = f.close();
    }
    if (!err.empty()) throw std::invalid_argument(options.port_file + ": " + err);
  }
  CC& cc = ctx.start_cc();
  auto shared = std::make_unique<Shared>(cfg.threads, cfg.partitions, options.locking);
  for (const auto& p : shared->pollers) {
    if (!p->error().empty()) throw std::runtime_error(p->error());
  }
  const std::string info_head = "# Server\r\nabyss_version:" + std::string(git_rev()) + "\r\ncc:" + cfg.cc +
                                "\r\nthreads:" + std::to_string(cfg.threads) + "\r\ntcp_port:" + std::to_string(port) +
                                "\r\nmaxclients:" + std::to_string(options.max_clients) +
                                "\r\nclient_query_buffer_limit:" + std::to_string(options.client_query_buffer_limit) +
                                "\r\nproto_max_bulk_len:" + std::to_string(options.proto_max_bulk_len) +
                                "\r\nmulti_max_commands:" + std::to_string(options.multi_max_commands) +
                                "\r\ntimeout:" + std::to_string(options.timeout_s) + "\r\n";
  const bool oversubscribed = cfg.threads + 1 > platform::hardware_cores();
  const bool per_connection = options.connection_threads == ConnectionThreads::PerConnection;
  // A worker asleep in its poller wakes when its log has news for it.
  for (uint32_t i = 0; i < cfg.threads; i++) {
    if (workers[i].log == nullptr) continue;
    workers[i].log->set_waker([&p = *shared->pollers[i]] { p.wake(); });
    // Per connection, a slot no connection has taken yet holds no epoch
    // back: its log is idle from the start (it has written nothing, so at once).
    if (per_connection) workers[i].log->idle();
  }
  listening(port, cfg.threads);

  std::vector<Totals> totals(cfg.threads);
  std::vector<std::string> errors(cfg.threads + 2);
  // One worker's serving, on a thread of the pool or, per connection, on
  // the connection's own thread until it closes.
  auto serve_on = [&](uint32_t i, uint64_t first_id) {
    try {
      ServerWorker<CC> worker(i, cfg, options, cc, workers[i], ctx.layout(), kv, *shared, info_head, first_id);
      totals[i].merge(worker.run(&workers.epochs(), oversubscribed, per_connection));
      if (!per_connection) ctx.worker_finished(i);
    } catch (const std::exception& e) {
      if (errors[i].empty()) errors[i] = e.what();
      // One failed worker stops the server: the others would wait on it.
      platform::request_termination();
    }
    ctx.worker_left(i);
  };
  // Per connection, the run's threads are the acceptor and the
  // checkpointer only: thread k is the pool's thread cfg.threads + k.
  const uint32_t first_thread = per_connection ? cfg.threads : 0;
  uint64_t threads_started = 0;
  const uint64_t start = platform::wall_ns();
  platform::run_threads(ctx.threads(1) - first_thread, cfg.pin, [&](uint32_t k) {
    const uint32_t i = k + first_thread;
    try {
      if (i == cfg.threads) {
        if (!per_connection) {
          accept_loop(listener, *shared,
                      [&](platform::Socket& s) { place_in_pool(s, *shared, cfg.threads, options.max_clients); });
          return;
        }
        ConnectionThreadSet set(cfg.threads, options.max_clients, *shared, serve_on);
        accept_loop(listener, *shared, [&](platform::Socket& s) { set.place(s); });
        set.join_all();
        threads_started = set.started();
        // Each slot's journal gets what its connections logged.
        for (uint32_t w = 0; w < cfg.threads; w++) {
          if (errors[w].empty()) ctx.worker_finished(w);
        }
        return;
      }
      if (ctx.is_checkpointer(i, 1)) {
        errors[i] = ctx.take_checkpoints([&] { return shared->stop.load(platform::memory_order_acquire); });
        return;
      }
    } catch (const std::exception& e) {
      errors[i] = e.what();
      platform::request_termination();
      return;
    }
    serve_on(i, 0);
  });
  result.seconds = static_cast<double>(platform::wall_ns() - start) / 1e9;
  ctx.log_syncs_ended();  // before the pollers its wakers reach go
  ctx.throw_if_log_failed();
  for (const auto& e : errors) {
    if (!e.empty()) throw std::runtime_error(e);
  }
  Totals all;
  for (const Totals& t : totals) all.merge(t);
  result.connections = all.connections;
  result.commands = all.commands;
  result.transactions = all.transactions;
  result.cc_aborts = all.cc_aborts;
  result.errors = all.errors;
  result.protocol_errors = all.protocol_errors;
  result.waits = all.waits;
  result.dropped = all.dropped;
  result.lock_waits = all.lock_waits;
  result.threads_started = threads_started;
  result.latency = all.latency;
  result.over_query_limit = all.over_query_limit;
  result.timed_out = all.timed_out;
  result.durable_reads = all.durable_reads;
  result.reply_writes = all.reply_writes;
  result.refused = shared->refused.load(platform::memory_order_relaxed);
  const RunResult::Log log = ctx.close_log();
  result.log_records = log.records;
  result.log_bytes = log.bytes;
  result.durable_epoch = log.durable_epoch;
  result.checkpoints = log.checkpoints;
  ctx.finish();
  return result;
}

}  // namespace

uint64_t reserved_descriptors(uint32_t threads) {
  return kReservedDescriptors + kDescriptorsPerWorker * (uint64_t{threads} + 1);
}

std::string fit_max_clients(uint32_t threads, ServeOptions& options, std::string& note) {
  note.clear();
  const uint64_t reserve = reserved_descriptors(threads == 0 ? platform::hardware_cores() : threads);
  const uint64_t need = uint64_t{options.max_clients} + reserve;
  platform::DescriptorLimit limit = platform::descriptor_limit();
  if (limit.soft >= need) return {};
  const uint64_t raise_to = std::min(need, limit.hard);
  std::string why;
  if (raise_to > limit.soft) {
    why = platform::set_descriptor_limit(raise_to);
    if (why.empty()) limit.soft = raise_to;
  }
  if (limit.soft >= need) return {};
  if (limit.soft <= reserve) {
    return "the open-descriptor limit (ulimit -n) of " + std::to_string(limit.soft) +
           " leaves no room for a client: abyss serve keeps " + std::to_string(reserve) +
           " for itself with these --threads; raise it past that";
  }
  const uint64_t fits = limit.soft - reserve;
  note = "--max-clients " + std::to_string(options.max_clients) + " needs " + std::to_string(need) +
         " open descriptors but the limit (ulimit -n) is " + std::to_string(limit.soft) + ", hard limit " +
         (limit.hard == ~uint64_t{0} ? std::string("unlimited") : std::to_string(limit.hard)) +
         (why.empty() ? std::string() : " (" + why + ")") + ": maxclients lowered to " + std::to_string(fits);
  options.max_clients = static_cast<uint32_t>(fits);
  return {};
}

std::string check_serve(const Config& cfg, const ServeOptions& options) {
  if (platform::kSimulated) return "abyss serve runs on real cores only: this is a simulated build";
  if (cfg.workload != Kv::kTraits.name) {
    return "--workload " + cfg.workload + ": abyss serve serves the kv workload's table only";
  }
  if (options.bind.empty()) return "--bind is empty: give a host name or address to listen on";
  if (options.max_clients == 0) return "--max-clients 0: at least one client must be able to connect";
  if (options.client_query_buffer_limit < kMinClientLimitBytes) {
    return "--client-query-buffer-limit " + std::to_string(options.client_query_buffer_limit) +
           ": at least 1048576 bytes (1 MiB), as in Redis";
  }
  if (options.proto_max_bulk_len < kMinClientLimitBytes) {
    return "--proto-max-bulk-len " + std::to_string(options.proto_max_bulk_len) +
           ": at least 1048576 bytes (1 MiB), as in Redis";
  }
  if (options.multi_max_commands == 0) return "--multi-max-commands 0: a transaction must be able to queue a command";
  if (options.semantic_drop && options.schedule != Schedule::ContentionAware) {
    return "--semantic-drop on drops weak writes that contention-aware scheduling cannot run at once: it needs "
           "--schedule contention-aware";
  }
  if (options.connection_threads == ConnectionThreads::PerConnection && cfg.pin) {
    return "--pin binds the pool's worker i to core i: --connection-threads per-connection starts a thread for each "
           "connection, bound to none";
  }
  if (auto err = check_log(cfg); !err.empty()) return err;
  return {};
}

ServeResult serve(const Config& cfg, const ServeOptions& options,
                  const std::function<void(uint16_t port, uint32_t threads)>& listening) {
  if (auto err = check_serve(cfg, options); !err.empty()) throw std::invalid_argument(err);
  Config served = cfg;
  if (served.threads == 0) served.threads = platform::hardware_cores();
  platform::catch_termination();
  return cc::Registry::dispatch(served.cc, [&]<class CC>() { return serve_with<CC>(served, options, listening); });
}

}  // namespace abyss::server
