#include "server/resp.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

namespace abyss::server {

namespace {

// Replies are read from a server this process trusts less than a test
// does: arrays nest at most this deep, header lines are at most this long.
constexpr int kMaxReplyDepth = 32;
constexpr std::size_t kMaxReplyLine = std::size_t{1} << 20;
constexpr std::size_t kMaxReplyBulk = std::size_t{512} << 20;

// A decimal integer that fills `text`, with an optional minus sign.
bool parse_int(std::string_view text, int64_t& out) {
  if (text.empty() || text.size() > 20) return false;
  const bool negative = text[0] == '-';
  if (negative) text.remove_prefix(1);
  if (text.empty()) return false;
  uint64_t v = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return false;
    const auto digit = static_cast<uint64_t>(c - '0');
    if (v > (std::numeric_limits<uint64_t>::max() - digit) / 10) return false;
    v = v * 10 + digit;
  }
  constexpr auto kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  if (negative) {
    if (v > kMax + 1) return false;
    out = v == kMax + 1 ? std::numeric_limits<int64_t>::min() : -static_cast<int64_t>(v);
  } else {
    if (v > kMax) return false;
    out = static_cast<int64_t>(v);
  }
  return true;
}

enum class Line : uint8_t { Ok, Incomplete, TooLong };

// The line that starts at in[pos] and ends at the next \r\n, looked for in
// at most `max` bytes: `line` without its end, `next` just past it.
Line read_line(std::string_view in, std::size_t pos, std::size_t max, std::string_view& line, std::size_t& next) {
  const std::string_view window = in.substr(pos, std::min(in.size() - pos, max + 2));
  const std::size_t at = window.find("\r\n");
  if (at == std::string_view::npos) return window.size() >= max + 2 ? Line::TooLong : Line::Incomplete;
  line = window.substr(0, at);
  next = pos + at + 2;
  return Line::Ok;
}

ParseStatus fail(std::string& error, std::string text) {
  error = std::move(text);
  return ParseStatus::Error;
}

}  // namespace

void CommandParser::restart() {
  stage_ = Stage::Start;
  pos_ = 0;
  scanned_ = 0;
  bulk_ = 0;
  args_left_ = 0;
  args_.clear();
}

ParseStatus CommandParser::fail(std::string& error, std::string text) {
  restart();
  error = std::move(text);
  return ParseStatus::Error;
}

CommandParser::Line CommandParser::find_line(std::string_view in, std::size_t start, std::size_t max,
                                             std::string_view& line, std::size_t& next) {
  // A CRLF within max + 2 bytes of the start: its LF is at start + 1 or later.
  const std::size_t end = std::min(in.size(), start + max + 2);
  std::size_t from = std::max(scanned_, start + 1);
  while (from < end) {
    const void* lf = std::memchr(in.data() + from, '\n', end - from);
    if (lf == nullptr) break;
    const auto at = static_cast<std::size_t>(static_cast<const char*>(lf) - in.data());
    examined_ += at + 1 - from;
    from = at + 1;
    if (in[at - 1] == '\r') {
      line = in.substr(start, at - 1 - start);
      next = at + 1;
      scanned_ = 0;
      return Line::Ok;
    }
  }
  if (from < end) examined_ += end - from;
  scanned_ = std::max(from, end);
  return end - start >= max + 2 ? Line::TooLong : Line::Incomplete;
}

