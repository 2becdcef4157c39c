// `abyss serve` end to end (server/server.h): a server in this process on a
// port the system picks, and clients over loopback. The commands and their
// errors; MULTI/EXEC transfers that keep a sum under every scheme (and lose
// it under `none`, the negative control); a served history the checker
// passes; random, cut and abruptly closed input that never crashes the
// server or leaks a connection.
#include <gtest/gtest.h>

#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <future>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cc/schemes.h"
#include "check/history.h"
#include "common/config.h"
#include "platform/machine.h"
#include "platform/net.h"
#include "server/resp.h"
#include "server/server.h"
#include "support/run_abyss.h"
#include "workload/kv/kv.h"

namespace abyss::server {
namespace {

namespace fs = std::filesystem;

#if defined(__SANITIZE_THREAD__)
constexpr bool kThreadSanitizer = true;  // `none` races by design: its controls run elsewhere
#else
constexpr bool kThreadSanitizer = false;
#endif

// A server running on a thread of this process until destroyed.
class Served {
 public:
  explicit Served(Config cfg, ServeOptions options = {}) {
    cfg.workload = "kv";
    if (cfg.settings<KvConfig>().slots == KvConfig{}.slots) cfg.settings<KvConfig>().slots = 4096;
    options.port = 0;
    std::future<uint16_t> ready = port_promise_.get_future();
    thread_ = std::thread([this, cfg, options] {
      bool listening = false;
      try {
        result_ = serve(cfg, options, [&](uint16_t p, uint32_t /*threads*/) {
          listening = true;
          port_promise_.set_value(p);
        });
      } catch (const std::exception& e) {
        if (!listening) port_promise_.set_exception(std::current_exception());
        error_ = e.what();
      }
    });
    port_ = ready.get();
  }
  ~Served() { stop(); }
  Served(const Served&) = delete;
  Served& operator=(const Served&) = delete;

  uint16_t port() const { return port_; }
  const ServeResult& stop() {
    if (thread_.joinable()) {
      platform::request_termination();
      thread_.join();
      EXPECT_EQ(error_, "") << "the server failed";
    }
    return result_;
  }

 private:
  std::promise<uint16_t> port_promise_;
  std::thread thread_;
  uint16_t port_ = 0;
  std::string error_;
  ServeResult result_;
};

// A blocking RESP client.
class Client {
 public:
  explicit Client(uint16_t port) { EXPECT_EQ(platform::connect_tcp("127.0.0.1", port, socket_), ""); }

  void send(const std::vector<std::string>& args) {
    std::string out = "*" + std::to_string(args.size()) + "\r\n";
    for (const auto& a : args) out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
    send_raw(out);
  }
  void send_raw(const std::string& bytes) { ASSERT_FALSE(socket_.write(bytes.data(), bytes.size()).closed); }

  // Takes the reply at the front of what was read, if a whole one is there.
  bool take_reply(Reply& r) {
    std::size_t used = 0;
    std::string error;
    if (in_.empty() || parse_reply(in_, r, used, error) != ParseStatus::Command) return false;
    in_.erase(0, used);
    return true;
  }

  Reply read() {
    for (;;) {
      if (Reply r; take_reply(r)) return r;
      char buf[4096];
      platform::Socket::Io io = socket_.read(buf, sizeof buf);
      if (io.closed) {
        Reply closed;
        closed.kind = Reply::Kind::Error;
        closed.text = "(connection closed)";
        return closed;
      }
      in_.append(buf, io.bytes);
    }
  }

  Reply call(const std::vector<std::string>& args) {
    send(args);
    return read();
  }

  // The next reply, or an error reply saying none came within `ms`.
  Reply read_within(int ms) {
    for (const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);;) {
      if (Reply r; take_reply(r)) return r;
      if (std::chrono::steady_clock::now() > deadline || !read_some()) {
        Reply none;
        none.kind = Reply::Kind::Error;
        none.text = "(no reply)";
        return none;
      }
    }
  }

  // Whether the server closes the connection within `ms`, reading what it
  // sends until then.
  bool closed_within(int ms) {
    for (const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
         std::chrono::steady_clock::now() < deadline;) {
      if (!read_some()) return true;
    }
    return false;
  }

  // Whether the server closed the connection (reading to its end).
  bool closed_by_server() {
    char buf[4096];
    for (;;) {
      platform::Socket::Io io = socket_.read(buf, sizeof buf);
      if (io.closed) return true;
    }
  }

  void close() { socket_.close(); }
  platform::Socket& socket() { return socket_; }

 private:
  // Reads what arrives within a tenth of a second into the input; false once
  // the server has closed the connection.
  bool read_some() {
    platform::Poller poller;
    EXPECT_EQ(poller.add(socket_, 1), "");
    std::vector<platform::PollEvent> events(1);
    const bool ready = poller.wait(events, 100) > 0;
    poller.remove(socket_);
    if (!ready) return true;
    char buf[4096];
    platform::Socket::Io io = socket_.read(buf, sizeof buf);  // ready: it does not block
    in_.append(buf, io.bytes);
    return !io.closed;
  }

