// The worker arena in both modes (Tale §5's allocator switch): bump
// allocation from reused chunks, and the system allocator, one malloc per
// allocation freed at reset. Alignment holds in both, and memory is usable.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "common/arena.h"
#include "storage/row.h"

namespace abyss {
namespace {

void expect_aligned_and_writable(Arena& a) {
  for (const std::size_t align : {std::size_t{8}, std::size_t{16}, std::size_t{64}, std::size_t{4096}}) {
    for (const std::size_t bytes : {std::size_t{1}, std::size_t{24}, std::size_t{100}, std::size_t{5000}}) {
      auto* p = static_cast<char*>(a.allocate(bytes, align));
      ASSERT_NE(p, nullptr);
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % align, 0u) << bytes << " bytes at " << align;
      std::memset(p, 0x5a, bytes);
    }
  }
}

TEST(Arena, BumpAllocatesAlignedMemoryAndReusesItsChunks) {
  Arena a(4096);
  expect_aligned_and_writable(a);
  const std::size_t reserved = a.reserved_bytes();
  EXPECT_GT(reserved, 0u);
  a.reset();
  expect_aligned_and_writable(a);
  EXPECT_EQ(a.reserved_bytes(), reserved) << "a reset arena reuses its chunks";
}

TEST(Arena, OnTheSystemAllocatorEachAllocationIsItsOwnAndResetFreesThem) {
  Arena a(4096);
  a.use_system_allocator();
  expect_aligned_and_writable(a);
  EXPECT_GE(a.reserved_bytes(), 4u * (1 + 24 + 100 + 5000));
  a.reset();
  EXPECT_EQ(a.reserved_bytes(), 0u) << "reset frees every allocation";
  expect_aligned_and_writable(a);
}

TEST(RowLayout, AlignedRowsFillWholeLinesAndPackedOnesDoNot) {
  const RowLayout aligned = RowLayout::for_meta(8, 8);
  const RowLayout packed = RowLayout::for_meta(8, 8, RowAlign::Packed);
  EXPECT_EQ(aligned.row_align, 64u);
  EXPECT_EQ(packed.row_align, 8u);
  EXPECT_EQ(packed.data_offset, aligned.data_offset);
  // Metadata aligned beyond 8 bytes keeps its alignment in a packed table.
  EXPECT_EQ(RowLayout::for_meta(16, 16, RowAlign::Packed).row_align, 16u);
}

}  // namespace
}  // namespace abyss
