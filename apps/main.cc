// The abyss binary: flags -> Config -> run -> report (docs/architecture.md, "Layers").
// Exit codes: 0 success; 2 bad invocation (one line naming the flag, the value
// and what is allowed; nothing runs); 1 a failure at run time.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/commands.h"
#include "check/history.h"
#include "check/tpcc.h"
#include "common/build_info.h"
#include "common/config.h"
#include "common/knob.h"
#include "engine/describe.h"
#include "engine/engine.h"
#include "engine/index_bench.h"
#include "engine/knobs.h"
#include "engine/probe.h"
#include "engine/recover.h"
#include "engine/report.h"
#include "engine/scan_bench.h"
#include "server/load.h"
#include "server/server.h"
#include "workload/kv/kv.h"
#include "workload/workloads.h"

namespace {

using abyss::Config;

// The command line as a shell would take it back: words with anything but
// safe characters in single quotes.
std::string shell_line(int argc, char** argv) {
  std::string line;
  for (int i = 0; i < argc; i++) {
    const std::string word = argv[i];
    const bool plain = !word.empty() && word.find_first_not_of(
                                            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                            "0123456789-_./:=,+@%") == std::string::npos;
    if (i > 0) line += ' ';
    if (plain) {
      line += word;
      continue;
    }
    line += '\'';
    for (char c : word) line += c == '\'' ? std::string("'\\''") : std::string(1, c);
    line += '\'';
  }
  return line;
}

int run_command(const Config& cfg, const std::string& command_line) {
  abyss::RunResult r;
  try {
    r = abyss::run(cfg);
  } catch (const std::invalid_argument& e) {
    // What the run was given cannot be used: a log to recover that fails its checks.
    std::fprintf(stderr, "abyss: %s\n", e.what());
    return 2;
  }
  r.command_line = command_line;
  abyss::print_report(r, stdout);
  if (!cfg.json_path.empty()) {
    if (auto err = abyss::write_report_json(r, cfg.json_path); !err.empty()) throw std::runtime_error(err);
  }
  return 0;
}

// `abyss check` exits 0 when the property holds, 1 only when the data
// violates it, and 2 when there is no verdict: the input cannot be read
// (InputError names the file and line) or could not be checked. Scripts can
// then tell a broken run from a broken file (docs/formats.md).
int check_failure(const std::string& input, const std::exception& e) {
  if (dynamic_cast<const abyss::check::InputError*>(&e) != nullptr) {
    std::fprintf(stderr, "abyss: %s\n", e.what());  // already "FILE:LINE: reason"
  } else {
    std::fprintf(stderr, "abyss: %s: cannot check: %s\n", input.c_str(), e.what());
  }
  return 2;
}

int check_tpcc_command(const std::string& dir, bool inserts) {
  try {
    const auto report = abyss::check::check_tpcc_dir(dir, inserts);
    std::printf("%s", report.summary().c_str());
    return report.all_pass() ? 0 : 1;
  } catch (const std::exception& e) {
    return check_failure(dir, e);
  }
}

// `abyss recover`: exit 2 for a directory or journal it cannot use (named,
// with what is wrong and where), 1 when an output cannot be written.
int recover_command(const abyss::RecoverOptions& options) {
  if (auto err = abyss::check_recover_options(options); !err.empty()) {
    std::fprintf(stderr, "abyss: %s\n", err.c_str());
    return 2;
  }
  abyss::RecoverResult r;
  try {
    r = abyss::recover(options);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "abyss: %s\n", e.what());
    return 2;
  }
  const double gb = static_cast<double>(r.journal_bytes) / 1e9;
  std::printf("abyss recover: %s (%s under %s, %u journal(s))\n", options.dir.c_str(), r.workload.c_str(), r.cc.c_str(),
              r.journals);
  std::printf("  durable epoch %14llu\n", static_cast<unsigned long long>(r.durable_epoch));
  if (!r.checkpoint.empty()) {
    std::printf("  checkpoint    %14.3f GB read, %llu rows (%s), journals replayed from epoch %llu\n",
                static_cast<double>(r.checkpoint_bytes) / 1e9, static_cast<unsigned long long>(r.checkpoint_rows),
                r.checkpoint.c_str(), static_cast<unsigned long long>(r.replay_from));
  }
  std::printf(
      "  journals      %14.3f GB read, %llu records: %llu applied, %llu of later epochs not, %llu older "
      "than the checkpoint\n",
      gb, static_cast<unsigned long long>(r.records), static_cast<unsigned long long>(r.records_applied),
      static_cast<unsigned long long>(r.records_beyond), static_cast<unsigned long long>(r.records_covered));
  std::printf("  rows          %14llu writes applied, %llu superseded by a later version\n",
              static_cast<unsigned long long>(r.writes_applied), static_cast<unsigned long long>(r.writes_superseded));
  std::printf("  load          %14.2f s (the run's load, rebuilt)\n", r.load_seconds);
  // The checkpoint and the journals, over the seconds both took to read and apply.
  const double read_gb = gb + static_cast<double>(r.checkpoint_bytes) / 1e9;
  std::printf("  replay        %14.2f s, %.2f GB/s (checkpoint and journals)\n", r.replay_seconds,
              r.replay_seconds > 0 ? read_gb / r.replay_seconds : 0.0);
  if (r.torn_journals > 0) {
    std::printf("  torn          %14u journal(s) end in a record the crash cut off; first: %s\n", r.torn_journals,
                r.torn_note.c_str());
  }
  return 0;
}