  platform::Socket socket_;
  std::string in_;
};

std::string show(const Reply& r) {
  switch (r.kind) {
    case Reply::Kind::Simple:
      return "+" + r.text;
    case Reply::Kind::Error:
      return "-" + r.text;
    case Reply::Kind::Integer:
      return ":" + std::to_string(r.integer);
    case Reply::Kind::Bulk:
      return "$" + r.text;
    case Reply::Kind::Null:
      return "(nil)";
    case Reply::Kind::Array: {
      std::string s = "[";
      for (const Reply& i : r.items) s += (s.size() > 1 ? " " : "") + show(i);
      return s + "]";
    }
  }
  return "?";
}

Config config_for(std::string_view cc) {
  Config cfg;
  cfg.cc = std::string(cc);
  cfg.threads = 2;  // two workers: their transactions overlap
  return cfg;
}

// Open descriptors of this process: the server's sockets among them.
std::size_t open_descriptors() {
  std::size_t n = 0;
  for (const auto& e : fs::directory_iterator("/proc/self/fd")) {
    (void)e;
    n++;
  }
  return n;
}

class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (platform::kSimulated) GTEST_SKIP() << "a simulated build does not serve";
  }
};

TEST_F(ServerTest, EveryCommandAnswersAsRedisDoes) {
  Served s(config_for("no_wait"));
  Client c(s.port());
  const std::vector<std::pair<std::vector<std::string>, std::string>> script = {
      {{"PING"}, "+PONG"},
      {{"PING", "hi"}, "$hi"},
      {{"ECHO", "x"}, "$x"},
      {{"GET", "a"}, "(nil)"},
      {{"SET", "a", "1"}, "+OK"},
      {{"GET", "a"}, "$1"},
      {{"set", "a", "2", "NX"}, "(nil)"},
      {{"SET", "b", "2", "XX"}, "(nil)"},
      {{"SET", "a", "5", "xx"}, "+OK"},
      {{"SET", "a", "5", "NX", "XX"}, "-ERR syntax error"},
      {{"SET", "a", "5", "EX", "10"}, "-ERR syntax error"},
      {{"INCR", "a"}, ":6"},
      {{"INCRBY", "a", "10"}, ":16"},
      {{"DECR", "a"}, ":15"},
      {{"DECRBY", "a", "20"}, ":-5"},
      {{"INCR", "fresh"}, ":1"},
      {{"INCRBY", "a", "x"}, "-ERR value is not an integer or out of range"},
      {{"SET", "t", "text"}, "+OK"},
      {{"INCR", "t"}, "-ERR value is not an integer or out of range"},
      {{"SET", "m", "9223372036854775807"}, "+OK"},
      {{"INCR", "m"}, "-ERR increment or decrement would overflow"},
      {{"MSET", "k1", "v1", "k2", "v2"}, "+OK"},
      {{"MSET", "k1", "v1", "k2"}, "-ERR wrong number of arguments for 'mset' command"},
      {{"MGET", "k1", "nope", "k2"}, "[$v1 (nil) $v2]"},
      {{"EXISTS", "k1", "k2", "nope", "k1"}, ":3"},
      {{"DEL", "k1", "nope"}, ":1"},
      {{"GET", "k1"}, "(nil)"},
      {{"EXISTS", "k1"}, ":0"},
      {{"SET", "k1", "again"}, "+OK"},
      {{"GET", "k1"}, "$again"},
      {{"GET"}, "-ERR wrong number of arguments for 'get' command"},
      {{"NOSUCH", "x"}, "-ERR unknown command 'NOSUCH'"},
      {{"SET", std::string(65, 'k'), "v"},
       "-ERR key or value longer than the table holds (--kv-max-key, --kv-max-value)"},
      {{"SET", "k", std::string(129, 'v')},
       "-ERR key or value longer than the table holds (--kv-max-key, --kv-max-value)"},
      {{"SELECT", "0"}, "+OK"},
      {{"SELECT", "1"}, "-ERR DB index is out of range"},
      {{"CONFIG", "GET", "appendonly"}, "[$appendonly $no]"},
      {{"EXEC"}, "-ERR EXEC without MULTI"},
      {{"DISCARD"}, "-ERR DISCARD without MULTI"},
      {{"MULTI"}, "+OK"},
      {{"MULTI"}, "-ERR MULTI calls can not be nested"},
      {{"INCR", "ctr"}, "+QUEUED"},
      {{"SET", "other", "x"}, "+QUEUED"},
      {{"GET", "ctr"}, "+QUEUED"},
      {{"EXEC"}, "[:1 +OK $1]"},
      {{"MULTI"}, "+OK"},
      {{"INCR", "ctr"}, "+QUEUED"},
      {{"DISCARD"}, "+OK"},
      {{"GET", "ctr"}, "$1"},
      {{"MULTI"}, "+OK"},
      {{"INCR", "ctr"}, "+QUEUED"},
      {{"GET"}, "-ERR wrong number of arguments for 'get' command"},
      {{"EXEC"}, "-EXECABORT Transaction discarded because of previous errors."},
      {{"GET", "ctr"}, "$1"},
      {{"QUIT"}, "+OK"},
  };
  for (const auto& [args, want] : script) {
    std::string line;
    for (const auto& a : args) line += a.substr(0, 16) + " ";
    EXPECT_EQ(show(c.call(args)), want) << line;
  }
  EXPECT_TRUE(c.closed_by_server());
  // Inline commands, as typed into a terminal, and pipelining.
  Client p(s.port());
  p.send_raw("PING\r\nSET i 7\r\nGET i\r\n");
  EXPECT_EQ(show(p.read()), "+PONG");
  EXPECT_EQ(show(p.read()), "+OK");
  EXPECT_EQ(show(p.read()), "$7");
  const std::string info = p.call({"INFO"}).text;
  EXPECT_NE(info.find("cc:no_wait"), std::string::npos) << info;
}

