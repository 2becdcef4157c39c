#include "server/load.h"

#include <algorithm>
#include <stdexcept>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/zipf.h"
#include "platform/atomic.h"
#include "platform/clock.h"
#include "platform/file.h"
#include "platform/net.h"
#include "platform/thread.h"
#include "server/resp.h"

namespace abyss::server {

namespace {

// One client's connection and what it has read but not parsed.
struct Conn {
  platform::Socket socket;
  std::string in;
};

// Reads one reply; the reason if the connection ended first.
std::string read_reply(Conn& c, Reply& r) {
  for (;;) {
    std::size_t used = 0;
    std::string error;
    const ParseStatus st = parse_reply(c.in, r, used, error);
    if (st == ParseStatus::Command) {
      c.in.erase(0, used);
      return {};
    }
    if (st == ParseStatus::Error) return "the server's reply is not RESP2: " + error;
    char buf[16384];
    platform::Socket::Io io = c.socket.read(buf, sizeof buf);
    if (io.closed) return io.error.empty() ? "the server closed the connection" : io.error;
    c.in.append(buf, io.bytes);
  }
}

void append_set(std::string& out, std::string_view key, std::string_view value, bool weak) {
  out += weak ? "*4\r\n$3\r\nSET\r\n" : "*3\r\n$3\r\nSET\r\n";
  append_bulk(out, key);
  append_bulk(out, value);
  if (weak) append_bulk(out, "WEAK");
}

}  // namespace

std::string check_load(const LoadOptions& o) {
  if (o.ports.empty()) return "--port: give at least one port";
  if (o.clients == 0) return "--clients 0: at least one client";
  if (o.total < o.clients) {
    return "--total " + std::to_string(o.total) + " is fewer than --clients " + std::to_string(o.clients) +
           ": each client sets at least one key";
  }
  if (o.pipeline == 0) return "--pipeline 0: at least one SET at a time";
  if (o.host.empty()) return "--host is empty";
  if (!o.json_path.empty()) {
    if (auto err = platform::check_output_file(o.json_path); !err.empty()) return "--json " + err;
  }
  return {};
}

std::string write_load_json(const LoadOptions& o, const LoadResult& r) {
  if (o.json_path.empty()) return {};
  const auto us = [&](double q) { return static_cast<double>(r.latency.quantile(q)) / 1e3; };
  nlohmann::json j;
  j["clients"] = o.clients;
  j["ports"] = o.ports;
  j["pipeline"] = o.pipeline;
  j["value_size"] = o.value_size;
  j["weak"] = o.weak;
  j["sets"] = r.sets;
  j["ok"] = r.ok;
  j["dropped"] = r.dropped;
  j["errors"] = r.errors;
  j["seconds"] = r.seconds;
  j["ops_per_s"] = r.seconds > 0 ? static_cast<double>(r.sets) / r.seconds : 0.0;
  j["p50_us"] = us(0.5);
  j["p99_us"] = us(0.99);
  j["p999_us"] = us(0.999);
  platform::OutputFile f;
  std::string err = f.open(o.json_path);
  if (err.empty()) {
    f.write(j.dump(2) + "\n");
    err = f.close();
  }
  return err.empty() ? std::string() : o.json_path + ": " + err;
}

LoadResult run_load(const LoadOptions& o) {
  if (auto err = check_load(o); !err.empty()) throw std::invalid_argument(err);
  std::vector<Conn> conns(o.clients);
  for (uint32_t i = 0; i < o.clients; i++) {
    const uint16_t port = o.ports[i % o.ports.size()];
    if (auto err = platform::connect_tcp(o.host, port, conns[i].socket); !err.empty()) {
      throw std::invalid_argument(err);
    }
  }
  std::vector<LoadResult> per(o.clients);
  std::vector<uint64_t> begin(o.clients);
  std::vector<uint64_t> end(o.clients);
  platform::Atomic<uint32_t> ready{0};
  platform::run_threads(o.clients, false, [&](uint32_t i) {
    LoadResult& r = per[i];
    Conn& c = conns[i];
    Rng rng(o.seed * 0x9e3779b97f4a7c15ULL + i);
    const uint64_t first = o.total * i / o.clients;
    const uint64_t last = o.total * (i + 1) / o.clients;
    std::string value(o.value_size, 'a');
    std::string batch;
    std::string key;
    // Every client starts together.
    ready.fetch_add(1, platform::memory_order_acq_rel);
    while (ready.load(platform::memory_order_acquire) < o.clients) platform::yield_thread();
    begin[i] = platform::wall_ns();
    for (uint64_t n = first; n < last;) {
      batch.clear();
      const uint64_t upto = std::min<uint64_t>(last, n + o.pipeline);
      for (uint64_t k = n; k < upto; k++) {
        key = o.prefix + std::to_string(i) + ":" + std::to_string(k);
        for (char& ch : value) ch = static_cast<char>('a' + rng.uniform(26));
        append_set(batch, key, value, o.weak);
      }
      const uint64_t sent_at = platform::wall_ns();
      if (platform::Socket::Io io = c.socket.write(batch.data(), batch.size()); io.closed) {
        throw std::runtime_error("client " + std::to_string(i) + ": " + io.error);
      }
      for (uint64_t k = n; k < upto; k++) {
        Reply reply;
        if (auto err = read_reply(c, reply); !err.empty()) {
          throw std::runtime_error("client " + std::to_string(i) + ": " + err);
        }
        r.latency.record(platform::wall_ns() - sent_at);
        r.sets++;
        if (reply.kind == Reply::Kind::Simple && reply.text == "OK") {
          r.ok++;
        } else if (reply.kind == Reply::Kind::Simple && reply.text == "DROPPED") {
          r.dropped++;
        } else {
          r.errors++;
          if (r.first_error.empty())
            r.first_error = reply.kind == Reply::Kind::Error ? reply.text : "an unexpected reply";
        }
      }
      n = upto;
    }
    end[i] = platform::wall_ns();
  });
  LoadResult all;
  for (const LoadResult& r : per) {
    all.sets += r.sets;
    all.ok += r.ok;
    all.dropped += r.dropped;
    all.errors += r.errors;
    all.latency.merge(r.latency);
    if (all.first_error.empty()) all.first_error = r.first_error;
  }
  all.seconds =
      static_cast<double>(*std::max_element(end.begin(), end.end()) - *std::min_element(begin.begin(), begin.end())) /
      1e9;
  return all;
}

}  // namespace abyss::server
