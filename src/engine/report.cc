#include "engine/report.h"

#include <algorithm>
#include <array>

#include <nlohmann/json.hpp>

#include "common/build_info.h"
#include "platform/clock.h"
#include "platform/file.h"
#include "platform/process.h"
#include "platform/thread.h"

namespace abyss {

namespace {

nlohmann::json latency_json(const Histogram& h) {
  auto us = [](uint64_t ns) { return static_cast<double>(ns) / 1000.0; };
  return {{"mean", h.mean() / 1000.0},   {"p50", us(h.quantile(0.50))}, {"p90", us(h.quantile(0.90))},
          {"p95", us(h.quantile(0.95))}, {"p99", us(h.quantile(0.99))}, {"p999", us(h.quantile(0.999))},
          {"max", us(h.max())}};
}

// The histogram itself (docs/metrics.md, "Latency"): every non-empty bucket
// as [highest value in it, count], in nanoseconds, lowest first.
nlohmann::json histogram_json(const Histogram& h) {
  nlohmann::json buckets = nlohmann::json::array();
  for (uint32_t i = 0; i < Histogram::kBuckets; i++) {
    if (h.bucket_count(i) > 0) buckets.push_back({Histogram::upper_edge(i), h.bucket_count(i)});
  }
  return {{"unit", "ns"}, {"sub_buckets", Histogram::kSub}, {"count", h.count()}, {"buckets", buckets}};
}

nlohmann::json breakdown_json(const WorkerStats& s) {
  nlohmann::json j;
  const double total = static_cast<double>(s.total_cycles);
  for (std::size_t c = 0; c < kTimeCats; c++) {
    j[std::string(kTimeCatNames[c])] = {{"seconds", platform::cycles_to_seconds(s.cycles[c])},
                                        {"fraction", total > 0 ? static_cast<double>(s.cycles[c]) / total : 0.0}};
  }
  return j;
}

// The CC aborts by cause, every cause named, zeros included.
nlohmann::json abort_causes_json(const AbortCauseArray& by_cause) {
  nlohmann::json j = nlohmann::json::object();
  for (std::size_t k = 0; k < kAbortCauses; k++) j[std::string(kAbortCauseNames[k])] = by_cause[k];
  return j;
}

nlohmann::json sample_json(const RunResult& r, const Sample& s) {
  nlohmann::json j;
  j["start_s"] = s.start_s;
  j["end_s"] = s.end_s;
  Histogram all;
  uint64_t totals[kCounters] = {};
  for (std::size_t t = 0; t < r.type_names.size(); t++) {
    const TypeStats& ts = s.stats.types[t];
    all.merge(ts.latency);
    nlohmann::json tj;
    for (std::size_t c = 0; c < kCounters; c++) {
      tj[std::string(kCounterNames[c])] = ts.counters[c];
      totals[c] += ts.counters[c];
    }
    j["per_type"][std::string(r.type_names[t])] = tj;
  }
  for (std::size_t c = 0; c < kCounters; c++) j[std::string(kCounterNames[c])] = totals[c];
  const double commits = static_cast<double>(totals[static_cast<std::size_t>(Counter::Commits)]);
  const double aborts = static_cast<double>(totals[static_cast<std::size_t>(Counter::CcAborts)]);
  j["throughput"] = s.seconds() > 0 ? commits / s.seconds() : 0.0;
  j["abort_rate"] = commits + aborts > 0 ? aborts / (commits + aborts) : 0.0;
  j["latency_us"] = {{"p50", static_cast<double>(all.quantile(0.50)) / 1000.0},
                     {"p99", static_cast<double>(all.quantile(0.99)) / 1000.0}};
  nlohmann::json shares;
  const double total = static_cast<double>(s.stats.total_cycles);
  for (std::size_t c = 0; c < kTimeCats; c++) {
    shares[std::string(kTimeCatNames[c])] = total > 0 ? static_cast<double>(s.stats.cycles[c]) / total : 0.0;
  }
  j["breakdown"] = shares;
  j["rss_bytes"] = s.rss_bytes;
  return j;
}

}  // namespace

std::string samples_csv_path(const std::string& json_path) {
  const std::string stem =
      json_path.size() > 5 && json_path.ends_with(".json") ? json_path.substr(0, json_path.size() - 5) : json_path;
  return stem + ".samples.csv";
}

std::string samples_csv(const RunResult& r) {
  std::string out = "interval,start_s,end_s";
  for (auto name : kCounterNames) out += "," + std::string(name);
  out += ",throughput,abort_rate,p50_us,p99_us,rss_bytes";
  for (auto type : r.type_names) {
    for (auto name : kCounterNames) out += "," + std::string(type) + "." + std::string(name);
  }
  for (auto cat : kTimeCatNames) out += ",share." + std::string(cat);
  out += '\n';
  for (std::size_t k = 0; k < r.samples.size(); k++) {
    const nlohmann::json j = sample_json(r, r.samples[k]);
    out += std::to_string(k + 1) + "," + j["start_s"].dump() + "," + j["end_s"].dump();
    for (auto name : kCounterNames) out += "," + j[std::string(name)].dump();
    out += "," + j["throughput"].dump() + "," + j["abort_rate"].dump() + "," + j["latency_us"]["p50"].dump() + "," +
           j["latency_us"]["p99"].dump() + "," + j["rss_bytes"].dump();
    for (auto type : r.type_names) {
      for (auto name : kCounterNames) out += "," + j["per_type"][std::string(type)][std::string(name)].dump();
    }
    for (auto cat : kTimeCatNames) out += "," + j["breakdown"][std::string(cat)].dump();
    out += '\n';
  }
  return out;
}

nlohmann::json report_json(const RunResult& r) {
  nlohmann::json j;
  j["schema_version"] = kReportSchemaVersion;
  j["config"] = r.config.to_json();
  j["config_hash"] = r.config.hash();
  j["command_line"] = r.command_line;
  j["date"] = r.started;
  j["git_rev"] = git_rev();
  j["build_type"] = build_type();
  j["compiler"] = compiler();
  j["compile_flags"] = compile_flags();
  j["hostname"] = platform::host_name();
  j["kernel"] = platform::kernel();
  j["cpu_model"] = platform::cpu_model();
  j["cpu_mhz"] = platform::cpu_mhz();
  j["cores"] = r.cores;
  j["load_average"] = r.load_average;
  j["oversubscribed"] = r.oversubscribed();
  j["platform"] = r.platform;
  if (r.platform == "sim") {
    j["topology"] = {{"name", r.topology}, {"file", r.topology_file}, {"ghz", r.ghz}};
    j["sim_cores"] = r.cores;
    for (const auto& [name, n] : r.machine_counters) j["sim_counters"][name] = n;
  }
  j["host_seconds"] = r.host_seconds;

  nlohmann::json res;
  res["seconds"] = r.seconds;
  res["throughput"] = r.throughput();
  res["window"] = {{"rule", r.window.rule ? "steady" : "fixed"},
                   {"steady", r.window.steady},
                   {"windows", r.window.windows},
                   {"warmup_seconds", r.window.warmup_seconds},
                   {"commits_per_worker", r.commits_per_worker()},
                   {"halves_ratio", r.window.halves_ratio},
                   {"previous_ratio", r.window.previous_ratio}};
  for (const WorkloadMetric& m : r.metrics) res[std::string(m.json)] = m.compute(r.total, r.seconds, r.config);
  if (!r.checks.empty()) {
    res["checks"] = nlohmann::json::array();
    for (const ConsistencyCheck& c : r.checks) {
      res["checks"].push_back({{"name", c.name}, {"held", c.held}, {"detail", c.detail}});
    }
  }
  for (std::size_t c = 0; c < kCounters; c++) res[std::string(kCounterNames[c])] = r.count(static_cast<Counter>(c));
  res["abort_rate"] = r.abort_rate();
  res["abort_causes"] = abort_causes_json(r.aborts_by_cause());
  res["load_seconds"] = r.load_seconds;
  if (r.config.log.recover) {
    res["recovery"] = {{"durable_epoch", r.recovery.durable_epoch},   {"records_applied", r.recovery.records_applied},
                       {"writes_applied", r.recovery.writes_applied}, {"checkpoint_rows", r.recovery.checkpoint_rows},
                       {"journal_bytes", r.recovery.journal_bytes},   {"seconds", r.recovery.seconds}};
  }
  res["rss_after_load_bytes"] = r.rss_after_load;
  res["rss_at_end_bytes"] = r.rss_at_end;
  res["table_bytes_at_end"] = r.table_bytes;
  res["rows_reused"] = r.rows_reused;
  if (r.config.log.policy != LogPolicy::Off) {
    const double secs = r.log.seconds > 0 ? r.log.seconds : 1;
    res["log"] = {{"records", r.log.records},
                  {"bytes", r.log.bytes},
                  {"flushes", r.log.flushes},
                  {"fsyncs", r.log.fsyncs},
                  {"durable_epoch", r.log.durable_epoch},
                  {"seconds", r.log.seconds},
                  {"bytes_per_s", static_cast<double>(r.log.bytes) / secs},
                  {"fsyncs_per_s", static_cast<double>(r.log.fsyncs) / secs},
                  {"checkpoints", r.log.checkpoints},
                  {"checkpoint_rows", r.log.checkpoint_rows},
                  {"checkpoint_bytes", r.log.checkpoint_bytes},
                  {"checkpoint_seconds", r.log.checkpoint_seconds}};
  }
  res["rss_samples"] = nlohmann::json::array();
  for (const auto& [seconds, bytes] : r.rss_samples)
    res["rss_samples"].push_back({{"seconds", seconds}, {"bytes", bytes}});
  res["sample_interval_s"] = r.config.sample_interval();
  res["samples"] = nlohmann::json::array();
  for (const Sample& s : r.samples) res["samples"].push_back(sample_json(r, s));
  Histogram all;
  for (std::size_t t = 0; t < r.type_names.size(); t++) {
    const TypeStats& ts = r.total.types[t];
    all.merge(ts.latency);
    nlohmann::json tj;
    for (std::size_t c = 0; c < kCounters; c++) tj[std::string(kCounterNames[c])] = ts.counters[c];
    tj["throughput"] = r.seconds > 0 ? static_cast<double>(ts[Counter::Commits]) / r.seconds : 0.0;
    tj["abort_rate"] = ts.abort_rate();
    tj["abort_causes"] = abort_causes_json(ts.aborts_by_cause);
    tj["latency_us"] = latency_json(ts.latency);
    tj["latency_histogram"] = histogram_json(ts.latency);
    res["per_type"][std::string(r.type_names[t])] = tj;
  }
  res["latency_us"] = latency_json(all);
  res["breakdown"] = breakdown_json(r.total);
  nlohmann::json per_worker = nlohmann::json::array();
  for (const auto& w : r.workers) per_worker.push_back(breakdown_json(w));
  res["breakdown_per_worker"] = per_worker;
  res["breakdown_samples"] = {{"time_sample", r.config.time_sample},
                              {"timed_attempts", r.total.timed_attempts},
                              {"least_per_worker", r.least_timed_attempts()},
                              {"workers_with_few", r.workers_with_few_timed_attempts()},
                              {"few", RunResult::kFewTimedAttempts}};
  j["results"] = res;
  return j;
}

std::string write_report_json(const RunResult& r, const std::string& path) {
  auto write = [](const std::string& to, const std::string& text) {
    platform::OutputFile out;
    std::string err = out.open(to);
    if (err.empty()) {
      out.write(text);
      err = out.close();
    }
    return err.empty() ? err : "cannot write " + to + ": " + err;
  };
  if (auto err = write(path, report_json(r).dump(2) + "\n"); !err.empty()) return err;
  return r.samples.empty() ? std::string() : write(samples_csv_path(path), samples_csv(r));
}

void print_report(const RunResult& r, std::FILE* out) {
  const auto& c = r.config;
  std::fprintf(out, "abyss run: workload=%s cc=%s threads=%u duration=%gs  (config %s)\n", c.workload.c_str(),
               c.cc.c_str(), c.threads, r.seconds, c.hash().c_str());
  if (r.platform == "sim") {
    std::fprintf(out, "  on %u simulated cores of topology %s; the host took %.2f s\n", r.cores, r.topology.c_str(),
                 r.host_seconds);
  }
  std::fprintf(out, "  throughput   %12.0f txn/s\n", r.throughput());
  std::fprintf(out, "  window       %12s %.1f commits per worker, halves %.3f, after %g s%s\n",
               r.window.steady ? "steady" : "NOT steady", r.commits_per_worker(), r.window.halves_ratio,
               r.window.warmup_seconds,
               r.window.rule ? (" (window " + std::to_string(r.window.windows) + " by --steady-commits, " +
                                std::to_string(r.window.previous_ratio).substr(0, 5) + " of the one before)")
                                   .c_str()
                             : "");
  if (!r.samples.empty()) {
    double lo = 0;
    double hi = 0;
    for (std::size_t k = 0; k < r.samples.size(); k++) {
      const Sample& s = r.samples[k];
      uint64_t commits = 0;
      for (const auto& t : s.stats.types) commits += t[Counter::Commits];
      const double tput = s.seconds() > 0 ? static_cast<double>(commits) / s.seconds() : 0;
      lo = k == 0 ? tput : std::min(lo, tput);
      hi = k == 0 ? tput : std::max(hi, tput);
    }
    std::fprintf(out, "  samples      %12zu intervals of %g s, %.0f to %.0f txn/s\n", r.samples.size(),
                 r.config.sample_interval(), lo, hi);
  }
  for (const WorkloadMetric& m : r.metrics) {
    std::fprintf(out, "  %-12s %12.0f %s\n", std::string(m.label).c_str(), m.compute(r.total, r.seconds, r.config),
                 std::string(m.unit).c_str());
  }
  for (const ConsistencyCheck& k : r.checks) {
    std::fprintf(out, "  %-12s %12s   %s\n", k.name.c_str(), k.held ? "held" : "BROKEN", k.detail.c_str());
  }
  std::fprintf(out, "  commits      %12llu\n", static_cast<unsigned long long>(r.count(Counter::Commits)));
  std::fprintf(out, "  cc aborts    %12llu   (abort rate %.4f)\n",
               static_cast<unsigned long long>(r.count(Counter::CcAborts)), r.abort_rate());
  if (const uint64_t aborts = r.count(Counter::CcAborts); aborts > 0) {
    // Each cause that occurred, the most frequent first, with its share.
    const AbortCauseArray by_cause = r.aborts_by_cause();
    std::array<std::size_t, kAbortCauses> order{};
    for (std::size_t k = 0; k < kAbortCauses; k++) order[k] = k;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return by_cause[a] > by_cause[b]; });
    std::string line;
    for (std::size_t k : order) {
      if (by_cause[k] == 0) continue;
      char part[96];
      std::snprintf(part, sizeof part, "%s%s %llu (%.1f%%)", line.empty() ? "" : ", ",
                    std::string(kAbortCauseNames[k]).c_str(), static_cast<unsigned long long>(by_cause[k]),
                    100.0 * static_cast<double>(by_cause[k]) / static_cast<double>(aborts));
      line += part;
    }
    std::fprintf(out, "  by cause     %s\n", line.c_str());
  }
  std::fprintf(out, "  logical ab.  %12llu\n", static_cast<unsigned long long>(r.count(Counter::LogicalAborts)));
  std::fprintf(out, "  load         %12.2f s   rss %.0f MiB\n", r.load_seconds,
               static_cast<double>(r.rss_at_end) / (1 << 20));
  if (c.log.recover) {
    std::fprintf(out, "  recovered    %12.2f s   %s: durable epoch %llu, %llu checkpoint rows, %llu records applied\n",
                 r.recovery.seconds, c.log.dir.c_str(), static_cast<unsigned long long>(r.recovery.durable_epoch),
                 static_cast<unsigned long long>(r.recovery.checkpoint_rows),
                 static_cast<unsigned long long>(r.recovery.records_applied));
  }
  std::fprintf(out, "  row blocks   %12.0f MiB %llu slots reused\n", static_cast<double>(r.table_bytes) / (1 << 20),
               static_cast<unsigned long long>(r.rows_reused));
  if (c.log.policy != LogPolicy::Off) {
    const double secs = r.log.seconds > 0 ? r.log.seconds : 1;
    std::fprintf(out, "  log          %12.1f MB/s %.0f fsyncs/s, %llu acknowledged (%s, %s journal, fsync %s)\n",
                 static_cast<double>(r.log.bytes) / secs / 1e6, static_cast<double>(r.log.fsyncs) / secs,
                 static_cast<unsigned long long>(r.count(Counter::Acknowledged)),
                 std::string(kLogPolicyNames[static_cast<std::size_t>(c.log.policy)]).c_str(),
                 std::string(kJournalLayoutNames[static_cast<std::size_t>(c.log.journal)]).c_str(),
                 std::string(kFsyncPolicyNames[static_cast<std::size_t>(c.log.fsync)]).c_str());
    if (r.log.checkpoints > 0) {
      std::fprintf(out, "  checkpoints  %12llu of %.0f rows each, %.2f s each\n",
                   static_cast<unsigned long long>(r.log.checkpoints),
                   static_cast<double>(r.log.checkpoint_rows) / static_cast<double>(r.log.checkpoints),
                   r.log.checkpoint_seconds / static_cast<double>(r.log.checkpoints));
    }
  }
  // The type column is as wide as the longest name (SmallBank's deposit_checking).
  int width = 12;
  for (std::string_view n : r.type_names) width = std::max(width, static_cast<int>(n.size()));
  std::fprintf(out, "\n  %-*s %10s %10s %8s %10s %10s %10s %10s\n", width, "type", "commits", "cc_aborts", "abort %",
               "txn/s", "p50 us", "p99 us", "p99.9 us");
  for (std::size_t t = 0; t < r.type_names.size(); t++) {
    const TypeStats& ts = r.total.types[t];
    std::fprintf(
        out, "  %-*s %10llu %10llu %8.1f %10.0f %10.1f %10.1f %10.1f\n", width, std::string(r.type_names[t]).c_str(),
        static_cast<unsigned long long>(ts[Counter::Commits]), static_cast<unsigned long long>(ts[Counter::CcAborts]),
        100 * ts.abort_rate(), r.seconds > 0 ? static_cast<double>(ts[Counter::Commits]) / r.seconds : 0.0,
        static_cast<double>(ts.latency.quantile(0.5)) / 1000, static_cast<double>(ts.latency.quantile(0.99)) / 1000,
        static_cast<double>(ts.latency.quantile(0.999)) / 1000);
  }
  std::fprintf(out, "\n  time breakdown (summed over workers; %llu attempts timed, one in %u)\n",
               static_cast<unsigned long long>(r.total.timed_attempts), c.time_sample);
  if (const uint32_t few = r.workers_with_few_timed_attempts(); few > 0) {
    std::fprintf(out,
                 "  (%u of %zu workers timed fewer than %llu attempts of their own; their split of the sampled "
                 "categories is all workers' or rests on few attempts: --time-sample 1 times every one)\n",
                 few, r.workers.size(), static_cast<unsigned long long>(RunResult::kFewTimedAttempts));
  }
  for (std::size_t i = 0; i < kTimeCats; i++) {
    std::fprintf(out, "  %-12s %10.3f s %7.1f%%\n", std::string(kTimeCatNames[i]).c_str(),
                 platform::cycles_to_seconds(r.total.cycles[i]), 100.0 * r.fraction(static_cast<TimeCat>(i)));
  }
}

}  // namespace abyss
