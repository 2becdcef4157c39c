// RESP2 as the server reads commands and the clients read replies: every
// frame a client may send, every prefix of it (a command still arriving),
// what the limits refuse, a seeded fuzz of random and cut frames that must
// never read past the input or loop, and a command parsed as it arrives
// (CommandParser): the same answers as parsing it whole, for work linear in
// its length however it is cut.
#include "server/resp.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace abyss::server {
namespace {

std::string frame(const std::vector<std::string>& args) {
  std::string out;
  append_array(out, args.size());
  for (const std::string& a : args) append_bulk(out, a);
  return out;
}

struct Parsed {
  ParseStatus status;
  std::vector<std::string> args;
  std::size_t used = 0;
  std::string error;
};

Parsed parse(std::string_view in, const RespLimits& limits = {}) {
  std::vector<std::string_view> views;
  Parsed p;
  p.status = parse_command(in, limits, views, p.used, p.error);
  for (std::string_view v : views) p.args.emplace_back(v);
  return p;
}

TEST(Resp, AnArrayOfBulkStringsIsOneCommand) {
  const std::string in = frame({"SET", "key", std::string("a\0b\r\nc", 6)});
  const Parsed p = parse(in + "*1\r\n$4\r\nPING\r\n");
  ASSERT_EQ(p.status, ParseStatus::Command) << p.error;
  EXPECT_EQ(p.args, (std::vector<std::string>{"SET", "key", std::string("a\0b\r\nc", 6)}));
  EXPECT_EQ(p.used, in.size()) << "the next command is left for the next call";
}

TEST(Resp, EveryPrefixOfACommandIsIncompleteAndUsesNothing) {
  const std::string in = frame({"MSET", "k1", "value one", "k2", std::string(300, 'x')});
  for (std::size_t n = 0; n < in.size(); n++) {
    const Parsed p = parse(std::string_view(in).substr(0, n));
    ASSERT_EQ(p.status, ParseStatus::Incomplete) << "prefix of " << n << " bytes: " << p.error;
    EXPECT_EQ(p.used, 0u);
  }
  EXPECT_EQ(parse(in).status, ParseStatus::Command);
}

TEST(Resp, InlineCommandsAreWordsOnALine) {
  Parsed p = parse("SET  k\tv\r\nGET k\n");
  ASSERT_EQ(p.status, ParseStatus::Command);
  EXPECT_EQ(p.args, (std::vector<std::string>{"SET", "k", "v"}));
  EXPECT_EQ(p.used, 10u);
  p = parse("GET k\n");
  EXPECT_EQ(p.args, (std::vector<std::string>{"GET", "k"}));
  EXPECT_EQ(parse("PING").status, ParseStatus::Incomplete);
  p = parse("\r\n");
  EXPECT_EQ(p.status, ParseStatus::Command);
  EXPECT_TRUE(p.args.empty()) << "an empty line is skipped";
}

TEST(Resp, EmptyAndNullArraysAreSkipped) {
  for (const char* in : {"*0\r\n", "*-1\r\n"}) {
    const Parsed p = parse(in);
    EXPECT_EQ(p.status, ParseStatus::Command) << in;
    EXPECT_TRUE(p.args.empty());
    EXPECT_EQ(p.used, std::string_view(in).size());
  }
}

// What Redis answers with "-ERR Protocol error: ..." and a closed connection.
TEST(Resp, MalformedFramesAreErrorsNamingWhatIsWrong) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"*x\r\n", "invalid multibulk length"},        {"*1\r\n:5\r\n", "expected '$', got ':'"},
      {"*1\r\n$-2\r\n", "invalid bulk length"},      {"*1\r\n$abc\r\n", "invalid bulk length"},
      {"*1\r\n$3\r\nGETXY", "not followed by CRLF"}, {"*99999999999999999999999\r\n", "invalid multibulk length"},
  };
  for (const auto& [in, why] : cases) {
    const Parsed p = parse(in);
    EXPECT_EQ(p.status, ParseStatus::Error) << in;
    EXPECT_NE(p.error.find(why), std::string::npos) << in << ": " << p.error;
    EXPECT_EQ(p.error.find('\n'), std::string::npos) << "one line";
  }
}

