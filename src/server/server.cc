#include "server/server.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
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

// The acceptor: hands each new connection to the worker with the fewest
// open, or past --max-clients refuses it; on SIGTERM or SIGINT stops the workers.
void accept_loop(platform::Socket& listener, Shared& shared, uint32_t workers, uint32_t max_clients) {
  platform::Poller poller;
  (void)poller.add(listener, 0);
  std::vector<platform::PollEvent> events(4);
  while (!platform::termination_requested()) {
    if (poller.wait(events, kIdleWaitMs) == 0) continue;
    for (;;) {
      platform::Socket s = platform::accept_tcp(listener);
      if (!s.is_open()) break;
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
        static constexpr std::string_view kFull = "-ERR max number of clients reached\r\n";
        (void)s.write(kFull.data(), kFull.size());
        shared.refused.fetch_add(1, platform::memory_order_relaxed);
        continue;
      }
      shared.counters[best].connections.fetch_add(1, platform::memory_order_relaxed);
      {
        shared.inboxes[best].latch.lock();
        shared.inboxes[best].sockets.push_back(std::move(s));
        shared.inboxes[best].latch.unlock();
      }
      shared.pollers[best]->wake();
    }
  }
  shared.stop.store(true, platform::memory_order_release);
  for (auto& p : shared.pollers) p->wake();
}

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
  auto shared = std::make_unique<Shared>(cfg.threads, cfg.partitions);
  for (const auto& p : shared->pollers) {
    if (!p->error().empty()) throw std::runtime_error(p->error());
  }
  const std::string info_head = "# Server\r\nabyss_version:" + std::string(git_rev()) + "\r\ncc:" + cfg.cc +
                                "\r\nthreads:" + std::to_string(cfg.threads) + "\r\ntcp_port:" + std::to_string(port) +
                                "\r\n";
  const bool oversubscribed = cfg.threads + 1 > platform::hardware_cores();
  listening(port, cfg.threads);

  std::vector<Totals> totals(cfg.threads);
  std::vector<std::string> errors(cfg.threads + 2);
  const uint64_t start = platform::wall_ns();
  platform::run_threads(ctx.threads(1), cfg.pin, [&](uint32_t i) {
    try {
      if (i == cfg.threads) {
        accept_loop(listener, *shared, cfg.threads, options.max_clients);
        return;
      }
      if (ctx.is_checkpointer(i, 1)) {
        errors[i] = ctx.take_checkpoints([&] { return shared->stop.load(platform::memory_order_acquire); });
        return;
      }
      ServerWorker<CC> worker(i, cfg, options, cc, workers[i], ctx.layout(), kv, *shared, info_head);
      totals[i] = worker.run(&workers.epochs(), oversubscribed);
      ctx.worker_finished(i);
    } catch (const std::exception& e) {
      errors[i] = e.what();
      // One failed worker stops the server: the others would wait on it.
      platform::request_termination();
    }
    if (i < cfg.threads) ctx.worker_left(i);
  });
  result.seconds = static_cast<double>(platform::wall_ns() - start) / 1e9;
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
  result.latency = all.latency;
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

std::string check_serve(const Config& cfg, const ServeOptions& options) {
  if (platform::kSimulated) return "abyss serve runs on real cores only: this is a simulated build";
  if (cfg.workload != Kv::kTraits.name) {
    return "--workload " + cfg.workload + ": abyss serve serves the kv workload's table only";
  }
  if (options.bind.empty()) return "--bind is empty: give a host name or address to listen on";
  if (options.max_clients == 0) return "--max-clients 0: at least one client must be able to connect";
  if (options.semantic_drop && options.schedule != Schedule::ContentionAware) {
    return "--semantic-drop on drops weak writes that contention-aware scheduling cannot run at once: it needs "
           "--schedule contention-aware";
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
