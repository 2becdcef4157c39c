#pragma once
// The resident bytes of a load, computed from the structures themselves so a
// configuration can be refused before any work ("needs X GiB, this machine has
// Y GiB available"). Each workload sums these over its tables
// (Ycsb::estimate_load_bytes, Tpcc::estimate_load_bytes).
#include <cstdint>
#include <cstdio>
#include <string>

#include "common/storage_options.h"
#include "index/hash_index.h"
#include "index/ordered_index.h"
#include "platform/memory.h"
#include "storage/row.h"
#include "storage/table.h"

namespace abyss::footprint {

inline constexpr uint64_t kPage = 4096;

// `rows` rows inserted through one RowCursor (one loader) in blocks of
// `block_rows` (Table::allocate): whole blocks, each a mapping of its own
// (Table::block_bytes: with huge pages on, a block of a huge page or more is
// rounded up to whole huge pages and holds as many more rows), counted as
// resident.
inline uint64_t table_rows(uint64_t rows, uint64_t block_rows, uint32_t stride, StorageOptions options) {
  const uint64_t bytes = Table::block_bytes(block_rows, stride, options.huge_pages);
  const uint64_t per_block = Table::block_capacity(block_rows, stride, options.huge_pages);
  return (rows + per_block - 1) / per_block * bytes;
}

// The index nodes `keys` inserts bump-allocate from one loader's Arena: only
// the pages the nodes reach are touched.
inline uint64_t index_nodes(uint64_t keys, StorageOptions options) {
  return round_up(HashIndex::node_bytes(keys, options.index), kPage);
}

// The nodes of an OrderedIndex holding `keys` keys, inserted through one
// Arena: a split leaves both halves at least half full, so at most one leaf
// per half a leaf of keys, and each inner level a fifteenth of the one below.
inline uint64_t ordered_index(uint64_t keys) {
  const uint64_t leaves = keys / (OrderedIndex::kLeafSlots / 2) + 1;
  const uint64_t nodes = leaves + leaves / (OrderedIndex::kInnerKeys / 2) + 2;
  return round_up(nodes * sizeof(OrderedIndex::Leaf), kPage);
}

// A HashIndex's bucket array, constructed (so resident) when it is created.
inline uint64_t hash_index(uint64_t expected_keys, StorageOptions options) {
  return HashIndex::bucket_bytes(expected_keys, options);
}

// The refusal line when `need` bytes exceed `available` ("" when they fit).
inline std::string shortfall(uint64_t need, uint64_t available) {
  if (need <= available) return "";
  char line[160];
  std::snprintf(line, sizeof(line), "needs %.1f GiB, this machine has %.1f GiB available",
                static_cast<double>(need) / (uint64_t{1} << 30), static_cast<double>(available) / (uint64_t{1} << 30));
  return line;
}

}  // namespace abyss::footprint