// An inline command: the words of one line.
ParseStatus CommandParser::parse_inline(std::string_view in, std::vector<std::string_view>& args, std::size_t& used,
                                        std::string& error) {
  const std::size_t end = std::min(in.size(), limits_.max_inline_bytes + 1);
  const std::size_t from = scanned_;
  const void* lf = from < end ? std::memchr(in.data() + from, '\n', end - from) : nullptr;
  if (lf == nullptr) {
    examined_ += end - from;
    scanned_ = end;
    if (end > limits_.max_inline_bytes) return fail(error, "too big inline request");
    return ParseStatus::Incomplete;
  }
  const auto at = static_cast<std::size_t>(static_cast<const char*>(lf) - in.data());
  examined_ += at + 1 - from;
  std::string_view line = in.substr(0, at);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  examined_ += line.size();  // split into words
  for (std::size_t i = 0; i < line.size();) {
    if (line[i] == ' ' || line[i] == '\t') {
      i++;
      continue;
    }
    const std::size_t word_end = std::min(line.find_first_of(" \t", i), line.size());
    if (args.size() == limits_.max_args) {
      args.clear();
      return fail(error, "too many arguments in an inline request");
    }
    args.push_back(line.substr(i, word_end - i));
    i = word_end;
  }
  used = at + 1;
  restart();
  return ParseStatus::Command;
}

ParseStatus CommandParser::parse(std::string_view in, std::vector<std::string_view>& args, std::size_t& used,
                                 std::string& error) {
  args.clear();
  used = 0;
  std::string_view line;
  std::size_t next = 0;
  for (;;) {
    switch (stage_) {
      case Stage::Start:
        if (in.empty()) return ParseStatus::Incomplete;
        examined_++;
        if (in[0] != '*') {
          stage_ = Stage::Inline;
          scanned_ = 0;
          break;
        }
        stage_ = Stage::Count;
        pos_ = 1;
        scanned_ = 0;
        break;
      case Stage::Inline:
        return parse_inline(in, args, used, error);
      case Stage::Count: {
        switch (find_line(in, pos_, limits_.max_inline_bytes, line, next)) {
          case Line::Incomplete:
            return ParseStatus::Incomplete;
          case Line::TooLong:
            return fail(error, "too big mbulk count string");
          case Line::Ok:
            break;
        }
        examined_ += line.size();
        int64_t count = 0;
        if (!parse_int(line, count) || count > static_cast<int64_t>(limits_.max_args)) {
          return fail(error, "invalid multibulk length");
        }
        pos_ = next;
        if (count <= 0) {
          used = pos_;
          restart();
          return ParseStatus::Command;
        }
        args_left_ = static_cast<std::size_t>(count);
        args_.clear();
        stage_ = Stage::BulkHeader;
        break;
      }
      case Stage::BulkHeader: {
        if (pos_ >= in.size()) return ParseStatus::Incomplete;
        if (in[pos_] != '$') return fail(error, std::string("expected '$', got '") + in[pos_] + "'");
        switch (find_line(in, pos_ + 1, limits_.max_inline_bytes, line, next)) {
          case Line::Incomplete:
            return ParseStatus::Incomplete;
          case Line::TooLong:
            return fail(error, "too big bulk count string");
          case Line::Ok:
            break;
        }
        examined_ += line.size();
        int64_t len = 0;
        if (!parse_int(line, len) || len < 0 || static_cast<uint64_t>(len) > limits_.max_bulk_bytes) {
          return fail(error, "invalid bulk length");
        }
        if (static_cast<uint64_t>(len) > limits_.max_query_bytes) {
          return fail(error, "a bulk string of " + std::to_string(len) + " bytes is past the query buffer limit of " +
                                 std::to_string(limits_.max_query_bytes) + " bytes");
        }
        bulk_ = static_cast<std::size_t>(len);
        pos_ = next;
        stage_ = Stage::BulkBody;
        break;
      }
      case Stage::BulkBody: {
        // The string's bytes are the argument as they are: only its end is read.
        if (in.size() - pos_ < bulk_ + 2) return ParseStatus::Incomplete;
        examined_ += 2;
        if (in[pos_ + bulk_] != '\r' || in[pos_ + bulk_ + 1] != '\n') {
          return fail(error, "a bulk string of " + std::to_string(bulk_) + " bytes not followed by CRLF");
        }
        args_.push_back({pos_, bulk_});
        pos_ += bulk_ + 2;
        if (--args_left_ > 0) {
          stage_ = Stage::BulkHeader;
          break;
        }
        for (const Arg& a : args_) args.push_back(in.substr(a.at, a.bytes));
        used = pos_;
        restart();
        return ParseStatus::Command;
      }
    }
  }
}

