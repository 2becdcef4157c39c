// `abyss serve`, the kv table over RESP2, and `abyss load`, the NoSQL
// study's clients (docs/server.md).
#include <cstdint>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "apps/commands.h"
#include "common/config.h"
#include "server/load.h"
#include "server/server.h"
#include "workload/kv/kv.h"

namespace abyss::cli {

namespace {

// `abyss serve`: exit 2 for a flag or log that cannot be served, before
// anything is loaded; 1 for a failure while serving.
int serve_command(const CLI::App& serve, Config& cfg, const abyss::server::ServeOptions& given) {
  auto refuse = [](const std::string& err) {
    std::fprintf(stderr, "abyss: %s\n", err.c_str());
    return 2;
  };
  if (serve.count("--threads") == 0) cfg.threads = 0;  // one worker per core (server/server.h)
  const std::string err = check_config(serve, cfg, Use::Serve, [&] { return abyss::server::check_serve(cfg, given); });
  if (!err.empty()) return refuse(err);
  abyss::server::ServeOptions options = given;
  std::string note;
  if (auto why = abyss::server::fit_max_clients(cfg.threads, options, note); !why.empty()) return refuse(why);
  if (!note.empty()) std::fprintf(stderr, "abyss serve: %s\n", note.c_str());
  abyss::server::ServeResult r;
  uint32_t served_threads = 0;
  try {
    r = abyss::server::serve(cfg, options, [&](uint16_t port, uint32_t threads) {
      served_threads = threads;
      std::printf("abyss serve: listening on %s:%u (cc=%s threads=%u log=%s, %llu slots)\n", options.bind.c_str(), port,
                  cfg.cc.c_str(), threads, cfg.log.policy == abyss::LogPolicy::Off ? "off" : cfg.log.dir.c_str(),
                  static_cast<unsigned long long>(cfg.settings<abyss::KvConfig>().slots));
      std::fflush(stdout);
    });
  } catch (const std::invalid_argument& e) {
    return refuse(e.what());
  }
  std::printf(
      "abyss serve: stopped after %.1f s: %llu connection(s), %llu command(s), %llu transaction(s), %llu cc "
      "abort(s), %llu error repl(ies), %llu protocol error(s)\n",
      r.seconds, static_cast<unsigned long long>(r.connections), static_cast<unsigned long long>(r.commands),
      static_cast<unsigned long long>(r.transactions), static_cast<unsigned long long>(r.cc_aborts),
      static_cast<unsigned long long>(r.errors), static_cast<unsigned long long>(r.protocol_errors));
  if (r.reply_writes > 0) {
    std::printf("  replies       %llu socket write(s), %.1f command(s) per write\n",
                static_cast<unsigned long long>(r.reply_writes),
                static_cast<double>(r.commands) / static_cast<double>(r.reply_writes));
  }
  if (r.refused + r.over_query_limit + r.timed_out > 0) {
    std::printf(
        "  clients       %llu refused (--max-clients or the descriptor limit), %llu closed past "
        "--client-query-buffer-limit, %llu closed idle (--timeout)\n",
        static_cast<unsigned long long>(r.refused), static_cast<unsigned long long>(r.over_query_limit),
        static_cast<unsigned long long>(r.timed_out));
  }
  if (options.connection_threads == abyss::server::ConnectionThreads::PerConnection) {
    std::printf("  threads       %llu started, one per connection, on %u slot(s)\n",
                static_cast<unsigned long long>(r.threads_started), served_threads);
  }
  if (options.locking != abyss::server::Locking::None) {
    std::printf("  locking       %s: %llu wait(s) for a locked document\n",
                std::string(abyss::server::kLockingNames[static_cast<std::size_t>(options.locking)]).c_str(),
                static_cast<unsigned long long>(r.lock_waits));
  }
  if (options.schedule == abyss::server::Schedule::ContentionAware) {
    const double ops = static_cast<double>(r.transactions + r.dropped);
    std::printf(
        "  scheduling    %llu wait(s) for a claimed partition, %llu weak write(s) dropped (%.2f%% of writes "
        "and reads run or dropped)\n",
        static_cast<unsigned long long>(r.waits), static_cast<unsigned long long>(r.dropped),
        ops > 0 ? 100.0 * static_cast<double>(r.dropped) / ops : 0.0);
  }
  if (r.latency.count() > 0) {
    std::printf("  latency us    p50 %.1f  p99 %.1f  p99.9 %.1f\n", static_cast<double>(r.latency.quantile(0.5)) / 1e3,
                static_cast<double>(r.latency.quantile(0.99)) / 1e3,
                static_cast<double>(r.latency.quantile(0.999)) / 1e3);
  }
  if (cfg.log.policy != abyss::LogPolicy::Off) {
    std::printf(
        "  log           %llu records, %llu bytes, durable epoch %llu, %llu checkpoint(s), %llu read-only "
        "transaction(s) of durable versions replied at once\n",
        static_cast<unsigned long long>(r.log_records), static_cast<unsigned long long>(r.log_bytes),
        static_cast<unsigned long long>(r.durable_epoch), static_cast<unsigned long long>(r.checkpoints),
        static_cast<unsigned long long>(r.durable_reads));
  }
  if (r.recovered) {
    std::printf("  recovered     %llu writes applied from the log\n",
                static_cast<unsigned long long>(r.recovered_writes));
  }
  return 0;
}

// `abyss load`: exit 2 for options that cannot run or a server that cannot
// be reached; 1 when a connection fails on the way.
int load_command(const abyss::server::LoadOptions& options) {
  if (auto err = abyss::server::check_load(options); !err.empty()) {
    std::fprintf(stderr, "abyss: %s\n", err.c_str());
    return 2;
  }
  abyss::server::LoadResult r;
  try {
    r = abyss::server::run_load(options);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "abyss: %s\n", e.what());
    return 2;
  }
  const double ops = r.seconds > 0 ? static_cast<double>(r.sets) / r.seconds : 0;
  const auto us = [&](double q) { return static_cast<double>(r.latency.quantile(q)) / 1e3; };
  std::printf("abyss load: %u client(s), %llu SETs of %u bytes in %.3f s: %.0f ops/s, p50 %.1f us, p99 %.1f us\n",
              options.clients, static_cast<unsigned long long>(r.sets), options.value_size, r.seconds, ops, us(0.5),
              us(0.99));
  std::printf("  replies       %llu OK, %llu DROPPED (%.2f%%), %llu error(s)%s%s\n",
              static_cast<unsigned long long>(r.ok), static_cast<unsigned long long>(r.dropped),
              r.sets > 0 ? 100.0 * static_cast<double>(r.dropped) / static_cast<double>(r.sets) : 0.0,
              static_cast<unsigned long long>(r.errors),
              r.first_error.empty() ? "" : "; first: ", r.first_error.c_str());
  if (auto err = abyss::server::write_load_json(options, r); !err.empty()) {
    std::fprintf(stderr, "abyss: %s\n", err.c_str());
    return 1;
  }
  return r.errors > 0 ? 1 : 0;
}

}  // namespace

