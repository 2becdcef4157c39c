#pragma once
// `abyss load`: the NoSQL study's insert workload as a client (§2): clients
// each set the keys of their own range ("<prefix><client>:<n>") to values of
// random letters, over RESP2, until a total over all clients is reached,
// against `abyss serve` or any Redis server. Client i talks to the i-th port
// given, round and round: one port is one server for all, as many ports as
// clients is one server each (the study's N instances).
#include <cstdint>
#include <string>
#include <vector>

#include "stats/histogram.h"

namespace abyss::server {

struct LoadOptions {
  std::string host = "127.0.0.1";
  std::vector<uint16_t> ports;
  uint32_t clients = 1;
  uint64_t total = 1'000'000;  // SETs over all clients
  uint32_t value_size = 100;   // bytes (the study's 100)
  uint32_t pipeline = 1;       // SETs a client sends before it reads their replies
  bool weak = false;           // SET ... WEAK (abyss serve's weak consistency)
  uint64_t seed = 1;
  std::string prefix = "c";
  std::string json_path;  // also the result as JSON here, if given
};

struct LoadResult {
  uint64_t sets = 0;
  uint64_t ok = 0;       // answered +OK
  uint64_t dropped = 0;  // answered +DROPPED (abyss serve --semantic-drop)
  uint64_t errors = 0;   // answered with an error
  double seconds = 0;    // from the first client's start to the last one's end
  Histogram latency;     // ns from sending a SET to reading its reply
  std::string first_error;
};

// Why `options` cannot run (one line naming the flag), or empty; an output
// path that cannot be written among them.
std::string check_load(const LoadOptions& options);
// Writes `r` as JSON to options.json_path, if given; the reason it could not.
std::string write_load_json(const LoadOptions& options, const LoadResult& r);
// Connects every client first, then runs them. Throws std::invalid_argument
// when a server cannot be reached, std::runtime_error when a connection
// fails on the way.
LoadResult run_load(const LoadOptions& options);

}  // namespace abyss::server