ParseStatus parse_command(std::string_view in, const RespLimits& limits, std::vector<std::string_view>& args,
                          std::size_t& used, std::string& error) {
  CommandParser parser(limits);
  return parser.parse(in, args, used, error);
}

void append_simple(std::string& out, std::string_view text) {
  out += '+';
  out += text;
  out += "\r\n";
}

void append_error(std::string& out, std::string_view text) {
  out += '-';
  out += text;
  out += "\r\n";
}

void append_integer(std::string& out, int64_t value) {
  out += ':';
  out += std::to_string(value);
  out += "\r\n";
}

void append_bulk(std::string& out, std::string_view bytes) {
  out += '$';
  out += std::to_string(bytes.size());
  out += "\r\n";
  out += bytes;
  out += "\r\n";
}

void append_null(std::string& out) { out += "$-1\r\n"; }

void append_array(std::string& out, std::size_t count) {
  out += '*';
  out += std::to_string(count);
  out += "\r\n";
}

namespace {

ParseStatus parse_reply_at(std::string_view in, std::size_t& pos, Reply& out, int depth, std::string& error) {
  if (pos >= in.size()) return ParseStatus::Incomplete;
  const char type = in[pos];
  std::string_view line;
  std::size_t next = 0;
  switch (read_line(in, pos + 1, kMaxReplyLine, line, next)) {
    case Line::Incomplete:
      return ParseStatus::Incomplete;
    case Line::TooLong:
      return fail(error, "a reply's line is longer than " + std::to_string(kMaxReplyLine) + " bytes");
    case Line::Ok:
      break;
  }
  out = Reply{};
  int64_t n = 0;
  switch (type) {
    case '+':
    case '-':
      out.kind = type == '+' ? Reply::Kind::Simple : Reply::Kind::Error;
      out.text = line;
      pos = next;
      return ParseStatus::Command;
    case ':':
      if (!parse_int(line, out.integer)) return fail(error, "an integer reply that is not an integer");
      out.kind = Reply::Kind::Integer;
      pos = next;
      return ParseStatus::Command;
    case '$': {
      if (!parse_int(line, n) || n < -1 || n > static_cast<int64_t>(kMaxReplyBulk)) {
        return fail(error, "invalid bulk length in a reply");
      }
      if (n == -1) {
        out.kind = Reply::Kind::Null;
        pos = next;
        return ParseStatus::Command;
      }
      const auto bytes = static_cast<std::size_t>(n);
      if (in.size() - next < bytes + 2) return ParseStatus::Incomplete;
      if (in[next + bytes] != '\r' || in[next + bytes + 1] != '\n') {
        return fail(error, "a bulk reply not followed by CRLF");
      }
      out.kind = Reply::Kind::Bulk;
      out.text = in.substr(next, bytes);
      pos = next + bytes + 2;
      return ParseStatus::Command;
    }
    case '*': {
      if (!parse_int(line, n) || n < -1) return fail(error, "invalid array length in a reply");
      if (n == -1) {
        out.kind = Reply::Kind::Null;
        pos = next;
        return ParseStatus::Command;
      }
      if (depth >= kMaxReplyDepth) return fail(error, "a reply nests arrays too deep");
      out.kind = Reply::Kind::Array;
      std::size_t at = next;
      for (int64_t i = 0; i < n; i++) {
        Reply item;
        if (ParseStatus s = parse_reply_at(in, at, item, depth + 1, error); s != ParseStatus::Command) return s;
        out.items.push_back(std::move(item));
      }
      pos = at;
      return ParseStatus::Command;
    }
    default:
      return fail(error, std::string("a reply of unknown type '") + type + "'");
  }
}

}  // namespace

ParseStatus parse_reply(std::string_view in, Reply& out, std::size_t& used, std::string& error) {
  std::size_t pos = 0;
  const ParseStatus s = parse_reply_at(in, pos, out, 0, error);
  used = s == ParseStatus::Command ? pos : 0;
  return s;
}

}  // namespace abyss::server
