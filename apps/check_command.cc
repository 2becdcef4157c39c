// `abyss check history|tpcc` and `abyss recover`: the offline checkers and
// the rebuild of a logged run; `abyss describe` and `abyss version`.
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "apps/commands.h"
#include "check/history.h"
#include "check/input_error.h"
#include "check/tpcc.h"
#include "common/build_info.h"
#include "engine/describe.h"
#include "engine/recover.h"

namespace abyss::cli {

namespace {

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

// Exit 0 when the history holds `expect` (serializable unless given), 1
// when it holds only a weaker level.
int check_history_command(const std::string& path, abyss::check::Level expect) {
  try {
    const auto report = abyss::check::check_history_file(path);
    std::printf("%s\n", report.summary().c_str());
    return report.strongest_level() <= expect ? 0 : 1;
  } catch (const std::exception& e) {
    return check_failure(path, e);
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
  // Where each journal's durable part ends: a failed record after it is a torn tail.
  std::string ends;
  for (std::size_t j = 0; j < r.durable_ends.size() && j < 4; j++) {
    ends += (j > 0 ? ", " : "") + r.durable_ends[j].first + " byte " + std::to_string(r.durable_ends[j].second);
  }
  if (r.durable_ends.size() > 4)
    ends += ", ... (" + std::to_string(r.durable_ends.size()) + " journals: --json lists all)";
  if (!ends.empty()) std::printf("  durable to    %s\n", ends.c_str());
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
  if (!r.epoch_note.empty()) std::printf("  epoch file    %s\n", r.epoch_note.c_str());
  if (r.salvaged_journals > 0) {
    std::printf("  salvaged      %14u journal(s) damaged where they were durable, %llu bytes dropped; first: %s\n",
                r.salvaged_journals, static_cast<unsigned long long>(r.salvaged_bytes_dropped), r.salvage_note.c_str());
  }
  return 0;
}

}  // namespace

std::vector<Command> add_check(CLI::App& app) {
  CLI::App* check = app.add_subcommand("check", "check a run's output");
  check->require_subcommand(1);
  auto history_path = std::make_shared<std::string>();
  CLI::App* check_history = check->add_subcommand(
      "history", "serializability of a --history log, or the strongest isolation level it holds and its phenomena");
  // No CLI::ExistingFile: the checkers name a missing or unreadable input with
  // its reason, and exit 2 like for any input they cannot read.
  check_history->add_option("file", *history_path, "the history log (JSON lines)")->required();
  auto history_expect = std::make_shared<abyss::check::Level>(abyss::check::Level::Serializable);
  check_history
      ->add_option_function<std::string>(
          "--expect", [history_expect](const std::string& v) { (void)abyss::check::parse_level(v, *history_expect); },
          "the isolation level the history must hold for exit 0: serializable, snapshot, read-committed or none "
          "(default serializable)")
      ->check(CLI::IsMember({"serializable", "snapshot", "read-committed", "none"}))
      ->default_str("serializable");
  auto tpcc_dir = std::make_shared<std::string>();
  auto tpcc_inserts = std::make_shared<bool>(true);
  CLI::App* check_tpcc = check->add_subcommand("tpcc", "TPC-C consistency conditions (clause 3.3.2) of a --dump DIR");
  check_tpcc->add_option("dir", *tpcc_dir, "the dump directory of a TPC-C run")->required();
  check_tpcc
      ->add_option_function<std::string>(
          "--tpcc-inserts", [tpcc_inserts](const std::string& v) { *tpcc_inserts = v == "on"; },
          "whether the run inserted rows (off: skip conditions 2, 8, 9, 10)")
      ->check(CLI::IsMember({"on", "off"}))
      ->default_str("on");

  auto recover_options = std::make_shared<RecoverOptions>();
  CLI::App* recover = app.add_subcommand(
      "recover", "rebuild the database of a --log-dir: its load, then every durable commit of its journals");
  recover->add_option("dir", recover_options->dir, "the log directory of a run with --log file")->required();
  recover->add_option("--dump", recover_options->dump_dir, "write DIR/<table>.csv for every table, as run --dump does");
  recover->add_option("--versions", recover_options->versions_path,
                      "write table,key,writer,deleted for every row a journal wrote");
  recover
      ->add_option("--threads", recover_options->threads,
                   "replay threads (default: one per journal, at most the cores)")
      ->check(CLI::Range(1u, 1024u));
  recover->add_option("--json", recover_options->json_path, "write the recovery's numbers as JSON to FILE");
  recover->add_flag("--salvage", recover_options->salvage,
                    "recover a journal damaged where it was durable up to the damage, dropping the rest of it "
                    "(said in the output), instead of stopping");

  return {{check_history, [=] { return check_history_command(*history_path, *history_expect); }},
          {check_tpcc, [=] { return check_tpcc_command(*tpcc_dir, *tpcc_inserts); }},
          {recover, [=] { return recover_command(*recover_options); }}};
}

std::vector<Command> add_describe(CLI::App& app) {
  auto describe_as_json = std::make_shared<bool>(false);
  CLI::App* describe = app.add_subcommand("describe", "the schemes, workloads and knobs of this binary");
  describe->add_flag("--json", *describe_as_json, "as JSON (what the harness reads)");

  return {{describe, [=] {
             if (*describe_as_json) {
               std::printf("%s\n", describe_json().dump(2).c_str());
             } else {
               std::printf("%s", describe_text().c_str());
             }
             return 0;
           }}};
}

std::vector<Command> add_version(CLI::App& app) {
  CLI::App* version = app.add_subcommand("version", "print the build's git revision and type");
  return {{version, [] {
             std::printf("abyss %s (%s)\n", std::string(git_rev()).c_str(), std::string(build_type()).c_str());
             return 0;
           }}};
}

}  // namespace abyss::cli