TEST(Resp, TheLimitsRefuseOversizedInputBeforeItArrives) {
  RespLimits limits;
  limits.max_bulk_bytes = 100;
  limits.max_args = 3;
  limits.max_inline_bytes = 64;
  EXPECT_EQ(parse("*1\r\n$101\r\n", limits).status, ParseStatus::Error) << "a value past the limit, announced";
  EXPECT_EQ(parse("*1\r\n$100\r\n", limits).status, ParseStatus::Incomplete);
  EXPECT_EQ(parse("*4\r\n", limits).status, ParseStatus::Error);
  EXPECT_EQ(parse(std::string(65, 'a'), limits).status, ParseStatus::Error) << "an inline line with no end";
  EXPECT_EQ(parse("a b c d\n", limits).status, ParseStatus::Error);
  EXPECT_EQ(parse("*" + std::string(80, '1'), limits).status, ParseStatus::Error) << "a count with no end";
}

TEST(Resp, AnArgumentPastTheQueryBufferLimitIsRefusedOnceAnnounced) {
  RespLimits limits;
  limits.max_query_bytes = 1000;
  const Parsed p = parse("*1\r\n$1001\r\n", limits);
  ASSERT_EQ(p.status, ParseStatus::Error);
  EXPECT_NE(p.error.find("query buffer limit of 1000 bytes"), std::string::npos) << p.error;
  EXPECT_EQ(parse("*1\r\n$1000\r\n", limits).status, ParseStatus::Incomplete);
}

// Feeds `in` to one parser a byte at a time, as a connection whose client
// sends a byte per packet: Incomplete until the last byte, then Command.
struct ByteAtATime {
  std::vector<std::string> args;
  uint64_t examined = 0;
};
ByteAtATime feed_bytewise(std::string_view in, const RespLimits& limits = {}) {
  CommandParser parser(limits);
  std::string buffer;
  std::vector<std::string_view> views;
  ByteAtATime out;
  for (std::size_t n = 0; n < in.size(); n++) {
    buffer += in[n];
    std::size_t used = 0;
    std::string error;
    const ParseStatus s = parser.parse(buffer, views, used, error);
    const ParseStatus want = n + 1 < in.size() ? ParseStatus::Incomplete : ParseStatus::Command;
    EXPECT_EQ(s, want) << "after " << n + 1 << " of " << in.size() << " bytes: " << error;
    if (s != want) return out;
    if (s == ParseStatus::Command) {
      EXPECT_EQ(used, in.size());
    }
  }
  for (std::string_view v : views) out.args.emplace_back(v);
  out.examined = parser.examined();
  return out;
}

