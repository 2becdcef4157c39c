#pragma once
// The commands `abyss serve` answers (docs/server.md, "Commands"): the
// command table, the checks a command passes before it runs, and what each
// data command does to the key-value table inside a transaction. The
// connection state they touch (MULTI, held replies, partition claims) is
// the worker's (ServerWorker).
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include "server/resp.h"
#include "txn/txn.h"
#include "workload/kv/kv.h"

namespace abyss::server {

// One per entry of the command table.
enum class Op : uint8_t {
  Get,
  Set,
  Del,
  Incr,
  IncrBy,
  Decr,
  DecrBy,
  MGet,
  MSet,
  Exists,
  Ping,
  Echo,
  Info,
  Multi,
  Exec,
  Discard,
  Select,
  ConfigCmd,
  CommandCmd,
  Client,
  Quit,
  DbSize,
  Hello,
};

struct CommandSpec {
  std::string_view name;  // lower case
  Op op;
  int arity;       // Redis's: n arguments exactly (the name counted), or at least -n
  bool data;       // runs as a transaction over the table
  int first_key;   // the first key's argument (data commands)
  int key_step;    // arguments from one key to the next (MSET: 2)
  bool all_after;  // every argument from first_key on is a key (at key_step)
};

// The command named `name` (any case), or null.
const CommandSpec* find_command(std::string_view name);

// Whether `args` arguments (the name counted) fit the command's arity.
bool arity_ok(const CommandSpec& c, std::size_t args);

// Whether `arg` is `lower` in any case.
bool equals_lower(std::string_view arg, std::string_view lower);

// A command's keys (for partitions a scheme locks up front).
template <class Args, class Fn>
void for_each_key(const CommandSpec& c, const Args& args, Fn&& fn) {
  if (!c.data) return;
  const std::size_t end = c.all_after ? args.size() : static_cast<std::size_t>(c.first_key) + 1;
  for (std::size_t i = static_cast<std::size_t>(c.first_key); i < end && i < args.size();
       i += static_cast<std::size_t>(c.key_step)) {
    fn(std::string_view(args[i]));
  }
}

// SET's options: NX or XX, and this store's WEAK or STRONG (the write's
// consistency; `weak` keeps the connection's when neither is given).
// Anything else is a syntax error (EX, PX, KEEPTTL, GET: no expiry here).
bool set_mode(std::span<const std::string_view> args, SetMode& mode, bool& weak);

// The error reply of a KvStatus that is one.
void append_status_error(std::string& out, KvStatus s);

// A command checked before it runs: arity, SET's options, INCRBY's
// number. The error reply if it cannot run, else empty.
std::string precheck(const CommandSpec& c, std::span<const std::string_view> args);

// Runs a data command inside `txn`, appending its reply. An Rc other than
// Ok is the scheme's: the transaction restarts and the reply is dropped.
template <class CC>
Rc run_data(Txn<CC>& txn, const KvTable& kv, const CommandSpec& c, std::span<const std::string_view> args,
            std::string& out, std::string& value) {
  KvStatus st = KvStatus::Ok;
  switch (c.op) {
    case Op::Get: {
      if (Rc rc = kv.get(txn, args[1], value, st); rc != Rc::Ok) return rc;
      if (st == KvStatus::Missing) {
        append_null(out);
      } else if (st != KvStatus::Ok) {
        append_status_error(out, st);
      } else {
        append_bulk(out, value);
      }
      return Rc::Ok;
    }
    case Op::Set: {
      SetMode mode{};
      bool weak = false;
      (void)set_mode(args, mode, weak);
      if (Rc rc = kv.set(txn, args[1], args[2], mode, st); rc != Rc::Ok) return rc;
      if (st == KvStatus::Ok) {
        append_simple(out, "OK");
      } else if (st == KvStatus::Exists || st == KvStatus::Missing) {
        append_null(out);  // NX or XX not met
      } else {
        append_status_error(out, st);
      }
      return Rc::Ok;
    }
    case Op::Del:
    case Op::Exists: {
      int64_t n = 0;
      for (std::size_t i = 1; i < args.size(); i++) {
        if (c.op == Op::Del) {
          if (Rc rc = kv.remove(txn, args[i], st); rc != Rc::Ok) return rc;
        } else {
          if (Rc rc = kv.get(txn, args[i], value, st); rc != Rc::Ok) return rc;
        }
        if (st == KvStatus::Ok) n++;
      }
      append_integer(out, n);
      return Rc::Ok;
    }
    case Op::Incr:
    case Op::Decr:
    case Op::IncrBy:
    case Op::DecrBy: {
      int64_t by = c.op == Op::Incr ? 1 : c.op == Op::Decr ? -1 : 0;
      if (c.op == Op::IncrBy || c.op == Op::DecrBy) {
        (void)KvTable::parse_decimal(args[2], by);
        if (c.op == Op::DecrBy) by = -by;
      }
      int64_t result = 0;
      if (Rc rc = kv.increment(txn, args[1], by, result, st); rc != Rc::Ok) return rc;
      if (st == KvStatus::Ok) {
        append_integer(out, result);
      } else {
        append_status_error(out, st);
      }
      return Rc::Ok;
    }
    case Op::MGet: {
      append_array(out, args.size() - 1);
      for (std::size_t i = 1; i < args.size(); i++) {
        if (Rc rc = kv.get(txn, args[i], value, st); rc != Rc::Ok) return rc;
        if (st == KvStatus::Ok) {
          append_bulk(out, value);
        } else {
          append_null(out);
        }
      }
      return Rc::Ok;
    }
    case Op::MSet: {
      // All or nothing: a key or value the table cannot hold fails the
      // command before any write (Rc::LogicalAbort rolls back the rest).
      for (std::size_t i = 1; i + 1 < args.size(); i += 2) {
        if (Rc rc = kv.set(txn, args[i], args[i + 1], SetMode::Always, st); rc != Rc::Ok) return rc;
        if (st != KvStatus::Ok) {
          append_status_error(out, st);
          return Rc::LogicalAbort;
        }
      }
      append_simple(out, "OK");
      return Rc::Ok;
    }
    default:
      throw std::logic_error("not a data command");
  }
}

}  // namespace abyss::server
