#pragma once
// `abyss bench index`: the index structures alone, without transactions. Each
// structure is loaded with `keys` keys (the even numbers 0, 2, ... in a
// shuffled order), then measured for point look-ups of loaded keys, short and
// long ascending scans from a loaded key, and inserts of new keys (the odd
// numbers, each thread its own share), at each thread count:
//   hash       the hash index (flat buckets, as tables use by default); no scans
//   ordered    the B+-tree with optimistic lock coupling
//   map        a std::map behind one mutex, the standard ordered container
//   btree      Abseil's B-tree map (absl::btree_map) behind one mutex: a
//              well-kept cache-friendly B-tree that is not concurrent
// Every answer is checked as it is measured (a look-up finds its row, a scan
// visits as many keys as lie in its range), so a broken structure fails the
// bench instead of looking fast.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace abyss {

struct IndexBenchOptions {
  uint64_t keys = 1'000'000;
  std::vector<uint32_t> threads = {1, 2};
  double seconds = 1.0;  // per measurement (inserts stop earlier once a thread's share is in)
  uint32_t short_scan = 10;
  uint32_t long_scan = 1000;
  std::vector<std::string> structures = {"hash", "ordered", "btree", "map"};
  uint64_t seed = 1;
};

struct IndexBenchResult {
  std::string structure;
  std::string op;  // lookup, scan-<n>, insert
  uint32_t threads = 0;
  uint64_t ops = 0;
  double seconds = 0;
  uint64_t keys_visited = 0;  // scans: entries visited over all ops
  double mops() const { return seconds > 0 ? static_cast<double>(ops) / seconds / 1e6 : 0; }
};

inline const std::vector<std::string> kIndexBenchStructures = {"hash", "ordered", "btree", "map"};

// The bytes the bench's largest structure may take for `keys` loaded keys and
// as many inserted.
uint64_t index_bench_bytes(uint64_t keys);

// Why these options cannot run here (the simulated build, a size the machine
// cannot hold, a structure abyss does not have), before anything is built;
// empty if they can.
std::string index_bench_refusal(const IndexBenchOptions& options);

// Runs every (structure, thread count) pair and appends a result per
// operation. `progress` hears a line before each measurement. Answers an
// error (a structure that answered wrongly), empty on success.
std::string run_index_bench(const IndexBenchOptions& options, std::vector<IndexBenchResult>& out,
                            const std::function<void(const std::string&)>& progress);

}  // namespace abyss