// The run flags that act within a transaction reach every served worker as
// they reach a run's (txn/worker_set.h), each way: INFO tells the worker's own.
TEST_F(ServerTest, RunFlagsReachEveryWorker) {
  for (const bool given : {false, true}) {
    Config cfg = config_for("silo");
    if (given) {
      cfg.prefetch = false;
      cfg.alloc = AllocKind::Malloc;
      cfg.read_copy = true;
      cfg.read_only_tables = ReadOnlyTables::Cc;
      cfg.phantom_protection = false;
    }
    Served s(cfg);
    // Each connection goes to the worker with the fewest; kept open, they
    // reach every worker.
    std::set<std::string> workers;
    std::vector<std::unique_ptr<Client>> clients;
    for (int i = 0; i < 16 && workers.size() < cfg.threads; i++) {
      Client& c = *clients.emplace_back(std::make_unique<Client>(s.port()));
      const std::string info = c.call({"INFO"}).text;
      const std::size_t at = info.find("\r\nworker:");
      ASSERT_NE(at, std::string::npos) << info;
      workers.insert(info.substr(at, info.find('\r', at + 2) - at));
      for (const char* line : {"prefetch_worker:on", "alloc_worker:arena", "read_copy_worker:off",
                               "read_only_tables_worker:bypass", "phantom_protection_worker:on"}) {
        if (!given) {
          EXPECT_NE(info.find(line), std::string::npos) << line << " in\n" << info;
        }
      }
      for (const char* line : {"prefetch_worker:off", "alloc_worker:malloc", "read_copy_worker:on",
                               "read_only_tables_worker:cc", "phantom_protection_worker:off"}) {
        if (given) {
          EXPECT_NE(info.find(line), std::string::npos) << line << " in\n" << info;
        }
      }
    }
    EXPECT_EQ(workers.size(), cfg.threads) << "INFO reached only some workers";
  }
}

TEST_F(ServerTest, AFullTableRefusesANewKeyButServesTheOthers) {
  Config cfg = config_for("silo");
  cfg.settings<KvConfig>().probe = 2;
  Served s(cfg);
  Client c(s.port());
  // 4096 slots at most: a set that finds no free slot among its 2 fails.
  std::string refused;
  for (int i = 0; i < 6000 && refused.empty(); i++) {
    const std::string key = "key" + std::to_string(i);
    const Reply r = c.call({"SET", key, std::to_string(i)});
    if (r.kind == Reply::Kind::Error) {
      EXPECT_NE(r.text.find("no free slot"), std::string::npos) << r.text;
      refused = key;
    }
  }
  ASSERT_FALSE(refused.empty());
  EXPECT_EQ(show(c.call({"GET", "key0"})), "$0");
  EXPECT_EQ(show(c.call({"GET", refused})), "(nil)");
  EXPECT_EQ(show(c.call({"MSET", "key0", "new", refused, "x"})).substr(0, 17), "-ERR no free slot");
  // MSET is all or nothing: key0 kept its value.
  EXPECT_EQ(show(c.call({"GET", "key0"})), "$0");
}

// Clients move amounts between accounts with MULTI/EXEC; every transfer is
// one transaction, so the total never changes.
int64_t transfer_total(uint16_t port, int clients, int transfers, int accounts) {
  {
    Client setup(port);
    for (int a = 0; a < accounts; a++) EXPECT_EQ(show(setup.call({"SET", "acct" + std::to_string(a), "1000"})), "+OK");
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < clients; t++) {
    threads.emplace_back([=] {
      Client c(port);
      std::mt19937_64 rng(static_cast<uint64_t>(t) + 1);
      for (int i = 0; i < transfers; i++) {
        const auto from = "acct" + std::to_string(rng() % accounts);
        const auto to = "acct" + std::to_string(rng() % accounts);
        const auto amount = std::to_string(rng() % 10 + 1);
        // One write: the server runs the EXEC at once.
        c.send_raw("MULTI\r\nDECRBY " + from + " " + amount + "\r\nINCRBY " + to + " " + amount + "\r\nEXEC\r\n");
        for (int k = 0; k < 3; k++) (void)c.read();
        const Reply exec = c.read();
        EXPECT_EQ(exec.kind, Reply::Kind::Array) << show(exec);
      }
    });
  }
  for (auto& t : threads) t.join();
  Client sum(port);
  int64_t total = 0;
  for (int a = 0; a < accounts; a++) {
    const Reply r = sum.call({"GET", "acct" + std::to_string(a)});
    total += std::stoll(r.text);
  }
  return total;
}

TEST_F(ServerTest, TransfersKeepTheSumUnderEveryScheme) {
  for (const cc::SchemeTraits& scheme : cc::schemes()) {
    if (scheme.name == "none") continue;  // the negative control, below
    Config cfg = config_for(scheme.name);
    cfg.settings<KvConfig>().partitions = 2;  // H-STORE locks a transfer's partitions
    Served s(cfg);
    EXPECT_EQ(transfer_total(s.port(), 4, 300, 4), 4000) << scheme.name;
    const ServeResult& r = s.stop();
    EXPECT_GE(r.transactions, 4u * 300) << scheme.name;
  }
}

