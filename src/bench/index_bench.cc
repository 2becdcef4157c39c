#include "bench/index_bench.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include <absl/container/btree_map.h>

#include "common/arena.h"
#include "common/storage_options.h"
#include "common/zipf.h"
#include "index/hash_index.h"
#include "index/ordered_index.h"
#include "platform/clock.h"
#include "platform/latch.h"
#include "platform/machine.h"
#include "platform/process.h"
#include "platform/thread.h"
#include "storage/footprint.h"
#include "storage/row.h"

namespace abyss {
namespace {

constexpr uint64_t kNoEnd = std::numeric_limits<uint64_t>::max();

// The three structures behind one face: find, insert, and scan(lo, n), which
// answers how many entries it visited and adds their rows' bits to `sink`.
class HashBench {
 public:
  static constexpr bool kScans = false;
  explicit HashBench(uint64_t keys) : index_(keys, StorageOptions{}, "the index bench") {}
  Row* find(uint64_t key) const { return index_.find(key); }
  void insert(uint64_t key, Row* row, Arena& nodes) { index_.insert(key, row, nodes); }
  uint64_t scan(uint64_t /*lo*/, uint32_t /*n*/, uint64_t& /*sink*/) const { return 0; }

 private:
  HashIndex index_;
};

class OrderedBench {
 public:
  static constexpr bool kScans = true;
  explicit OrderedBench(uint64_t /*keys*/) {}
  Row* find(uint64_t key) const { return index_.find(key); }
  void insert(uint64_t key, Row* row, Arena& nodes) { index_.insert(key, row, nodes); }
  uint64_t scan(uint64_t lo, uint32_t n, uint64_t& sink) const {
    uint64_t visited = 0;
    index_.scan(lo, kNoEnd, n, [&](uint64_t /*key*/, Row* row) {
      sink += reinterpret_cast<uintptr_t>(row);
      visited++;
      return true;
    });
    return visited;
  }

 private:
  OrderedIndex index_;
};

// An ordered container that is not concurrent, behind one mutex: std::map,
// the standard one, or Abseil's B-tree map (absl::btree_map, from Debian's
// libabsl-dev), a well-kept cache-friendly B-tree.
template <class Map>
class LockedBench {
 public:
  static constexpr bool kScans = true;
  explicit LockedBench(uint64_t /*keys*/) {}
  Row* find(uint64_t key) {
    platform::MutexGuard g(mutex_);
    const auto it = map_.find(key);
    return it == map_.end() ? nullptr : it->second;
  }
  void insert(uint64_t key, Row* row, Arena& /*nodes*/) {
    platform::MutexGuard g(mutex_);
    map_.emplace(key, row);
  }
  uint64_t scan(uint64_t lo, uint32_t n, uint64_t& sink) {
    platform::MutexGuard g(mutex_);
    uint64_t visited = 0;
    for (auto it = map_.lower_bound(lo); it != map_.end() && visited < n; ++it, ++visited) {
      sink += reinterpret_cast<uintptr_t>(it->second);
    }
    return visited;
  }

 private:
  platform::Mutex mutex_;
  Map map_;
};
using MapBench = LockedBench<std::map<uint64_t, Row*>>;
using BtreeBench = LockedBench<absl::btree_map<uint64_t, Row*>>;

// What one thread did in one measurement.
struct Tally {
  uint64_t ops = 0;
  uint64_t visited = 0;
  uint64_t sink = 0;
  std::string error;
};

class Bench {
 public:
  Bench(const IndexBenchOptions& o, std::vector<IndexBenchResult>& out,
        const std::function<void(const std::string&)>& progress)
      : o_(o), out_(out), progress_(progress), order_(o.keys), slots_(2 * o.keys) {
    // The load order, shuffled once: key 2 * order_[i] is loaded i-th, and
    // 2 * order_[i] + 1 is inserted by the thread whose share holds i.
    std::iota(order_.begin(), order_.end(), uint64_t{0});
    Rng rng(o.seed);
    for (uint64_t i = o.keys; i > 1; i--) std::swap(order_[i - 1], order_[rng.uniform(i)]);
  }

  template <class S>
  std::string run(const std::string& name) {
    for (const uint32_t threads : o_.threads) {
      progress_("index bench: loading " + name + " with " + std::to_string(o_.keys) + " keys");
      std::vector<Arena> arenas(threads + 1);  // the load's, then each thread's
      auto s = std::make_unique<S>(2 * o_.keys);
      for (const uint64_t k : order_) s->insert(2 * k, row_for(2 * k), arenas[0]);

      std::string err = measure(name, "lookup", threads, [&](uint32_t /*t*/, Rng& rng, Tally& tally) {
        const uint64_t key = 2 * rng.uniform(o_.keys);
        Row* row = s->find(key);
        if (row != row_for(key)) tally.error = name + " did not find loaded key " + std::to_string(key);
        tally.sink += reinterpret_cast<uintptr_t>(row);
        return true;
      });
      if (!err.empty()) return err;
      if constexpr (S::kScans) {
        for (const uint32_t n : {o_.short_scan, o_.long_scan}) {
          err = measure(name, "scan-" + std::to_string(n), threads, [&](uint32_t /*t*/, Rng& rng, Tally& tally) {
            const uint64_t i = rng.uniform(o_.keys);
            const uint64_t visited = s->scan(2 * i, n, tally.sink);
            if (visited != std::min<uint64_t>(n, o_.keys - i)) {
              tally.error = name + " scanned " + std::to_string(visited) + " entries from key " +
                            std::to_string(2 * i) + ", not " + std::to_string(std::min<uint64_t>(n, o_.keys - i));
            }
            tally.visited += visited;
            return true;
          });
          if (!err.empty()) return err;
        }
      }
      // Thread t inserts the odd keys of its share, in the shuffled order,
      // until its share is in or the time is up.
      const uint64_t share = o_.keys / threads;
      std::vector<uint64_t> next(threads, 0);
      err = measure(name, "insert", threads, [&](uint32_t t, Rng& /*rng*/, Tally& /*tally*/) {
        if (next[t] == share) return false;
        const uint64_t key = 2 * order_[t * share + next[t]++] + 1;
        s->insert(key, row_for(key), arenas[t + 1]);
        return true;
      });
      if (!err.empty()) return err;
      for (uint32_t t = 0; t < threads; t++) {
        for (uint64_t i = 0; i < next[t]; i++) {
          const uint64_t key = 2 * order_[t * share + i] + 1;
          if (s->find(key) != row_for(key)) return name + " lost inserted key " + std::to_string(key);
        }
      }
    }
    return "";
  }

