#pragma once
// The resident bytes of a load, computed from the structures themselves so a
// configuration can be refused before any work ("needs X GiB, this machine has
// Y GiB available"). Each workload sums these over its tables
// (Ycsb::estimate_load_bytes, Tpcc::estimate_load_bytes).
#include <cstdint>
#include <cstdio>
#include <string>

#include "index/hash_index.h"
#include "storage/row.h"

namespace abyss::footprint {

inline constexpr uint64_t kPage = 4096;

// `rows` rows inserted through one RowCursor (one loader) in blocks of
// `block_rows` (Table::allocate): whole blocks, every byte zeroed and so
// resident, each with one more page for the allocator's header (a block is a
// page-granular mapping of its own).
inline uint64_t table_rows(uint64_t rows, uint64_t block_rows, uint32_t stride) {
  const uint64_t blocks = (rows + block_rows - 1) / block_rows;
  return blocks * (round_up(block_rows * stride, kPage) + kPage);
}

// `keys` index nodes bump-allocated from one loader's Arena: only the pages
// the nodes reach are touched.
inline uint64_t index_nodes(uint64_t keys) { return round_up(keys * sizeof(HashIndex::Node), kPage); }

// A HashIndex's bucket array, zeroed at construction.
inline uint64_t hash_index(uint64_t expected_keys) { return HashIndex::bucket_bytes(expected_keys) + kPage; }

// The refusal line when `need` bytes exceed `available` ("" when they fit).
inline std::string shortfall(uint64_t need, uint64_t available) {
  if (need <= available) return "";
  char line[160];
  std::snprintf(line, sizeof(line), "needs %.1f GiB, this machine has %.1f GiB available",
                static_cast<double>(need) / (uint64_t{1} << 30), static_cast<double>(available) / (uint64_t{1} << 30));
  return line;
}

}  // namespace abyss::footprint