// The negative control of the test above: without concurrency control two
// workers' transfers overwrite each other's balances and the sum moves. A
// race shows only while both workers run at once, so rounds go on, up to
// 40, until one does.
TEST_F(ServerTest, TransfersLoseTheSumUnderNone) {
  if (kThreadSanitizer)
    GTEST_SKIP() << "`none` races by design; ThreadSanitizer would report the races it exists to show";
  Config cfg = config_for("none");
  cfg.settings<KvConfig>().partitions = 2;
  int64_t total = 4000;
  for (int round = 0; round < 40 && total == 4000; round++) {
    Served s(cfg);
    total = transfer_total(s.port(), 4, 300, 4);
  }
  EXPECT_NE(total, 4000) << "none kept the sum in 40 rounds: the check of every other scheme could not fail";
}

// Clients increment one counter, `pipeline` INCRs per write; returns the
// increments the counter lost. Under `none` (`controlled` false) an INCR may
// read another's write half done and answer an error, and the counter may
// end torn: what it shows is lost, not a failure.
int64_t lost_increments(uint16_t port, int clients, int rounds, int pipeline, bool controlled = true) {
  std::vector<std::thread> threads;
  for (int t = 0; t < clients; t++) {
    threads.emplace_back([=] {
      Client c(port);
      std::string batch;
      for (int k = 0; k < pipeline; k++) batch += "INCR counter\r\n";
      for (int r = 0; r < rounds; r++) {
        c.send_raw(batch);
        for (int k = 0; k < pipeline; k++) {
          const Reply reply = c.read();
          if (controlled) {
            EXPECT_EQ(reply.kind, Reply::Kind::Integer) << reply.text;
          }
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  Client get(port);
  const std::string text = get.call({"GET", "counter"}).text;
  const int64_t sent = int64_t{clients} * rounds * pipeline;
  int64_t counted = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), counted);
  if (ec != std::errc() || end != text.data() + text.size()) {
    EXPECT_FALSE(controlled) << "the counter reads '" << text << "'";
    return sent;
  }
  return sent - counted;
}

TEST_F(ServerTest, IncrementsAreNeverLostUnderASchemeAndAreUnderNone) {
  for (std::string_view cc : {"no_wait", "mvcc", "silo", "none"}) {
    if (cc == "none" && kThreadSanitizer) continue;
    Served s(config_for(cc));
    int64_t lost = 0;
    // The negative control: without concurrency control two workers' reads
    // and writes of the counter interleave. Rounds until it shows, or fail.
    for (int round = 0; round == 0 || (cc == "none" && lost == 0 && round < 10); round++) {
      Client reset(s.port());
      EXPECT_EQ(show(reset.call({"SET", "counter", "0"})), "+OK");
      lost = lost_increments(s.port(), 2, 20, 1000, cc != "none");
    }
    if (cc == "none") {
      EXPECT_GT(lost, 0) << "none lost no increment: the test cannot tell a scheme from none";
    } else {
      EXPECT_EQ(lost, 0) << cc;
    }
  }
}

TEST_F(ServerTest, ContentionAwareSchedulingRunsOnePartitionAtATime) {
  // Claiming a partition before running on it serializes what shares one:
  // even without concurrency control nothing is lost, and transfers
  // (parked and run again as whole EXECs) keep their sum. Rounds until some
  // command found its partition claimed and waited (two workers must run
  // at once for that), or fail.
  for (std::string_view cc : {"none", "no_wait", "silo"}) {
    Config cfg = config_for(cc);
    cfg.settings<KvConfig>().partitions = 1;
    ServeOptions options;
    options.schedule = Schedule::ContentionAware;
    uint64_t waits = 0;
    for (int round = 0; round < 10 && waits == 0; round++) {
      Served s(cfg, options);
      {
        Client reset(s.port());
        EXPECT_EQ(show(reset.call({"SET", "counter", "0"})), "+OK");
      }
      EXPECT_EQ(lost_increments(s.port(), 4, 10, 500), 0) << cc;
      EXPECT_EQ(transfer_total(s.port(), 4, 300, 4), 4000) << cc;
      const ServeResult& r = s.stop();
      EXPECT_EQ(r.dropped, 0u) << cc;
      waits = r.waits;
    }
    EXPECT_GT(waits, 0u) << cc << ": no command ever found its partition claimed";
  }
}

TEST_F(ServerTest, SemanticDropDropsOnlyWeakWrites) {
  Config cfg = config_for("silo");
  cfg.settings<KvConfig>().partitions = 1;  // every operation claims the one partition
  ServeOptions options;
  options.schedule = Schedule::ContentionAware;
  options.semantic_drop = true;
  // Rounds until a weak write was dropped (two workers must run at once), or fail.
  uint64_t dropped_seen = 0;
  for (int round = 0; round < 10 && dropped_seen == 0; round++) {
    Served s(cfg, options);
    std::atomic<uint64_t> dropped{0};
    std::atomic<uint64_t> stored{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; t++) {
      threads.emplace_back([&, t] {
        Client c(s.port());
        std::string batch;
        for (int k = 0; k < 200; k++) {
          batch += "SET w" + std::to_string(t) + ":" + std::to_string(k) + " v WEAK\r\nINCR strong\r\n";
        }
        for (int r = 0; r < 10; r++) {
          c.send_raw(batch);
          for (int k = 0; k < 200; k++) {
            const Reply weak = c.read();
            if (weak.kind == Reply::Kind::Simple && weak.text == "DROPPED") {
              dropped++;
            } else {
              EXPECT_EQ(show(weak), "+OK");
              stored++;
            }
            EXPECT_EQ(c.read().kind, Reply::Kind::Integer);  // a strong write waits: never dropped
          }
        }
      });
    }
    for (auto& t : threads) t.join();
    Client c(s.port());
    EXPECT_EQ(show(c.call({"GET", "strong"})), "$8000");
    EXPECT_EQ(dropped + stored, 8000u);
    c.close();
    const ServeResult& r = s.stop();
    EXPECT_EQ(r.dropped, dropped.load());
    dropped_seen = r.dropped;
  }
  EXPECT_GT(dropped_seen, 0u) << "no weak write was ever dropped: the test does not exercise the drop";
}

// Served histories pass the checker: under a scheme, under each lock
// manager of --locking (MongoDB's hierarchical one, the study's baseline,
// and the wait/signal fast path), with a scheme and with none, since a
// command's document locks alone serialize what shares a key; with a
// thread per connection as with the pool (the baseline's threads); and
// `none` with no lock manager, the negative control, is caught.
TEST_F(ServerTest, AServedHistoryPassesTheChecker) {
  const std::string dir = test::temp_path("served-history");
  fs::create_directories(dir);
  struct Case {
    std::string_view cc;
    Locking locking;
    ConnectionThreads threads;
  };
  constexpr ConnectionThreads kPool = ConnectionThreads::Pool;
  constexpr ConnectionThreads kPerConnection = ConnectionThreads::PerConnection;
  const std::vector<Case> cases = {
      {"silo", Locking::None, kPool},          {"silo", Locking::Hierarchical, kPool},
      {"none", Locking::Hierarchical, kPool},  {"silo", Locking::WaitSignal, kPool},
      {"none", Locking::WaitSignal, kPool},    {"none", Locking::None, kPool},
      {"silo", Locking::None, kPerConnection}, {"none", Locking::Hierarchical, kPerConnection},
      {"none", Locking::None, kPerConnection}};
  for (const auto& [cc, locking, threads] : cases) {
    const bool caught = cc == "none" && locking == Locking::None;
    if (cc == "none" && kThreadSanitizer) continue;
    const std::string name = std::string(cc) + "-" + std::string(kLockingNames[static_cast<std::size_t>(locking)]) +
                             "-" + std::string(kConnectionThreadsNames[static_cast<std::size_t>(threads)]);
    const std::string path = dir + "/" + name + ".jsonl";
    Config cfg = config_for(cc);
    cfg.history_path = path;
    if (threads == kPerConnection) cfg.threads = 16;  // slots for the clients below, each on a thread of its own
    ServeOptions options;
    options.locking = locking;
    options.connection_threads = threads;
    bool serializable = true;
    uint64_t lock_waits = 0;
    // `none` shows a race only when both workers run at once: a loaded
    // machine may give them its cores in turn for many rounds, as it may
    // keep a command from ever finding another's document locked.
    for (int round = 0; round == 0 || (caught && serializable && round < 40) ||
                        (locking != Locking::None && lock_waits == 0 && round < 10);
         round++) {
      {
        Served s(cfg, options);
        const int64_t total = transfer_total(s.port(), 4, 50, 4);
        const int64_t lost = lost_increments(s.port(), 2, 10, 1000, !caught);
        if (!caught) {
          EXPECT_EQ(total, 4000) << name;
          EXPECT_EQ(lost, 0) << name;
        }
        const ServeResult& r = s.stop();
        lock_waits = r.lock_waits;
        if (threads == kPerConnection) {
          EXPECT_EQ(r.threads_started, r.connections) << name << ": a thread for each connection";
        }
      }
      const check::Report report = check::check_history_file(path);
      EXPECT_GT(report.transactions, 0u);
      serializable = report.serializable();
    }
    EXPECT_EQ(serializable, !caught) << name;
    if (locking != Locking::None) {
      EXPECT_GT(lock_waits, 0u) << name << ": no command ever found a document locked";
    }
  }
  fs::remove_all(dir);
}

// A thread per connection: each connection is served by a thread of its
// own on one of --threads slots; one past the slots is refused, and a slot
// whose connection closed serves the next one. With a log, a slot no
// connection has taken holds no commit's acknowledgement back, nor does
// one whose connection has gone.
TEST_F(ServerTest, AThreadPerConnectionServesEachAloneOnASlot) {
  const std::string dir = test::temp_path("served-per-connection");
  fs::remove_all(dir);
  Config cfg = config_for("silo");
  cfg.threads = 3;
  cfg.log.policy = LogPolicy::File;
  cfg.log.dir = dir;
  ServeOptions options;
  options.connection_threads = ConnectionThreads::PerConnection;
  Served s(cfg, options);
  uint64_t served = 0;
  {
    Client a(s.port());
    a.send({"SET", "a", "1"});
    EXPECT_EQ(show(a.read_within(10000)), "+OK");  // acknowledged while two slots were never taken
    Client b(s.port());
    EXPECT_EQ(show(b.call({"INCR", "n"})), ":1");
    Client c(s.port());
    EXPECT_EQ(show(c.call({"INCR", "n"})), ":2");
    Client d(s.port());  // every slot is taken
    EXPECT_EQ(show(d.read()), "-ERR max number of clients reached");
    served = 3;
  }
  // The slots come free as their threads see their connections close.
  std::string got;
  for (int attempt = 0; attempt < 100; attempt++) {
    Client e(s.port());
    Reply r = e.call({"INCR", "n"});
    got = show(r);
    if (got != "-ERR max number of clients reached") {
      served++;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(got, ":3");
  {
    Client f(s.port());
    EXPECT_EQ(show(f.call({"GET", "a"})), "$1");
    served++;
  }
  const ServeResult& r = s.stop();
  EXPECT_EQ(r.threads_started, served);
  EXPECT_EQ(r.connections, served);
  EXPECT_GE(r.refused, 1u);
  EXPECT_EQ(r.transactions, 5u);
  fs::remove_all(dir);
}

// With a log, a transaction that wrote nothing and read only durable
// versions replies at once: another connection's GET of a value whose SET
// was acknowledged. One that read a version not yet durable waits for it:
// GETs sent with the SET they read, while the group (0.2 s) is still open.
TEST_F(ServerTest, AReadOfDurableVersionsRepliesAtOnceAndAReadOfANewerOneWaits) {
  const std::string dir = test::temp_path("served-durable-reads");
  fs::remove_all(dir);
  Config cfg = config_for("silo");
  cfg.threads = 1;
  cfg.log.policy = LogPolicy::File;
  cfg.log.dir = dir;
  cfg.log.group_commit_us = 200000;
  ServeResult r;
  {
    Served s(cfg);
    Client writer(s.port());
    Client reader(s.port());
    EXPECT_EQ(show(writer.call({"SET", "x", "1"})), "+OK");  // acknowledged: durable
    for (int i = 0; i < 10; i++) EXPECT_EQ(show(reader.call({"GET", "x"})), "$1");
    std::string batch = "*3\r\n$3\r\nSET\r\n$1\r\ny\r\n$1\r\n2\r\n";
    for (int i = 0; i < 20; i++) batch += "*2\r\n$3\r\nGET\r\n$1\r\ny\r\n";
    writer.send_raw(batch);
    EXPECT_EQ(show(writer.read()), "+OK");
    for (int i = 0; i < 20; i++) EXPECT_EQ(show(writer.read()), "$2");
    r = s.stop();
  }
  EXPECT_GE(r.durable_reads, 10u) << "GETs of an acknowledged value waited";
  EXPECT_LT(r.durable_reads, 30u) << "every GET of a value not yet durable replied at once";
  fs::remove_all(dir);
}

TEST_F(ServerTest, RandomCutAndAbandonedInputNeverCrashesOrLeaks) {
  Served s(config_for("tictoc"));
  {
    Client warm(s.port());
    EXPECT_EQ(show(warm.call({"PING"})), "+PONG");
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const std::size_t before = open_descriptors();
  std::mt19937_64 rng(19);
  const std::vector<std::string> valid = {
      "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nvalue\r\n", "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n", "PING\r\n",
      "*1\r\n$5\r\nMULTI\r\n*2\r\n$4\r\nINCR\r\n$1\r\nn\r\n*1\r\n$4\r\nEXEC\r\n", "*2\r\n$4\r\nINCR\r\n$1\r\nn\r\n"};
  for (int i = 0; i < 600; i++) {
    std::string frame;
    switch (rng() % 4) {
      case 0:  // random bytes
        for (uint64_t n = rng() % 64; n > 0; n--) frame += static_cast<char>(rng());
        break;
      case 1:  // a valid frame cut short
        frame = valid[rng() % valid.size()];
        frame.resize(rng() % frame.size());
        break;
      case 2:  // a valid frame with one byte changed
        frame = valid[rng() % valid.size()];
        frame[rng() % frame.size()] = static_cast<char>(rng());
        break;
      default:  // valid frames, then a length past the limits
        frame = valid[rng() % valid.size()] + valid[rng() % valid.size()] + "*2\r\n$3\r\nGET\r\n$999999999999\r\n";
        break;
    }
    Client c(s.port());
    c.send_raw(frame);
    c.close();  // abruptly, whatever the server still has to say
    if (i % 50 == 49) {
      Client probe(s.port());
      EXPECT_EQ(show(probe.call({"PING"})), "+PONG") << "after frame " << i;
    }
  }
  // Every connection closed: the server holds no descriptor of them.
  std::size_t after = 0;
  for (int wait = 0; wait < 50; wait++) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    after = open_descriptors();
    if (after <= before) break;
  }
  EXPECT_LE(after, before);
  const ServeResult& r = s.stop();
  EXPECT_GT(r.protocol_errors, 0u);
  EXPECT_GE(r.connections, 600u);
}

TEST_F(ServerTest, AProtocolErrorIsAnsweredThenTheConnectionCloses) {
  Served s(config_for("occ"));
  Client c(s.port());
  c.send_raw("*1\r\n$4\r\nPING\r\n*x\r\n");
  EXPECT_EQ(show(c.read()), "+PONG");
  EXPECT_EQ(show(c.read()).substr(0, 20), "-ERR Protocol error:");
  EXPECT_TRUE(c.closed_by_server());
  Client big(s.port());
  big.send_raw("*2\r\n$3\r\nGET\r\n$999999999999\r\n");
  EXPECT_EQ(show(big.read()).substr(0, 20), "-ERR Protocol error:");
}

TEST_F(ServerTest, ClientsPastTheLimitAreRefused) {
  ServeOptions options;
  options.max_clients = 2;
  Served s(config_for("no_wait"), options);
  Client a(s.port());
  Client b(s.port());
  EXPECT_EQ(show(a.call({"PING"})), "+PONG");
  EXPECT_EQ(show(b.call({"PING"})), "+PONG");
  Client c(s.port());
  EXPECT_EQ(show(c.read()), "-ERR max number of clients reached");
  EXPECT_EQ(s.stop().refused, 1u);
}

TEST_F(ServerTest, AClientGoneWithRepliesHeldForTheLogLeavesNothingBehind) {
  Config cfg = config_for("silo");
  cfg.log.policy = LogPolicy::Memory;
  Served s(cfg);
  {
    Client warm(s.port());  // the acceptor's poller is open once this is answered
    EXPECT_EQ(show(warm.call({"PING"})), "+PONG");
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const std::size_t before = open_descriptors();
  for (int i = 0; i < 20; i++) {
    Client c(s.port());
    std::string pipeline;
    for (int k = 0; k < 200; k++) pipeline += "*3\r\n$3\r\nSET\r\n$2\r\nk" + std::to_string(k % 10) + "\r\n$1\r\nv\r\n";
    c.send_raw(pipeline);
    c.close();  // before any reply: they wait for the log
  }
  Client c(s.port());
  EXPECT_EQ(show(c.call({"SET", "after", "1"})), "+OK");
  EXPECT_EQ(show(c.call({"GET", "after"})), "$1");
  c.close();
  std::size_t after = 0;
  for (int wait = 0; wait < 50; wait++) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    after = open_descriptors();
    if (after <= before) break;
  }
  EXPECT_LE(after, before);
}

// A pipeline's replies held for the log are released together once their
// epoch is durable, and leave in one write, not one write each.
TEST_F(ServerTest, APipelinesRepliesReleasedTogetherLeaveInOneWrite) {
  Config cfg = config_for("silo");
  cfg.threads = 1;
  cfg.log.policy = LogPolicy::Memory;
  cfg.log.group_commit_us = 200000;
  constexpr int kSets = 64;
  ServeResult r;
  {
    Served s(cfg);
    Client c(s.port());
    std::string pipeline;
    for (int k = 0; k < kSets; k++)
      pipeline += "*3\r\n$3\r\nSET\r\n$3\r\nk" + std::to_string(10 + k) + "\r\n$1\r\nv\r\n";
    c.send_raw(pipeline);
    for (int k = 0; k < kSets; k++) ASSERT_EQ(show(c.read()), "+OK") << "reply " << k;
    r = s.stop();
  }
  EXPECT_EQ(r.commands, uint64_t{kSets});
  EXPECT_LE(r.reply_writes, 8u) << "the replies left one write at a time";
}

// A client whose input not yet parsed passes --client-query-buffer-limit
// is answered an error and closed, however it got there (an argument
// announced past the limit, or arguments that never end); the others are
// served throughout.
TEST_F(ServerTest, AClientPastTheQueryBufferLimitIsAnsweredAndClosed) {
  ServeOptions options;
  options.client_query_buffer_limit = std::size_t{1} << 20;
  Served s(config_for("silo"), options);
  Client other(s.port());
  EXPECT_EQ(show(other.call({"SET", "k", "v"})), "+OK");

  Client announced(s.port());
  announced.send_raw("*2\r\n$4\r\nECHO\r\n$1048577\r\n");
  EXPECT_EQ(show(announced.read_within(30'000)),
            "-ERR Protocol error: a bulk string of 1048577 bytes is past the query buffer limit of 1048576 bytes");
  EXPECT_TRUE(announced.closed_within(30'000));

  // One command of a million arguments of 100 kB each, sent until the
  // server closes the connection: it stops at the limit, not at 100 GB.
  Client endless(s.port());
  const std::string arg = "$100000\r\n" + std::string(100'000, 'x') + "\r\n";
  std::string stream = "*1000000\r\n$4\r\nMSET\r\n";
  while (stream.size() < (std::size_t{4} << 20)) stream += arg;
  EXPECT_EQ(show(other.call({"GET", "k"})), "$v");
  // The kernel's buffers may take a write or more whole before the server
  // closes: the client writes on until it sees the close, up to 256 MiB.
  uint64_t sent = 0;
  bool closed = false;
  for (int i = 0; i < 64 && !closed; i++) {
    const platform::Socket::Io io = endless.socket().write(stream.data(), stream.size());
    sent += io.bytes;
    closed = io.closed;
  }
  EXPECT_TRUE(closed) << "the server read all " << sent << " bytes";
  EXPECT_EQ(show(endless.read_within(30'000)),
            "-ERR Protocol error: query buffer limit of 1048576 bytes exceeded (--client-query-buffer-limit)");
  EXPECT_TRUE(endless.closed_within(30'000));

  EXPECT_EQ(show(other.call({"GET", "k"})), "$v");
  const ServeResult& r = s.stop();
  EXPECT_EQ(r.over_query_limit, 1u);
  EXPECT_EQ(r.protocol_errors, 2u);
}

// A MULTI that queues past --multi-max-commands is answered an error and
// discarded: EXEC answers EXECABORT and nothing of it applies, as when a
// queued command is refused. Its queued bytes count against
// --client-query-buffer-limit the same way.
TEST_F(ServerTest, AMultiQueuePastItsLimitIsDiscarded) {
  ServeOptions options;
  options.multi_max_commands = 3;
  options.client_query_buffer_limit = std::size_t{1} << 20;
  Served s(config_for("silo"), options);
  Client c(s.port());
  EXPECT_EQ(show(c.call({"MULTI"})), "+OK");
  for (int i = 0; i < 3; i++) EXPECT_EQ(show(c.call({"INCR", "n"})), "+QUEUED");
  EXPECT_EQ(show(c.call({"INCR", "n"})),
            "-ERR MULTI queue limit of 3 commands exceeded (--multi-max-commands): the transaction is discarded");
  EXPECT_EQ(show(c.call({"INCR", "n"})), "+QUEUED");
  EXPECT_EQ(show(c.call({"EXEC"})), "-EXECABORT Transaction discarded because of previous errors.");
  EXPECT_EQ(show(c.call({"GET", "n"})), "(nil)");
  // The next transaction is whole again.
  EXPECT_EQ(show(c.call({"MULTI"})), "+OK");
  for (int i = 0; i < 3; i++) EXPECT_EQ(show(c.call({"INCR", "n"})), "+QUEUED");
  EXPECT_EQ(show(c.call({"EXEC"})), "[:1 :2 :3]");

  const std::string half(600'000, 'h');
  EXPECT_EQ(show(c.call({"MULTI"})), "+OK");
  EXPECT_EQ(show(c.call({"ECHO", half})), "+QUEUED");
  EXPECT_EQ(show(c.call({"ECHO", half})),
            "-ERR MULTI queue limit of 1048576 bytes exceeded (--client-query-buffer-limit): the transaction is "
            "discarded");
  EXPECT_EQ(show(c.call({"EXEC"})), "-EXECABORT Transaction discarded because of previous errors.");
  EXPECT_EQ(show(c.call({"PING"})), "+PONG");
}

// With --timeout, a client that sends nothing for that long is closed
// without a word; the others are served.
TEST_F(ServerTest, AnIdleClientIsClosedAfterTheTimeout) {
  ServeOptions options;
  options.timeout_s = 1;
  Served s(config_for("silo"), options);
  Client idle(s.port());
  EXPECT_EQ(show(idle.call({"PING"})), "+PONG");
  EXPECT_TRUE(idle.closed_within(60'000)) << "still open a minute after a one-second timeout";
  Client next(s.port());
  EXPECT_EQ(show(next.call({"PING"})), "+PONG");
  EXPECT_GE(s.stop().timed_out, 1u);
}

// The number after `field:` in an INFO reply.
uint64_t info_field(const Reply& info, std::string_view field) {
  const std::string key = std::string(field) + ":";
  const std::size_t at = info.text.find(key);
  if (at == std::string::npos) return ~uint64_t{0};
  return std::stoull(info.text.substr(at + key.size()));
}

// A client that pipelines GETs of a large value and reads none of the
// replies: once 16 MiB of them wait (kMaxUnsent), its next commands wait
// unrun and it is not read, so the server holds a bounded amount for it;
// the other clients are served meanwhile; once it reads, every reply comes.
TEST_F(ServerTest, AClientThatDoesNotReadIsNotServedPastTheOutputLimit) {
  Config cfg = config_for("silo");
  cfg.threads = 1;  // one worker: its INFO counts every command
  cfg.settings<KvConfig>().slots = 64;
  cfg.settings<KvConfig>().max_value = 128 << 10;
  Served s(cfg);
  Client other(s.port());
  const std::string value(128 << 10, 'v');
  EXPECT_EQ(show(other.call({"SET", "big", value})), "+OK");

  constexpr int kGets = 2000;  // 250 MiB of replies, asked for in one 44 kB write
  Client greedy(s.port());
  EXPECT_EQ(show(greedy.call({"PING"})), "+PONG");
  std::string pipeline;
  for (int i = 0; i < kGets; i++) pipeline += "*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n";
  greedy.send_raw(pipeline);

  // Once the worker has run some of the GETs, it has run all it will until
  // the client reads: 16 MiB waiting in the server, what the kernel buffers
  // between the two sockets (tens of MiB at most), and the reply that
  // passed the limit. INFO counts the commands of both clients, itself too.
  constexpr uint64_t kBound = ((uint64_t{16} << 20) + (uint64_t{32} << 20)) / (128 << 10) + 1;
  uint64_t gets = 0;
  for (uint64_t polls = 1; polls < 6000 && gets < 64; polls++) {
    gets = info_field(other.call({"INFO"}), "total_commands_processed_worker") - 2 - polls;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_GE(gets, 64u) << "the worker ran none of the GETs";
  EXPECT_LE(gets, kBound) << "GETs run for a client reading none of their replies";
  EXPECT_EQ(show(other.call({"PING"})), "+PONG");

  for (int i = 0; i < kGets; i++) {
    const Reply r = greedy.read_within(60'000);
    ASSERT_EQ(r.kind, Reply::Kind::Bulk) << "reply " << i << ": " << show(r).substr(0, 80);
    ASSERT_EQ(r.text, value) << "reply " << i;
  }
}

}  // namespace
}  // namespace abyss::server
