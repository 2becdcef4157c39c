#include "server/commands.h"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "workload/kv/kv.h"

namespace abyss::server {

namespace {

// Redis's names and arities; `data` marks those that run as transactions.
constexpr CommandSpec kCommands[] = {
    {"get", Op::Get, 2, true, 1, 1, false},
    {"set", Op::Set, -3, true, 1, 1, false},
    {"del", Op::Del, -2, true, 1, 1, true},
    {"incr", Op::Incr, 2, true, 1, 1, false},
    {"incrby", Op::IncrBy, 3, true, 1, 1, false},
    {"decr", Op::Decr, 2, true, 1, 1, false},
    {"decrby", Op::DecrBy, 3, true, 1, 1, false},
    {"mget", Op::MGet, -2, true, 1, 1, true},
    {"mset", Op::MSet, -3, true, 1, 2, true},
    {"exists", Op::Exists, -2, true, 1, 1, true},
    {"ping", Op::Ping, -1, false, 0, 0, false},
    {"echo", Op::Echo, 2, false, 0, 0, false},
    {"info", Op::Info, -1, false, 0, 0, false},
    {"multi", Op::Multi, 1, false, 0, 0, false},
    {"exec", Op::Exec, 1, false, 0, 0, false},
    {"discard", Op::Discard, 1, false, 0, 0, false},
    {"select", Op::Select, 2, false, 0, 0, false},
    {"config", Op::ConfigCmd, -2, false, 0, 0, false},
    {"command", Op::CommandCmd, -1, false, 0, 0, false},
    {"client", Op::Client, -2, false, 0, 0, false},
    {"quit", Op::Quit, 1, false, 0, 0, false},
    {"dbsize", Op::DbSize, 1, false, 0, 0, false},
    {"hello", Op::Hello, -1, false, 0, 0, false},
};

}  // namespace

const CommandSpec* find_command(std::string_view name) {
  if (name.size() > 16) return nullptr;
  char lower[16];
  for (std::size_t i = 0; i < name.size(); i++) {
    const char c = name[i];
    lower[i] = c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
  }
  const std::string_view want(lower, name.size());
  for (const CommandSpec& c : kCommands) {
    if (c.name == want) return &c;
  }
  return nullptr;
}

bool arity_ok(const CommandSpec& c, std::size_t args) {
  return c.arity >= 0 ? args == static_cast<std::size_t>(c.arity) : args >= static_cast<std::size_t>(-c.arity);
}

bool equals_lower(std::string_view arg, std::string_view lower) {
  if (arg.size() != lower.size()) return false;
  for (std::size_t i = 0; i < arg.size(); i++) {
    const char c = arg[i] >= 'A' && arg[i] <= 'Z' ? static_cast<char>(arg[i] - 'A' + 'a') : arg[i];
    if (c != lower[i]) return false;
  }
  return true;
}

bool set_mode(std::span<const std::string_view> args, SetMode& mode, bool& weak) {
  mode = SetMode::Always;
  for (std::size_t i = 3; i < args.size(); i++) {
    if (equals_lower(args[i], "nx") && mode != SetMode::IfPresent) {
      mode = SetMode::IfAbsent;
    } else if (equals_lower(args[i], "xx") && mode != SetMode::IfAbsent) {
      mode = SetMode::IfPresent;
    } else if (equals_lower(args[i], "weak")) {
      weak = true;
    } else if (equals_lower(args[i], "strong")) {
      weak = false;
    } else {
      return false;
    }
  }
  return true;
}

void append_status_error(std::string& out, KvStatus s) {
  out += "-ERR ";
  out += kv_status_text(s);
  out += "\r\n";
}

std::string precheck(const CommandSpec& c, std::span<const std::string_view> args) {
  if (!arity_ok(c, args.size()) || (c.op == Op::MSet && args.size() % 2 == 0)) {
    return "-ERR wrong number of arguments for '" + std::string(c.name) + "' command\r\n";
  }
  SetMode mode{};
  bool weak = false;
  if (c.op == Op::Set && !set_mode(args, mode, weak)) return "-ERR syntax error\r\n";
  int64_t by = 0;
  if ((c.op == Op::IncrBy || c.op == Op::DecrBy) && !KvTable::parse_decimal(args[2], by)) {
    return "-ERR value is not an integer or out of range\r\n";
  }
  if (c.op == Op::DecrBy && by == INT64_MIN) return "-ERR decrement would overflow\r\n";
  return {};
}

}  // namespace abyss::server
