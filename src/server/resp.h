#pragma once
// The Redis serialization protocol, version 2 (RESP2): the commands Redis
// clients send and the replies they read, for a server front end to the
// engine and for the clients that load it. Parsing works on a connection's
// input buffer as it grows: a command that has not fully arrived is
// Incomplete and nothing of it is used, so the caller reads more and asks
// again. Input a client may not send
// (a malformed header, a length past the limits) is an Error with one line
// saying what, which the server answers with `-ERR Protocol error: ...` and
// a closed connection, as Redis does. Nothing here allocates per argument:
// arguments are views into the buffer.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace abyss::server {

// What a client may send in one command (Redis's proto-max-bulk-len and
// its inline and multibulk limits).
struct RespLimits {
  std::size_t max_bulk_bytes = std::size_t{512} << 20;   // one argument
  std::size_t max_args = std::size_t{1} << 20;           // arguments of one command
  std::size_t max_inline_bytes = std::size_t{64} << 10;  // an inline command's line
};

enum class ParseStatus : uint8_t {
  Command,     // `args` holds one command; `used` bytes of the input were it
  Incomplete,  // the input ends inside a command: read more, then parse again
  Error,       // the input is not RESP2 within the limits: `error` says why
};

// Parses the command at the front of `in`: an array of bulk strings
// (`*2\r\n$3\r\nGET\r\n$1\r\nk\r\n`), as client libraries send, or an
// inline command (`GET k\r\n`: words split on spaces and tabs, the line
// ending in \n or \r\n), as typed into a terminal. An empty array or an
// empty line is a command with no arguments, which the caller skips.
// `args` is cleared first and views into `in`.
ParseStatus parse_command(std::string_view in, const RespLimits& limits, std::vector<std::string_view>& args,
                          std::size_t& used, std::string& error);

// ---- replies -------------------------------------------------------------------

void append_simple(std::string& out, std::string_view text);  // +text (no CR or LF in it)
void append_error(std::string& out, std::string_view text);   // -text: "ERR ...", "WRONGTYPE ..."
void append_integer(std::string& out, int64_t value);         // :value
void append_bulk(std::string& out, std::string_view bytes);   // $len bytes
void append_null(std::string& out);                           // $-1: no such key
void append_array(std::string& out, std::size_t count);       // *count, then count replies

// A reply as a client reads it (the tests, and `abyss bench kv`'s clients).
struct Reply {
  enum class Kind : uint8_t { Simple, Error, Integer, Bulk, Null, Array };
  Kind kind = Kind::Null;
  std::string text;  // Simple, Error, Bulk
  int64_t integer = 0;
  std::vector<Reply> items;  // Array
};

// Parses the reply at the front of `in`, as parse_command does a command:
// Command means a whole reply was read into `out` (`used` bytes).
ParseStatus parse_reply(std::string_view in, Reply& out, std::size_t& used, std::string& error);

}  // namespace abyss::server
