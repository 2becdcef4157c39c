// The abyss binary: flags -> Config -> run -> report (docs/architecture.md, "Layers").
// Exit codes: 0 success; 2 bad invocation (one line naming the flag, the value
// and what is allowed; nothing runs); 1 a failure at run time. Each
// subcommand is registered, with what it does, by one function of
// apps/*_command.cc (apps/commands.h).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "apps/commands.h"
#include "common/build_info.h"
#include "engine/knobs.h"

namespace {

using abyss::cli::Command;

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
  std::vector<Command> commands = abyss::cli::add_run(app, shell_line(argc, argv));
  for (auto add : {abyss::cli::add_serve, abyss::cli::add_check, abyss::cli::add_describe, abyss::cli::add_bench,
                   abyss::cli::add_version}) {
    for (Command& c : add(app)) commands.push_back(std::move(c));
  }

  if (auto rc = abyss::cli::refuse_spec(argc, argv)) return *rc;
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
    for (const Command& c : commands) {
      if (c.app->parsed()) return c.run();
    }
    return 2;  // unreachable: one subcommand is required
  } catch (const std::exception& e) {
    std::fprintf(stderr, "abyss: %s\n", e.what());
    return 1;
  }
}