std::vector<Command> add_serve(CLI::App& app) {
  auto serve_cfg = std::make_shared<Config>();
  serve_cfg->workload = "kv";
  auto serve_options = std::make_shared<abyss::server::ServeOptions>();
  CLI::App* serve = app.add_subcommand(
      "serve", "serve the kv table over TCP in the Redis protocol (RESP2), each command a transaction under --cc");
  add_run_flags(*serve, *serve_cfg);
  serve->add_option("--bind", serve_options->bind, "the address to listen on (default 127.0.0.1)");
  serve->add_option("--port", serve_options->port, "the TCP port (default 6380; 0: one the system picks)")
      ->check(CLI::Range(0, 65535));
  serve->add_option("--port-file", serve_options->port_file, "once listening, write the port to FILE");
  serve
      ->add_option("--max-clients", serve_options->max_clients,
                   "connections open at once at most; lowered to what the open-descriptor limit (ulimit -n) leaves "
                   "where it cannot be raised (default 10000)")
      ->check(CLI::Range(1u, 1'000'000u));
  serve
      ->add_option("--client-query-buffer-limit", serve_options->client_query_buffer_limit,
                   "bytes of a client's input not yet parsed at most, and of its MULTI queue: past it the client is "
                   "answered an error and closed (default 1073741824, 1 GiB)")
      ->check(CLI::Range(uint64_t{1} << 20, uint64_t{1} << 40));
  serve
      ->add_option("--proto-max-bulk-len", serve_options->proto_max_bulk_len,
                   "bytes of one argument at most: a longer one is a protocol error (default 536870912, 512 MiB)")
      ->check(CLI::Range(uint64_t{1} << 20, uint64_t{1} << 40));
  serve
      ->add_option("--multi-max-commands", serve_options->multi_max_commands,
                   "commands one MULTI queues at most: past them the transaction is discarded (default 1048576)")
      ->check(CLI::Range(1u, 1u << 30));
  serve
      ->add_option("--timeout", serve_options->timeout_s,
                   "seconds a client may stay idle before it is closed; 0: for ever (default 0)")
      ->check(CLI::Range(0u, 1u << 30));
  serve
      ->add_option_function<std::string>(
          "--schedule",
          [serve_options](const std::string& v) {
            serve_options->schedule =
                v == "fifo" ? abyss::server::Schedule::Fifo : abyss::server::Schedule::ContentionAware;
          },
          "fifo: each command runs at once, contending under --cc; contention-aware: it first claims its "
          "--keyspace-partitions partitions and waits while one is claimed (default fifo)")
      ->check(CLI::IsMember({"fifo", "contention-aware"}))
      ->default_str("fifo");
  serve
      ->add_option_function<std::string>(
          "--semantic-drop", [serve_options](const std::string& v) { serve_options->semantic_drop = v == "on"; },
          "on: a weak write whose partition is claimed is dropped (+DROPPED) instead of waiting; needs --schedule "
          "contention-aware (default off)")
      ->check(CLI::IsMember({"on", "off"}))
      ->default_str("off");
  serve
      ->add_option_function<std::string>(
          "--locking",
          [serve_options](const std::string& v) {
            serve_options->locking = v == "hierarchical"  ? abyss::server::Locking::Hierarchical
                                     : v == "wait-signal" ? abyss::server::Locking::WaitSignal
                                                          : abyss::server::Locking::None;
          },
          "the lock manager a command passes before its transaction (the NoSQL study's): none; hierarchical "
          "(MongoDB's: intent locks on global, database and collection and a lock on each document, under one "
          "manager's latch); wait-signal (its fast path: atomic intent counts, a latch a document) (default none)")
      ->check(CLI::IsMember({"none", "hierarchical", "wait-signal"}))
      ->default_str("none");
  serve
      ->add_option_function<std::string>(
          "--connection-threads",
          [serve_options](const std::string& v) {
            serve_options->connection_threads = v == "per-connection" ? abyss::server::ConnectionThreads::PerConnection
                                                                      : abyss::server::ConnectionThreads::Pool;
          },
          "pool: --threads workers made at start, each an event loop over many connections; per-connection "
          "(MongoDB's): a thread created for each connection as it arrives, serving it alone until it closes, on one "
          "of --threads transaction slots (at most that many connections at once) (default pool)")
      ->check(CLI::IsMember({"pool", "per-connection"}))
      ->default_str("pool");
  serve
      ->add_option_function<std::string>(
          "--consistency", [serve_options](const std::string& v) { serve_options->weak = v == "weak"; },
          "the consistency of a SET or MSET that names none (SET k v WEAK|STRONG names its own) (default strong)")
      ->check(CLI::IsMember({"strong", "weak"}))
      ->default_str("strong");

  auto load_options = std::make_shared<abyss::server::LoadOptions>();
  CLI::App* load = app.add_subcommand(
      "load", "the NoSQL study's inserts as clients: each sets its own key range to random values over RESP2");
  load->add_option("--host", load_options->host, "the server's host (default 127.0.0.1)");
  load->add_option("--port", load_options->ports,
                   "the servers' ports, comma-separated: client i uses the i-th, "
                   "round and round")
      ->delimiter(',')
      ->required()
      ->check(CLI::Range(1, 65535));
  load->add_option("--clients", load_options->clients, "client threads, each with its connection (default 1)")
      ->check(CLI::Range(1u, 4096u));
  load->add_option("--total", load_options->total, "SETs over all clients (default 1000000)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40));
  load->add_option("--value-size", load_options->value_size, "bytes of each value (default 100)")
      ->check(CLI::Range(0u, 1u << 20));
  load->add_option("--pipeline", load_options->pipeline, "SETs a client sends before reading their replies (default 1)")
      ->check(CLI::Range(1u, 65536u));
  load->add_flag("--weak", load_options->weak, "send SET k v WEAK (abyss serve's weak consistency)");
  load->add_option("--seed", load_options->seed, "seed of the values (default 1)");
  load->add_option("--prefix", load_options->prefix, "keys are PREFIX<client>:<n> (default c)");
  load->add_option("--json", load_options->json_path, "also write the result as JSON to FILE");

  return {{serve, [=] { return serve_command(*serve, *serve_cfg, *serve_options); }},
          {load, [=] { return load_command(*load_options); }}};
}

}  // namespace abyss::cli
