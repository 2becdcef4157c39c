// A bank on the abyss engine: accounts in one table, and threads that move
// money between them in transactions under the scheme named on the command
// line. At the end the total must be what it was at the start.
//
//   bank [SCHEME [THREADS [TRANSFERS]]]     e.g.  bank tictoc 2 20000
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "embed/store.h"

namespace {

constexpr uint64_t kAccounts = 64;
constexpr int64_t kOpening = 1000;

uint32_t positive(const char* text, const char* what) {
  char* end = nullptr;
  const unsigned long v = std::strtoul(text, &end, 10);
  if (end == text || *end != '\0' || v == 0 || v > 1'000'000) {
    throw std::invalid_argument(std::string(what) + " must be a whole number from 1 to 1000000, not '" + text + "'");
  }
  return static_cast<uint32_t>(v);
}

}  // namespace

int main(int argc, char** argv) {
  abyss::Config config;
  config.cc = argc > 1 ? argv[1] : "silo";
  uint32_t threads = 2;
  uint32_t transfers = 20000;
  std::unique_ptr<abyss::Store> store;
  try {
    if (argc > 2) threads = positive(argv[2], "THREADS");
    if (argc > 3) transfers = positive(argv[3], "TRANSFERS");
    store = std::make_unique<abyss::Store>(config, threads);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "bank: %s\n", e.what());
    return 2;
  }

  abyss::Schema schema;
  schema.add_int64("ID").add_int64("BALANCE");
  abyss::Table& accounts = store->create_table("accounts", std::move(schema), kAccounts);
  const abyss::Column id = accounts.schema().column("ID");
  const abyss::Column balance = accounts.schema().column("BALANCE");
  for (uint64_t k = 0; k < kAccounts; k++) {
    store->load(accounts, k, [&](char* row) {
      abyss::set_int64(row, id, static_cast<int64_t>(k));
      abyss::set_int64(row, balance, kOpening);
    });
  }

  // Each thread is one session; a transfer that would overdraw rolls back.
  std::vector<uint64_t> committed(threads), rolled_back(threads), aborts(threads);
  std::vector<std::thread> workers;
  for (uint32_t s = 0; s < threads; s++) {
    workers.emplace_back([&, s] {
      uint64_t x = s + 1;
      for (uint32_t i = 0; i < transfers; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        const uint64_t from = (x >> 33) % kAccounts;
        const uint64_t to = (from + 1 + (x >> 17) % (kAccounts - 1)) % kAccounts;
        const int64_t amount = static_cast<int64_t>((x >> 45) % 100);
        const abyss::Outcome o = store->run(s, [&](abyss::Transaction& t) {
          char* a = nullptr;
          char* b = nullptr;
          if (abyss::Rc rc = t.update(accounts, from, a); rc != abyss::Rc::Ok) return rc;
          if (abyss::get_int64(a, balance) < amount) return abyss::Rc::LogicalAbort;
          abyss::set_int64(a, balance, abyss::get_int64(a, balance) - amount);  // before the next operation
          if (abyss::Rc rc = t.update(accounts, to, b); rc != abyss::Rc::Ok) return rc;
          abyss::set_int64(b, balance, abyss::get_int64(b, balance) + amount);
          return abyss::Rc::Ok;
        });
        (o.rc == abyss::Rc::Ok ? committed : rolled_back)[s]++;
        aborts[s] += o.aborts;
      }
    });
  }
  for (std::thread& w : workers) w.join();

  int64_t total = 0;
  const abyss::Outcome audit = store->run(0, [&](abyss::Transaction& t) {
    total = 0;
    for (uint64_t k = 0; k < kAccounts; k++) {
      const char* row = nullptr;
      if (abyss::Rc rc = t.read(accounts, k, row); rc != abyss::Rc::Ok) return rc;
      total += abyss::get_int64(row, balance);
    }
    return abyss::Rc::Ok;
  });
  uint64_t c = 0, r = 0, a = 0;
  for (uint32_t s = 0; s < threads; s++) c += committed[s], r += rolled_back[s], a += aborts[s];
  const int64_t expected = static_cast<int64_t>(kAccounts) * kOpening;
  std::printf(
      "%s: %u thread(s), %llu transfers committed, %llu rolled back, %llu CC aborts retried; "
      "total %lld (expected %lld)\n",
      store->scheme().c_str(), threads, static_cast<unsigned long long>(c), static_cast<unsigned long long>(r),
      static_cast<unsigned long long>(a), static_cast<long long>(total), static_cast<long long>(expected));
  return audit.rc == abyss::Rc::Ok && total == expected ? 0 : 1;
}
