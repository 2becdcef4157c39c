#pragma once
// The Redis serialization protocol, version 2 (RESP2): the commands Redis
// clients send and the replies they read, for a server front end to the
// engine and for the clients that load it. Parsing works on a connection's
// input buffer as it grows: a command that has not fully arrived is
// Incomplete and nothing of it is used, so the caller reads more and asks
// again; a CommandParser resumes where it stopped, so a command that
// arrives a byte at a time is read once, not once per byte. Input a client
// may not send (a malformed header, a length past the limits) is an Error
// with one line saying what, which the server answers with
// `-ERR Protocol error: ...` and a closed connection, as Redis does.
// Nothing here allocates per argument: arguments are views into the buffer.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace abyss::server {

// What a client may send in one command (Redis's proto-max-bulk-len, its
// client-query-buffer-limit, and its inline and multibulk limits).
struct RespLimits {
  std::size_t max_bulk_bytes = std::size_t{512} << 20;   // one argument (--proto-max-bulk-len)
  std::size_t max_args = std::size_t{1} << 20;           // arguments of one command
  std::size_t max_inline_bytes = std::size_t{64} << 10;  // an inline command's line
  // A connection's unparsed input at most (--client-query-buffer-limit): the
  // server closes a connection past it; an argument announced longer is
  // refused as soon as its length is read.
  std::size_t max_query_bytes = std::size_t{1} << 30;
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
// Each call reads `in` from its start.
ParseStatus parse_command(std::string_view in, const RespLimits& limits, std::vector<std::string_view>& args,
                          std::size_t& used, std::string& error);

// parse_command for one connection's input as it arrives: after Incomplete
// it keeps how far it read (the arguments whole, the line it was looking
// for an end in), and the next call, given the same input with more
// appended, goes on from there. Its work is linear in the input: each byte
// is looked at a bounded number of times however the input is cut.
class CommandParser final {
 public:
  explicit CommandParser(const RespLimits& limits) : limits_(limits) {}

  // As parse_command. After Incomplete, `in` must start with the bytes given
  // before (they may have moved in memory); after Command or Error the next
  // call starts a new command at the front of `in`.
  ParseStatus parse(std::string_view in, std::vector<std::string_view>& args, std::size_t& used, std::string& error);

  // Bytes of input looked at, over every call: the parser's work.
  uint64_t examined() const { return examined_; }

 private:
  enum class Stage : uint8_t { Start, Inline, Count, BulkHeader, BulkBody };
  enum class Line : uint8_t { Ok, Incomplete, TooLong };
  struct Arg {
    std::size_t at;
    std::size_t bytes;
  };

  // The line that starts at `start` and ends at the next CRLF within `max`
  // bytes, looked for from where the last call stopped looking.
  Line find_line(std::string_view in, std::size_t start, std::size_t max, std::string_view& line, std::size_t& next);
  ParseStatus parse_inline(std::string_view in, std::vector<std::string_view>& args, std::size_t& used,
                           std::string& error);
  ParseStatus fail(std::string& error, std::string text);
  void restart();

  RespLimits limits_;
  Stage stage_ = Stage::Start;
  std::size_t pos_ = 0;        // where the element being read starts (a header line, a bulk string)
  std::size_t scanned_ = 0;    // the line's bytes before this were looked at and hold no CRLF
  std::size_t bulk_ = 0;       // bytes of the bulk string being read
  std::size_t args_left_ = 0;  // bulk strings of the command still to read
  std::vector<Arg> args_;      // those read, as offsets: the input may move between calls
  uint64_t examined_ = 0;
};

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