// `abyss probe`: the measurements `abyss sim calibrate` reads.
int probe_command(bool as_json) {
  abyss::HostProbe p;
  if (auto err = abyss::probe_host(p); !err.empty()) {
    std::fprintf(stderr, "abyss: %s\n", err.c_str());
    return 2;
  }
  if (as_json) {
    nlohmann::json j;
    j["core_ghz"] = p.core_ghz;
    j["clock_read_ns"] = p.clock_read_ns;
    j["rmw_ns"] = p.rmw_ns;
    j["independent_ns"] = p.independent_ns;
    j["stream_gbps"] = p.stream_gbps;
    for (std::size_t i = 0; i < p.latency_ns.size(); i++) {
      j["latency_ns"].push_back({{"bytes", p.latency_ns[i].first},
                                 {"ns", p.latency_ns[i].second},
                                 {"independent_ns", p.independent_by_set[i].second}});
    }
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  std::printf("core clock        %8.2f GHz\n", p.core_ghz);
  std::printf("cycle counter     %8.1f ns per read\n", p.clock_read_ns);
  std::printf("atomic RMW        %8.1f ns, uncontended\n", p.rmw_ns);
  std::printf("random reads        dependent      independent\n");
  for (std::size_t i = 0; i < p.latency_ns.size(); i++) {
    const auto [bytes, ns] = p.latency_ns[i];
    const double free_ns = p.independent_by_set[i].second;
    std::printf("%8llu KiB  %8.1f ns %5.0f cyc  %8.2f ns %5.1f cyc\n", static_cast<unsigned long long>(bytes >> 10), ns,
                ns * p.core_ghz, free_ns, free_ns * p.core_ghz);
  }
  std::printf("stream read       %8.1f GB/s\n", p.stream_gbps);
  return 0;
}

// `abyss bench memory`: what random line reads cost on this machine, on small
// and huge pages, the read-only YCSB throughput they bound, and the
// throughput of transactions that do nothing but an indexed read's misses.
struct MemoryBench {
  uint64_t size_mib = 2048;
  std::string pages = "both";
  uint32_t lines_per_txn = 32;
  uint32_t accesses_per_txn = 16;
  std::string work_ns = "0";  // parsed by the command: CLI11's range check lets NaN through
  bool as_json = false;
};

int memory_bench_command(const MemoryBench& b) {
  double work_ns = 0;
  if (auto err = abyss::parse_real(b.work_ns, 0, 100'000, work_ns); !err.empty()) {
    std::fprintf(stderr, "abyss: --work-ns %s\n", err.c_str());
    return 2;
  }
  std::vector<bool> kinds;
  if (b.pages != "huge") kinds.push_back(false);
  if (b.pages != "small") kinds.push_back(true);
  // Each access a bucket line and its row's lines: measured when the lines
  // divide into whole accesses of at least one row line.
  abyss::ChainedShape shape;
  if (b.lines_per_txn % b.accesses_per_txn == 0 && b.lines_per_txn / b.accesses_per_txn >= 2) {
    shape = {b.accesses_per_txn, b.lines_per_txn / b.accesses_per_txn - 1, work_ns};
  }
  nlohmann::json j;
  j["size_bytes"] = b.size_mib << 20;
  j["lines_per_txn"] = b.lines_per_txn;
  j["accesses_per_txn"] = b.accesses_per_txn;
  j["work_ns"] = work_ns;
  if (!b.as_json) {
    std::printf("one core's random 64-byte line reads over %llu MiB; bound for a read-only transaction of %u lines\n",
                static_cast<unsigned long long>(b.size_mib), b.lines_per_txn);
    if (shape.row_lines > 0) {
      std::printf(
          "chained: %u accesses a transaction, each a bucket line and then its row's %u, prefetched in a burst "
          "a transaction or pipelined; %.0f ns of work after each access\n",
          shape.accesses, shape.row_lines, work_ns);
    } else {
      std::printf("chained: not measured (%u lines are not %u accesses of a bucket line and at least one row line)\n",
                  b.lines_per_txn, b.accesses_per_txn);
    }
    std::printf("%-6s %16s %16s %18s %18s %15s %15s\n", "pages", "dependent M/s", "independent M/s",
                "bound txn/s (dep)", "bound txn/s (ind)", "chained burst", "chained pipe");
  }
  for (const bool huge : kinds) {
    abyss::MemoryProbe p;
    if (auto err = abyss::probe_memory(b.size_mib << 20, huge, shape, p); !err.empty()) {
      std::fprintf(stderr, "abyss: %s\n", err.c_str());
      return 2;
    }
    const double dependent = 1e3 / p.dependent_ns;  // M reads/s
    const double independent = 1e3 / p.independent_ns;
    const double chained = p.chained_ns > 0 ? 1e9 / p.chained_ns : 0;  // txn/s
    const double pipelined = p.chained_pipeline_ns > 0 ? 1e9 / p.chained_pipeline_ns : 0;
    const char* name = huge ? "huge" : "small";
    nlohmann::json row = {{"pages", name},
                          {"dependent_ns", p.dependent_ns},
                          {"independent_ns", p.independent_ns},
                          {"dependent_lines_per_s", dependent * 1e6},
                          {"independent_lines_per_s", independent * 1e6},
                          {"bound_txn_per_s_dependent", dependent * 1e6 / b.lines_per_txn},
                          {"bound_txn_per_s_independent", independent * 1e6 / b.lines_per_txn}};
    if (chained > 0) {
      row["chained_ns_per_txn"] = p.chained_ns;
      row["chained_txn_per_s"] = chained;
      row["chained_pipeline_ns_per_txn"] = p.chained_pipeline_ns;
      row["chained_pipeline_txn_per_s"] = pipelined;
    }
    j["pages"].push_back(row);
    if (!b.as_json) {
      std::printf("%-6s %16.2f %16.2f %18.0f %18.0f", name, dependent, independent, dependent * 1e6 / b.lines_per_txn,
                  independent * 1e6 / b.lines_per_txn);
      if (chained > 0) {
        std::printf(" %15.0f %15.0f\n", chained, pipelined);
      } else {
        std::printf(" %15s %15s\n", "-", "-");
      }
    }
  }
  if (b.as_json) std::printf("%s\n", j.dump(2).c_str());
  return 0;
}

// `abyss bench index`: the index structures alone, as a table of M ops/s,
// one row per operation and structure, one column per thread count.
int index_bench_command(const abyss::IndexBenchOptions& o, bool as_json) {
  if (auto why = abyss::index_bench_refusal(o); !why.empty()) {
    std::fprintf(stderr, "abyss: %s\n", why.c_str());
    return 2;
  }
  std::vector<abyss::IndexBenchResult> results;
  const std::string err =
      abyss::run_index_bench(o, results, [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); });
  if (!err.empty()) {
    std::fprintf(stderr, "abyss: %s\n", err.c_str());
    return 1;
  }
  if (as_json) {
    nlohmann::json j;
    j["keys"] = o.keys;
    j["seconds_per_measurement"] = o.seconds;
    for (const auto& r : results) {
      j["results"].push_back({{"structure", r.structure},
                              {"op", r.op},
                              {"threads", r.threads},
                              {"ops", r.ops},
                              {"seconds", r.seconds},
                              {"keys_visited", r.keys_visited},
                              {"mops", r.mops()}});
    }
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  std::printf("index structures alone: %llu keys loaded, %.2f s a measurement, M operations/s\n",
              static_cast<unsigned long long>(o.keys), o.seconds);
  std::printf("%-12s %-10s", "op", "structure");
  for (const uint32_t t : o.threads) std::printf(" %9u thr", t);
  std::printf("\n");
  const std::vector<std::string> ops = {"lookup", "scan-" + std::to_string(o.short_scan),
                                        "scan-" + std::to_string(o.long_scan), "insert"};
  for (const std::string& op : ops) {
    for (const std::string& s : o.structures) {
      std::printf("%-12s %-10s", op.c_str(), s.c_str());
      for (const uint32_t t : o.threads) {
        const auto it = std::find_if(results.begin(), results.end(), [&](const abyss::IndexBenchResult& r) {
          return r.op == op && r.structure == s && r.threads == t;
        });
        if (it == results.end()) {
          std::printf(" %13s", "-");
        } else {
          std::printf(" %13.3g", it->mops());
        }
      }
      std::printf("\n");
    }
  }
  return 0;
}

// `abyss bench scan`: the block list alone through the Terrier study's
// benchmarks, as the study's tables: per benchmark, N and mode, the elapsed
// ms, M items/s and both against N = 1.
int scan_bench_command(const abyss::ScanBenchOptions& o, bool as_json) {
  if (auto why = abyss::scan_bench_refusal(o); !why.empty()) {
    std::fprintf(stderr, "abyss: %s\n", why.c_str());
    return 2;
  }
  std::vector<abyss::ScanBenchResult> results;
  const std::string err =
      abyss::run_scan_bench(o, results, [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); });
  if (!err.empty()) {
    std::fprintf(stderr, "abyss: %s\n", err.c_str());
    return 1;
  }
  if (!as_json) {
    std::printf("%s", abyss::scan_bench_table(o, results).c_str());
    return 0;
  }
  nlohmann::json j;
  j["tuples"] = o.tuples;
  j["reps"] = o.reps;
  for (const auto& r : results) {
    j["results"].push_back({{"benchmark", r.benchmark},
                            {"mode", r.mode},
                            {"threads", r.threads},
                            {"items", r.items},
                            {"ms", r.ms},
                            {"runs", r.runs},
                            {"mitems_per_s", r.mitems_per_s()}});
  }
  std::printf("%s\n", j.dump(2).c_str());
  return 0;
}

int check_history_command(const std::string& path) {
  try {
    const auto report = abyss::check::check_history_file(path);
    std::printf("%s\n", report.summary().c_str());
    return report.serializable() ? 0 : 1;
  } catch (const std::exception& e) {
    return check_failure(path, e);
  }
}

// The innermost subcommand that was given, or `app` itself.
const CLI::App* innermost(const CLI::App& app) {
  for (const CLI::App* sub : app.get_subcommands()) return innermost(*sub);
  return &app;
}

std::string subcommand_names(const CLI::App& at) {
  std::string names;
  for (const CLI::App* sub : at.get_subcommands({})) names += (names.empty() ? "" : ", ") + sub->get_name();
  return names;
}

// "abyss run" for the run subcommand: the command as the user typed it.
std::string command_path(const CLI::App& at) {
  std::string path = at.get_name();
  for (const CLI::App* p = at.get_parent(); p != nullptr; p = p->get_parent()) path.insert(0, p->get_name() + " ");
  return path;
}

// `abyss serve`: exit 2 for a flag or log that cannot be served, before
// anything is loaded; 1 for a failure while serving.
int serve_command(const CLI::App& serve, Config& cfg, const abyss::server::ServeOptions& options) {
  auto refuse = [](const std::string& err) {
    std::fprintf(stderr, "abyss: %s\n", err.c_str());
    return 2;
  };
  if (serve.count("--threads") == 0) cfg.threads = 0;  // one worker per core (server/server.h)
  if (auto err = abyss::unserved_flag([&](const abyss::Knob& k) { return serve.count(k.flag()) > 0; }); !err.empty()) {
    return refuse(err);
  }
  if (cfg.log.recover) {
    std::string err = abyss::check_log(cfg);
    if (err.empty()) {
      err = abyss::adopt_logged_workload(cfg, [&](const abyss::Knob& k) { return serve.count(k.flag()) > 0; });
    }
    if (!err.empty()) return refuse(err);
  }
  if (auto err = abyss::server::check_serve(cfg, options); !err.empty()) return refuse(err);
  if (auto err = abyss::cli::workload_flag_mismatch(serve, cfg); !err.empty()) return refuse(err);
  // A run's key ranges (--kv-keys-per-worker) are no part of a served table.
  Config checked = cfg;
  checked.settings<abyss::KvConfig>().keys_per_worker = 1;
  if (auto err = abyss::validate_workload(checked); !err.empty()) return refuse(err);
  if (cfg.memory_check) {
    if (auto why = abyss::memory_shortfall(checked); !why.empty()) {
      return refuse("this table " + why + " (--memory-check off serves it anyway)");
    }
  }
  abyss::server::ServeResult r;
  try {
    r = abyss::server::serve(cfg, options, [&](uint16_t port, uint32_t threads) {
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
    std::printf("  log           %llu records, %llu bytes, durable epoch %llu, %llu checkpoint(s)\n",
                static_cast<unsigned long long>(r.log_records), static_cast<unsigned long long>(r.log_bytes),
                static_cast<unsigned long long>(r.durable_epoch), static_cast<unsigned long long>(r.checkpoints));
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

// One line for a parse error: CLI11 says only "A subcommand is required" or
// "The following arguments were not expected"; name what there is instead.
std::string explain(const CLI::App& app, const CLI::ParseError& e) {
  const CLI::App* at = innermost(app);
  std::string what = e.what();
  if (what.find("subcommand") != std::string::npos) return what + ": one of " + subcommand_names(*at);
  if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
    // The first word that is a flag, else the first word.
    std::vector<std::string> extras = at->remaining();
    std::string word = extras.empty() ? std::string() : extras.front();
    for (const std::string& x : extras) {
      if (x.starts_with("-")) {
        word = x;
        break;
      }
    }
    if (word.starts_with("-")) {
      std::vector<std::string> flags;
      for (const CLI::Option* o : at->get_options()) {
        for (const std::string& n : o->get_lnames()) flags.push_back("--" + n);
      }
      const auto close = abyss::similar_names(word, flags);
      return word + ": not a flag of `" + command_path(*at) + "`" +
             (close.empty() ? "; see `" + command_path(*at) + " --help`" : "; did you mean " + close.front() + "?");
    }
    if (!at->get_subcommands({}).empty()) {
      std::vector<std::string> names;
      for (const CLI::App* sub : at->get_subcommands({})) names.push_back(sub->get_name());
      const auto close = abyss::similar_names(word, names);
      return "'" + word + "' is not a subcommand of `" + command_path(*at) + "`; one of " + subcommand_names(*at) +
             (close.empty() ? "" : " (did you mean " + close.front() + "?)");
    }
    return "'" + word + "': unexpected argument of `" + command_path(*at) + "`";
  }
  return what;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"abyss: a main-memory OLTP engine for evaluating concurrency control", "abyss"};
  app.require_subcommand(1);
  app.set_version_flag("--version",
                       "abyss " + std::string(abyss::git_rev()) + " (" + std::string(abyss::build_type()) + ")");

  Config run_cfg;
  CLI::App* run = app.add_subcommand("run", "one run of a workload under one scheme");
  abyss::cli::add_run_flags(*run, run_cfg);
  bool dry_run = false;
  run->add_flag("--dry-run", dry_run, "check every flag, print the configuration as JSON and run nothing");

  Config serve_cfg;
  serve_cfg.workload = "kv";
  abyss::server::ServeOptions serve_options;
  CLI::App* serve = app.add_subcommand(
      "serve", "serve the kv table over TCP in the Redis protocol (RESP2), each command a transaction under --cc");
  abyss::cli::add_run_flags(*serve, serve_cfg);
  serve->add_option("--bind", serve_options.bind, "the address to listen on (default 127.0.0.1)");
  serve->add_option("--port", serve_options.port, "the TCP port (default 6380; 0: one the system picks)")
      ->check(CLI::Range(0, 65535));
  serve->add_option("--port-file", serve_options.port_file, "once listening, write the port to FILE");
  serve->add_option("--max-clients", serve_options.max_clients, "connections open at once at most (default 10000)")
      ->check(CLI::Range(1u, 1'000'000u));
  serve
      ->add_option_function<std::string>(
          "--schedule",
          [&serve_options](const std::string& v) {
            serve_options.schedule =
                v == "fifo" ? abyss::server::Schedule::Fifo : abyss::server::Schedule::ContentionAware;
          },
          "fifo: each command runs at once, contending under --cc; contention-aware: it first claims its "
          "--keyspace-partitions partitions and waits while one is claimed (default fifo)")
      ->check(CLI::IsMember({"fifo", "contention-aware"}))
      ->default_str("fifo");
  serve
      ->add_option_function<std::string>(
          "--semantic-drop", [&serve_options](const std::string& v) { serve_options.semantic_drop = v == "on"; },
          "on: a weak write whose partition is claimed is dropped (+DROPPED) instead of waiting; needs --schedule "
          "contention-aware (default off)")
      ->check(CLI::IsMember({"on", "off"}))
      ->default_str("off");
  serve
      ->add_option_function<std::string>(
          "--consistency", [&serve_options](const std::string& v) { serve_options.weak = v == "weak"; },
          "the consistency of a SET or MSET that names none (SET k v WEAK|STRONG names its own) (default strong)")
      ->check(CLI::IsMember({"strong", "weak"}))
      ->default_str("strong");

  abyss::server::LoadOptions load_options;
  CLI::App* load = app.add_subcommand(
      "load", "the NoSQL study's inserts as clients: each sets its own key range to random values over RESP2");
  load->add_option("--host", load_options.host, "the server's host (default 127.0.0.1)");
  load->add_option("--port", load_options.ports,
                   "the servers' ports, comma-separated: client i uses the i-th, "
                   "round and round")
      ->delimiter(',')
      ->required()
      ->check(CLI::Range(1, 65535));
  load->add_option("--clients", load_options.clients, "client threads, each with its connection (default 1)")
      ->check(CLI::Range(1u, 4096u));
  load->add_option("--total", load_options.total, "SETs over all clients (default 1000000)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40));
  load->add_option("--value-size", load_options.value_size, "bytes of each value (default 100)")
      ->check(CLI::Range(0u, 1u << 20));
  load->add_option("--pipeline", load_options.pipeline, "SETs a client sends before reading their replies (default 1)")
      ->check(CLI::Range(1u, 65536u));
  load->add_flag("--weak", load_options.weak, "send SET k v WEAK (abyss serve's weak consistency)");
  load->add_option("--seed", load_options.seed, "seed of the values (default 1)");
  load->add_option("--prefix", load_options.prefix, "keys are PREFIX<client>:<n> (default c)");
  load->add_option("--json", load_options.json_path, "also write the result as JSON to FILE");

  CLI::App* check = app.add_subcommand("check", "check a run's output");
  check->require_subcommand(1);
  std::string history_path;
  CLI::App* check_history = check->add_subcommand("history", "serializability of a --history log");
  // No CLI::ExistingFile: the checkers name a missing or unreadable input with
  // its reason, and exit 2 like for any input they cannot read.
  check_history->add_option("file", history_path, "the history log (JSON lines)")->required();
  std::string tpcc_dir;
  bool tpcc_inserts = true;
  CLI::App* check_tpcc = check->add_subcommand("tpcc", "TPC-C consistency conditions (clause 3.3.2) of a --dump DIR");
  check_tpcc->add_option("dir", tpcc_dir, "the dump directory of a TPC-C run")->required();
  check_tpcc
      ->add_option_function<std::string>(
          "--tpcc-inserts", [&tpcc_inserts](const std::string& v) { tpcc_inserts = v == "on"; },
          "whether the run inserted rows (off: skip conditions 2, 8, 9, 10)")
      ->check(CLI::IsMember({"on", "off"}))
      ->default_str("on");

  abyss::RecoverOptions recover_options;
  CLI::App* recover = app.add_subcommand(
      "recover", "rebuild the database of a --log-dir: its load, then every durable commit of its journals");
  recover->add_option("dir", recover_options.dir, "the log directory of a run with --log file")->required();
  recover->add_option("--dump", recover_options.dump_dir, "write DIR/<table>.csv for every table, as run --dump does");
  recover->add_option("--versions", recover_options.versions_path,
                      "write table,key,writer,deleted for every row a journal wrote");
  recover
      ->add_option("--threads", recover_options.threads, "replay threads (default: one per journal, at most the cores)")
      ->check(CLI::Range(1u, 1024u));
  recover->add_option("--json", recover_options.json_path, "write the recovery's numbers as JSON to FILE");

  bool describe_as_json = false;
  CLI::App* describe = app.add_subcommand("describe", "the schemes, workloads and knobs of this binary");
  describe->add_flag("--json", describe_as_json, "as JSON (what the harness reads)");

  bool probe_as_json = false;
  CLI::App* probe = app.add_subcommand(
      "probe", "measure this machine's clock, memory latencies and bandwidth (what abyss sim calibrate reads)");
  probe->add_flag("--json", probe_as_json, "as JSON");

  MemoryBench memory_bench;
  CLI::App* bench = app.add_subcommand("bench", "benchmarks of this machine (the bench tables are harness specs)");
  bench->require_subcommand(1);
  CLI::App* bench_memory = bench->add_subcommand(
      "memory", "one core's dependent and independent random line reads, small and huge pages (the memory bound)");
  bench_memory
      ->add_option("--size-mib", memory_bench.size_mib,
                   "region to read, MiB (default 2048; the bound needs one far larger than the caches, a smaller one "
                   "measures the caches)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 20));
  bench_memory->add_option("--pages", memory_bench.pages, "small | huge | both (default both)")
      ->check(CLI::IsMember({"small", "huge", "both"}));
  bench_memory
      ->add_option("--lines-per-txn", memory_bench.lines_per_txn,
                   "lines a read-only transaction reads, for its bound (default 32: 16 accesses x 2 lines)")
      ->check(CLI::Range(1u, 1'000'000u));
  bench_memory
      ->add_option("--accesses-per-txn", memory_bench.accesses_per_txn,
                   "accesses the chained transactions make, each a bucket line and the rest of its share of "
                   "--lines-per-txn as its row (default 16)")
      ->check(CLI::Range(1u, 4096u));
  bench_memory->add_option(
      "--work-ns", memory_bench.work_ns,
      "register-only work after each chained access, in nanoseconds from 0 to 100000, standing for an "
      "engine's (default 0)");
  bench_memory->add_flag("--json", memory_bench.as_json, "as JSON");
  abyss::IndexBenchOptions index_bench;
  bool index_bench_json = false;
  CLI::App* bench_index = bench->add_subcommand("index",
                                                "the index structures alone: look-ups, scans and inserts in hash, "
                                                "ordered, absl::btree_map and std::map (M ops/s)");
  bench_index->add_option("--keys", index_bench.keys, "keys loaded before each measurement (default 1000000)")
      ->check(CLI::Range(uint64_t{1000}, uint64_t{1} << 32));
  bench_index->add_option("--threads", index_bench.threads, "thread counts, comma-separated (default 1,2)")
      ->delimiter(',')
      ->check(CLI::Range(1u, 1024u));
  bench_index->add_option("--seconds", index_bench.seconds, "seconds a measurement (default 1)")
      ->check(CLI::Range(0.01, 600.0));
  bench_index->add_option("--short-scan", index_bench.short_scan, "entries a short scan visits (default 10)")
      ->check(CLI::Range(1u, 1'000'000u));
  bench_index->add_option("--long-scan", index_bench.long_scan, "entries a long scan visits (default 1000)")
      ->check(CLI::Range(1u, 1'000'000u));
  bench_index
      ->add_option("--structures", index_bench.structures, "hash, ordered, btree, map, comma-separated (default all)")
      ->delimiter(',')
      ->check(CLI::IsMember(abyss::kIndexBenchStructures));
  bench_index->add_option("--seed", index_bench.seed, "seed of the key order and the look-ups (default 1)");
  bench_index->add_flag("--json", index_bench_json, "as JSON");
  abyss::ScanBenchOptions scan_bench;
  bool scan_bench_json = false;
  CLI::App* bench_scan = bench->add_subcommand(
      "scan",
      "the Terrier study's concurrent scan, insert and iterator benchmarks on a block list, latch-free and latched");
  bench_scan->add_option("--tuples", scan_bench.tuples,
                         "tuples a table holds, or each inserter inserts (default 10000000)");
  bench_scan->add_option("--threads", scan_bench.threads, "thread counts, comma-separated (default 1, 2 and the cores)")
      ->delimiter(',');
  bench_scan->add_option("--reps", scan_bench.reps,
                         "runs of a measurement, the median reported (default 3; no more once 1 s is spent)");
  bench_scan->add_option("--benchmarks", scan_bench.benchmarks, "scan, insert, iterator, comma-separated (default all)")
      ->delimiter(',');
  bench_scan->add_option("--modes", scan_bench.modes, "latch-free, latched, comma-separated (default both)")
      ->delimiter(',');
  bench_scan->add_flag("--json", scan_bench_json, "as JSON");

  app.add_subcommand("version", "print the build's git revision and type");

  // demo and the bench tables are harness specs, run by ./abyss through
  // `./abyss sweep harness/specs/...` (docs/harness.md): say where they went.
  const bool binary_bench_asked =
      argc > 2 && std::string(argv[1]) == "bench" &&
      (std::string(argv[2]) == "memory" || std::string(argv[2]) == "index" || std::string(argv[2]) == "scan");
  if (argc > 1 && (std::string(argv[1]) == "demo" || std::string(argv[1]) == "bench") && !binary_bench_asked) {
    const std::vector<std::pair<std::string, std::string>> bench_specs = {{"ycsb", "bench-ycsb"},
                                                                          {"hstore", "bench-hstore"},
                                                                          {"tpcc", "bench-tpcc"},
                                                                          {"tpcc-mix", "bench-tpcc-mix"},
                                                                          {"latch", "bench-latch"},
                                                                          {"tale-ycsb", "bench-tale-ycsb"},
                                                                          {"tale-tpcc", "bench-tale-tpcc"},
                                                                          {"log", "bench-log"},
                                                                          {"ts", "ts-alloc"},
                                                                          {"kv-inserts", "bench-kv-inserts"}};
    const std::string first = argv[1];
    const std::string second = argc > 2 ? argv[2] : "";
    if (first == "bench" && (second == "kv" || second == "redis")) {
      std::fprintf(stderr, "abyss: `bench %s` starts servers and clients: run ./abyss bench %s (docs/server.md)\n",
                   second.c_str(), second.c_str());
      return 2;
    }
    std::string command = "demo";
    std::string spec = "demo";
    std::string names;
    for (const auto& [name, file] : bench_specs) {
      names += (names.empty() ? "" : ", ") + name;
      if (first == "bench" && second == name) {
        command = "bench " + name;
        spec = file;
      }
    }
    if (first == "bench" && command == "demo") {
      std::fprintf(stderr, "abyss: the bench tables are harness specs: run ./abyss bench NAME, NAME one of %s\n",
                   names.c_str());
      return 2;
    }
    std::fprintf(stderr, "abyss: `%s` is a harness spec: run ./abyss %s (./abyss sweep harness/specs/%s.toml)\n",
                 command.c_str(), command.c_str(), spec.c_str());
    return 2;
  }

  // CLI11 reports a misspelt subcommand as a missing one: name it instead.
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
  if (argc > 1 && argv[1][0] != '-' && std::find(names.begin(), names.end(), argv[1]) == names.end()) {
    const auto close = abyss::similar_names(argv[1], names);
    std::fprintf(stderr, "abyss: '%s' is not a subcommand; one of %s%s\n", argv[1], subcommand_names(app).c_str(),
                 close.empty() ? "" : (" (did you mean " + close.front() + "?)").c_str());
    return 2;
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "abyss: %s\n", explain(app, e).c_str());
    return 2;
  }

  try {
    if (run->parsed()) {
      // On simulated cores the papers run one worker per core.
      if (run_cfg.sim_cores > 0 && run->count("--threads") == 0) run_cfg.threads = run_cfg.sim_cores;
      // A recovered run goes on with the logged workload (docs/durability.md).
      if (run_cfg.log.recover) {
        std::string err = abyss::check_log(run_cfg);
        if (err.empty()) {
          err = abyss::adopt_logged_workload(run_cfg, [&](const abyss::Knob& k) { return run->count(k.flag()) > 0; });
        }
        if (!err.empty()) {
          std::fprintf(stderr, "abyss: %s\n", err.c_str());
          return 2;
        }
      }
      if (auto err = abyss::cli::workload_flag_mismatch(*run, run_cfg); !err.empty()) {
        std::fprintf(stderr, "abyss: %s\n", err.c_str());
        return 2;
      }
      if (auto err = abyss::validate_workload(run_cfg); !err.empty()) {
        std::fprintf(stderr, "abyss: %s\n", err.c_str());
        return 2;
      }
      if (auto err = abyss::check_window(run_cfg); !err.empty()) {
        std::fprintf(stderr, "abyss: %s\n", err.c_str());
        return 2;
      }
      if (auto err = abyss::check_machine(run_cfg); !err.empty()) {
        std::fprintf(stderr, "abyss: %s\n", err.c_str());
        return 2;
      }
      if (auto err = abyss::check_log(run_cfg); !err.empty()) {
        std::fprintf(stderr, "abyss: %s\n", err.c_str());
        return 2;
      }
      for (const auto& note : abyss::cli::ineffective_flag_notes(*run, run_cfg)) {
        std::fprintf(stderr, "abyss: note: %s\n", note.c_str());
      }
      if (run_cfg.memory_check) {
        if (auto why = abyss::memory_shortfall(run_cfg); !why.empty()) {
          std::fprintf(stderr, "abyss: this run %s (--memory-check off runs it anyway)\n", why.c_str());
          return 2;
        }
      }
      if (const std::string note = abyss::oversubscription_note(run_cfg); !note.empty()) {
        std::fprintf(stderr, "abyss: note: %s\n", note.c_str());
      }
      if (dry_run) {
        std::printf("%s\n", run_cfg.to_json().dump(2).c_str());
        return 0;
      }
      return run_command(run_cfg, shell_line(argc, argv));
    }
    if (serve->parsed()) return serve_command(*serve, serve_cfg, serve_options);
    if (load->parsed()) return load_command(load_options);
    if (describe->parsed()) {
      if (describe_as_json) {
        std::printf("%s\n", abyss::describe_json().dump(2).c_str());
      } else {
        std::printf("%s", abyss::describe_text().c_str());
      }
      return 0;
    }
    if (probe->parsed()) return probe_command(probe_as_json);
    if (bench_memory->parsed()) return memory_bench_command(memory_bench);
    if (bench_index->parsed()) return index_bench_command(index_bench, index_bench_json);
    if (bench_scan->parsed()) return scan_bench_command(scan_bench, scan_bench_json);
    if (recover->parsed()) return recover_command(recover_options);
    if (check_history->parsed()) return check_history_command(history_path);
    if (check_tpcc->parsed()) return check_tpcc_command(tpcc_dir, tpcc_inserts);
    std::printf("abyss %s (%s)\n", std::string(abyss::git_rev()).c_str(), std::string(abyss::build_type()).c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "abyss: %s\n", e.what());
    return 1;
  }
}
