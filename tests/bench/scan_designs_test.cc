// The Terrier study's five table designs (bench/scan_designs.h) under its
// correctness workload: each design, with blocks small enough that appends
// race each other and scans cross many blocks, keeps every scan whole, free
// of repeats and complete. The check is held to its negative controls: a
// design whose scan hands a tuple out twice, and one whose scan loses one,
// must each be caught.
#include "bench/scan_designs.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "storage/block_list.h"

namespace abyss::scan_designs {
namespace {

// 64 header bytes and 504 slots of 8 bytes.
constexpr std::size_t kSmallBlock = 4096;
constexpr uint32_t kTupleBytes = sizeof(uint64_t);

const CheckShape kShape{4, 4, 5'000, 20'000};

template <class Table>
void passes(Table& table) {
  const CheckResult r = check_concurrent(table, kShape);
  EXPECT_EQ(r.error, "");
  EXPECT_GE(r.scans, kShape.scanners) << "each scanner scans at least once";
}

TEST(ScanDesigns, CoarsePassesTheCheck) {
  BlockList t(kTupleBytes, BlockListMode::Latched, kSmallBlock);
  passes(t);
}

TEST(ScanDesigns, FineGrainedPassesTheCheck) {
  FineGrained t(kTupleBytes, kSmallBlock);
  passes(t);
}

TEST(ScanDesigns, SnapshotPassesTheCheck) {
  Snapshot t(kTupleBytes, kSmallBlock);
  passes(t);
}

TEST(ScanDesigns, OrderedMapPassesTheCheck) {
  OrderedMap t(kTupleBytes, kSmallBlock);
  passes(t);
}

TEST(ScanDesigns, LockFreePassesTheCheck) {
  BlockList t(kTupleBytes, BlockListMode::LatchFree, kSmallBlock);
  passes(t);
}

// A block of one slot: every insert appends, so appends race at the end of
// each design's container.
TEST(ScanDesigns, OneSlotBlocksLoseNoAppend) {
  const std::size_t one = sizeof(Block) + kTupleBytes;
  const CheckShape shape{4, 2, 300, 1'500};
  FineGrained fine(kTupleBytes, one);
  EXPECT_EQ(check_concurrent(fine, shape).error, "");
  Snapshot snapshot(kTupleBytes, one);
  EXPECT_EQ(check_concurrent(snapshot, shape).error, "");
  OrderedMap map(kTupleBytes, one);
  EXPECT_EQ(check_concurrent(map, shape).error, "");
}

// The ordered map's keys stay 1..last with no gap: a scan after the inserts
// walks every block, in the order of their keys.
TEST(ScanDesigns, OrderedMapWalksEveryBlockOnce) {
  OrderedMap map(kTupleBytes, sizeof(Block) + 4 * kTupleBytes);
  OrderedMap::Cursor cursor;
  for (uint64_t v = 0; v < 1'000; v++) map.insert(cursor, &v);
  uint64_t next = 0;
  for (auto it = map.begin(); it.valid(); it.next()) {
    uint64_t v;
    std::memcpy(&v, *it, sizeof(v));
    ASSERT_EQ(v, next++);
  }
  EXPECT_EQ(next, 1'000u);
}

// Negative controls: the lock-free list, its Scan() broken on purpose.
class Broken {
 public:
  using Cursor = BlockList::Cursor;
  explicit Broken(bool repeat) : repeat_(repeat) {}
  const char* insert(Cursor& cursor, const void* tuple) { return list_.insert(cursor, tuple); }
  BlockList::Iterator begin() const { return list_.begin(); }
  uint32_t scan(BlockList::Iterator& it, char* out, uint32_t capacity) const {
    if (repeat_) {
      // Each batch ends with its first tuple again.
      uint32_t n = list_.scan(it, out, capacity - 1);
      if (n > 0) std::memcpy(out + std::size_t{n++} * kTupleBytes, out, kTupleBytes);
      return n;
    }
    // Tuple 0, the first loaded, is never handed out.
    uint32_t n = list_.scan(it, out, capacity);
    uint64_t first = 1;
    if (n > 0) std::memcpy(&first, out, sizeof(first));
    if (first == 0) {
      std::memmove(out, out + kTupleBytes, std::size_t{n - 1} * kTupleBytes);
      n--;
    }
    return n;
  }

 private:
  bool repeat_;
  BlockList list_{kTupleBytes, BlockListMode::LatchFree, kSmallBlock};
};

TEST(ScanDesigns, TheCheckCatchesATupleSeenTwice) {
  Broken t(true);
  const CheckResult r = check_concurrent(t, kShape);
  EXPECT_NE(r.error.find("twice"), std::string::npos) << r.error;
}

TEST(ScanDesigns, TheCheckCatchesATupleLost) {
  Broken t(false);
  const CheckResult r = check_concurrent(t, kShape);
  EXPECT_NE(r.error.find("of the 5000 tuples loaded"), std::string::npos) << r.error;
}

}  // namespace
}  // namespace abyss::scan_designs
