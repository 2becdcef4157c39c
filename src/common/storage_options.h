#pragma once
// How tables and indexes are laid out in memory: the storage switches of
// Tale §5, chosen per run (--index, --huge-pages, --align) and fixed when the
// database is created.
#include <array>
#include <cstdint>
#include <string_view>

namespace abyss {

// flat: cache-line buckets holding their first keys and row pointers, so a
// probe costs one miss; chained: a bucket array of list heads, so a probe
// follows a pointer to a node (the layout of DBx1000 and of abyss before).
enum class IndexKind : uint8_t { Flat, Chained };
inline constexpr std::array<std::string_view, 2> kIndexNames = {"flat", "chained"};

// The structure behind one index of a table (index/index.h): a hash index
// (one of the layouts above), or the ordered B+-tree, which scans.
enum class IndexType : uint8_t { Hash, Ordered };
inline constexpr std::array<std::string_view, 2> kIndexTypeNames = {"hash", "ordered"};

// aligned: every row starts a cache line and is padded to whole lines;
// packed: rows at 8-byte alignment, sharing lines with their neighbours.
enum class RowAlign : uint8_t { Packed, Aligned };
inline constexpr std::array<std::string_view, 2> kAlignNames = {"packed", "aligned"};

struct StorageOptions {
  IndexKind index = IndexKind::Flat;
  // Row blocks and bucket arrays on transparent huge pages (platform/memory.h).
  bool huge_pages = true;
  // Rows padded to and aligned on cache lines, or packed (row.h).
  RowAlign align = RowAlign::Aligned;
};

}  // namespace abyss