 private:
  // Runs `op(thread, rng, tally)` on `threads` threads until the time is up
  // or op answers false, and appends the result.
  template <class Op>
  std::string measure(const std::string& name, const std::string& op, uint32_t threads, Op&& body) {
    progress_("index bench: " + name + " " + op + " on " + std::to_string(threads) + " thread" +
              (threads == 1 ? "" : "s"));
    std::vector<Tally> tallies(threads);
    std::vector<uint64_t> elapsed(threads, 0);
    const auto budget = static_cast<uint64_t>(o_.seconds * 1e9);
    platform::run_threads(threads, true, [&](uint32_t t) {
      Rng rng(o_.seed * 1000 + t + 1);
      Tally& tally = tallies[t];
      const uint64_t start = platform::wall_ns();
      uint64_t now = start;
      for (bool more = true; more && tally.error.empty();) {
        for (uint32_t i = 0; i < 64 && more; i++) {
          more = body(t, rng, tally);
          if (more) tally.ops++;
        }
        now = platform::wall_ns();
        if (now - start >= budget) break;
      }
      elapsed[t] = now - start;
    });
    IndexBenchResult r{name, op, threads};
    for (uint32_t t = 0; t < threads; t++) {
      if (!tallies[t].error.empty()) return tallies[t].error;
      r.ops += tallies[t].ops;
      r.keys_visited += tallies[t].visited;
      sink_ += tallies[t].sink;
    }
    r.seconds = static_cast<double>(*std::max_element(elapsed.begin(), elapsed.end())) / 1e9;
    out_.push_back(r);
    return "";
  }

  const IndexBenchOptions& o_;
  std::vector<IndexBenchResult>& out_;
  const std::function<void(const std::string&)>& progress_;
  // A distinct address per key, the row it is indexed to: no structure
  // dereferences a row.
  Row* row_for(uint64_t key) { return reinterpret_cast<Row*>(&slots_[key]); }

  std::vector<uint64_t> order_;
  std::vector<uint64_t> slots_;
  uint64_t sink_ = 0;  // the rows the measurements read, so none is optimized away
};

}  // namespace

uint64_t index_bench_bytes(uint64_t keys) {
  // The largest is the map: a node of key, row pointer and three links and a
  // colour per entry, with the allocator's rounding, about 64 bytes, for the
  // loaded and the inserted keys; plus the shuffled order and a row slot
  // per key.
  constexpr uint64_t kMapNode = 64;
  constexpr uint64_t kPerKey = 2 * kMapNode + 3 * sizeof(uint64_t);
  return keys * kPerKey;
}

std::string index_bench_refusal(const IndexBenchOptions& options) {
  if (platform::kSimulated) return "the index bench measures this machine; the simulated build has none";
  if (!std::isfinite(options.seconds) || options.seconds < 0.01 || options.seconds > 600) {
    return "--seconds " + std::to_string(options.seconds) + ": a number of seconds from 0.01 to 600";
  }
  for (const std::string& s : options.structures) {
    if (std::find(kIndexBenchStructures.begin(), kIndexBenchStructures.end(), s) == kIndexBenchStructures.end()) {
      return "no index structure " + s + " (one of hash, ordered, map, btree)";
    }
  }
  if (auto why = footprint::shortfall(index_bench_bytes(options.keys), platform::available_memory_bytes());
      !why.empty()) {
    return "the index bench with " + std::to_string(options.keys) + " keys " + why + " (a smaller --keys fits)";
  }
  return "";
}

std::string run_index_bench(const IndexBenchOptions& options, std::vector<IndexBenchResult>& out,
                            const std::function<void(const std::string&)>& progress) {
  if (auto why = index_bench_refusal(options); !why.empty()) return why;
  Bench bench(options, out, progress);
  for (const std::string& s : options.structures) {
    std::string err;
    if (s == "hash") {
      err = bench.run<HashBench>(s);
    } else if (s == "ordered") {
      err = bench.run<OrderedBench>(s);
    } else if (s == "map") {
      err = bench.run<MapBench>(s);
    } else {
      err = bench.run<BtreeBench>(s);
    }
    if (!err.empty()) return err;
  }
  return "";
}

}  // namespace abyss