// A command that arrives a byte at a time is read where the last read
// stopped: the parser's work (bytes it looks at) stays within a small
// multiple of the input, not the square of it, for a command of many
// arguments, one large argument, or one long inline line.
TEST(Resp, ACommandSentAByteAtATimeIsParsedInLinearWork) {
  std::vector<std::string> many(100'000, "value");
  many[0] = "MSET";
  const std::string many_frame = frame(many);
  ASSERT_GT(many_frame.size(), std::size_t{1} << 20);
  ByteAtATime got = feed_bytewise(many_frame);
  EXPECT_EQ(got.args, many);
  EXPECT_LE(got.examined, 4 * many_frame.size()) << "work of " << got.examined << " for " << many_frame.size();

  const std::vector<std::string> big = {"SET", "k", std::string(std::size_t{1} << 20, 'v')};
  const std::string big_frame = frame(big);
  got = feed_bytewise(big_frame);
  EXPECT_EQ(got.args, big);
  EXPECT_LE(got.examined, 4 * big_frame.size());

  const std::string line = "ECHO " + std::string(60'000, 'w') + "\r\n";
  got = feed_bytewise(line);
  EXPECT_EQ(got.args, (std::vector<std::string>{"ECHO", std::string(60'000, 'w')}));
  EXPECT_LE(got.examined, 4 * line.size());
}

// Whatever the input and however it is cut, a parser fed it piece by piece
// answers at each step what parsing the input so far whole answers.
TEST(Resp, ParsingAsInputArrivesAgreesWithParsingItWhole) {
  std::mt19937_64 rng(20261127);
  const RespLimits limits{.max_bulk_bytes = 4096, .max_args = 64, .max_inline_bytes = 1024, .max_query_bytes = 2048};
  const std::string alphabet = "*$:+-\r\n0123456789 abcXYZ";
  for (int round = 0; round < 5000; round++) {
    std::vector<std::string> args(1 + rng() % 5);
    for (std::string& a : args) a.assign(rng() % 40, static_cast<char>('a' + rng() % 26));
    std::string in = rng() % 4 == 0 ? "SET k v\r\n" : frame(args);
    if (rng() % 2 == 0) in[rng() % in.size()] = alphabet[rng() % alphabet.size()];
    CommandParser parser(limits);
    std::string_view rest = in;
    std::size_t have = 0;
    while (!rest.empty()) {
      have = std::min(rest.size(), have + 1 + rng() % 8);
      const std::string_view so_far = rest.substr(0, have);
      std::vector<std::string_view> a;
      std::vector<std::string_view> b;
      std::size_t used_a = 0;
      std::size_t used_b = 0;
      std::string error_a;
      std::string error_b;
      const ParseStatus s = parser.parse(so_far, a, used_a, error_a);
      ASSERT_EQ(s, parse_command(so_far, limits, b, used_b, error_b)) << round << ": " << so_far;
      ASSERT_EQ(a, b);
      ASSERT_EQ(used_a, used_b);
      ASSERT_EQ(error_a, error_b);
      if (s == ParseStatus::Error) break;
      if (s == ParseStatus::Command) {
        rest.remove_prefix(used_a);
        have = 0;
      } else if (have == rest.size()) {
        break;  // cut: nothing more arrives
      }
    }
  }
}

TEST(Resp, RepliesReadBackAsWritten) {
  std::string out;
  append_array(out, 6);
  append_simple(out, "OK");
  append_error(out, "ERR unknown command 'FOO'");
  append_integer(out, -42);
  append_bulk(out, std::string("\r\n\0", 3));
  append_null(out);
  append_array(out, 1);
  append_integer(out, 7);
  for (std::size_t n = 0; n < out.size(); n++) {
    Reply r;
    std::size_t used = 0;
    std::string error;
    ASSERT_EQ(parse_reply(std::string_view(out).substr(0, n), r, used, error), ParseStatus::Incomplete) << n;
  }
  Reply r;
  std::size_t used = 0;
  std::string error;
  ASSERT_EQ(parse_reply(out, r, used, error), ParseStatus::Command) << error;
  EXPECT_EQ(used, out.size());
  ASSERT_EQ(r.kind, Reply::Kind::Array);
  ASSERT_EQ(r.items.size(), 6u);
  EXPECT_EQ(r.items[0].kind, Reply::Kind::Simple);
  EXPECT_EQ(r.items[0].text, "OK");
  EXPECT_EQ(r.items[1].kind, Reply::Kind::Error);
  EXPECT_EQ(r.items[2].integer, -42);
  EXPECT_EQ(r.items[3].text, std::string("\r\n\0", 3));
  EXPECT_EQ(r.items[4].kind, Reply::Kind::Null);
  EXPECT_EQ(r.items[5].items.at(0).integer, 7);
}

// A seeded fuzz: random bytes, valid frames cut anywhere, and valid frames
// with one byte changed. Whatever comes in, a parse ends with one of the
// three answers, uses no more than it was given, and a Command uses some.
TEST(Resp, FuzzedInputNeverReadsPastItsEndNorStalls) {
  std::mt19937_64 rng(20261126);
  const RespLimits limits{.max_bulk_bytes = 4096, .max_args = 64, .max_inline_bytes = 1024};
  const std::string alphabet = "*$:+-\r\n0123456789 abcXYZ";
  uint64_t commands = 0;
  uint64_t errors = 0;
  for (int round = 0; round < 20000; round++) {
    std::string in;
    const auto kind = rng() % 3;
    if (kind == 0) {
      const std::size_t n = rng() % 64;
      for (std::size_t i = 0; i < n; i++) in += alphabet[rng() % alphabet.size()];
    } else {
      std::vector<std::string> args(1 + rng() % 5);
      for (std::string& a : args) a.assign(rng() % 40, static_cast<char>('a' + rng() % 26));
      in = frame(args);
      if (kind == 1) {
        in.resize(rng() % (in.size() + 1));
      } else {
        in[rng() % in.size()] = alphabet[rng() % alphabet.size()];
      }
    }
    // Parse the input as a connection would, command after command.
    std::string_view rest = in;
    for (int steps = 0;; steps++) {
      ASSERT_LT(steps, 1000) << "a parse that makes no progress";
      std::vector<std::string_view> args;
      std::size_t used = 0;
      std::string error;
      const ParseStatus s = parse_command(rest, limits, args, used, error);
      if (s != ParseStatus::Command) {
        errors += s == ParseStatus::Error ? 1 : 0;
        if (s == ParseStatus::Error) {
          EXPECT_FALSE(error.empty());
        }
        break;
      }
      commands++;
      ASSERT_GT(used, 0u);
      ASSERT_LE(used, rest.size());
      for (std::string_view a : args) {
        ASSERT_GE(a.data(), rest.data());
        ASSERT_LE(a.data() + a.size(), rest.data() + used) << "an argument outside its command";
      }
      rest.remove_prefix(used);
    }
  }
  EXPECT_GT(commands, 1000u);
  EXPECT_GT(errors, 1000u);
}

}  // namespace
}  // namespace abyss::server
