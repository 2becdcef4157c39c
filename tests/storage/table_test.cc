// A table's rows in its block list (storage/table.h): a loader's block holds
// as many rows as its mapping has room for and is counted as footprint.h
// counts it; workers inserting through cursors of their own at once lose no
// row and share no slot; for_each_live() visits exactly the live rows that
// are not deleted.
#include "storage/table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <set>
#include <utility>
#include <vector>

#include "common/storage_options.h"
#include "platform/thread.h"
#include "storage/footprint.h"
#include "storage/row.h"
#include "storage/schema.h"

namespace abyss {
namespace {

Schema two_columns() {
  Schema s;
  s.add_int64("K");
  s.add_int64("V");
  return s;
}

int64_t key_of_row(const Table& t, const Row* r) {
  int64_t k = 0;
  std::memcpy(&k, t.layout().data(r), 8);
  return k;
}

// Fills a slot as a load does, without an index: data, then the live flag.
Row* put(Table& t, RowCursor& cursor, uint64_t block_rows, int64_t key) {
  Row* r = t.allocate(cursor, block_rows);
  std::memcpy(t.layout().data(r), &key, 8);
  RowLayout::header(r).flags = RowHeader::kLive;
  return r;
}

std::vector<int64_t> live_keys(const Table& t) {
  std::vector<int64_t> keys;
  t.for_each_live([&](const Row* r) { keys.push_back(key_of_row(t, r)); });
  std::sort(keys.begin(), keys.end());
  return keys;
}

TEST(Table, ALoadersBlocksAreWhatTheFootprintCounts) {
  const RowLayout layout = RowLayout::for_meta(16, 8);
  Table t(1, "t", two_columns(), layout, 1000);
  RowCursor cursor;
  constexpr uint64_t kBlockRows = 100;
  constexpr int64_t kRows = 1000;
  for (int64_t k = 0; k < kRows; k++) put(t, cursor, kBlockRows, k);
  EXPECT_EQ(t.reserved_bytes(), footprint::table_rows(kRows, kBlockRows, t.stride(), StorageOptions{}));
  // A block holds every row its pages have room for, so fewer blocks than
  // rows / kBlockRows.
  EXPECT_GE(Table::block_capacity(kBlockRows, t.stride(), false), kBlockRows);
  EXPECT_EQ(live_keys(t).size(), static_cast<std::size_t>(kRows));
}

TEST(Table, RowsAreAlignedAndNeverShareASlot) {
  const RowLayout layout = RowLayout::for_meta(16, 8);
  Table t(1, "t", two_columns(), layout, 64);
  RowCursor a;
  RowCursor b;
  std::set<const Row*> seen;
  for (int64_t k = 0; k < 300; k++) {
    const Row* r = put(t, k % 3 == 0 ? a : b, 16, k);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(r) % layout.row_align, 0u);
    EXPECT_TRUE(seen.insert(r).second) << "slot handed out twice";
  }
}

TEST(Table, ForEachLiveSkipsRowsNotYetLiveAndDeletedOnes) {
  const RowLayout layout = RowLayout::for_meta(16, 8);
  Table t(1, "t", two_columns(), layout, 64);
  RowCursor cursor;
  put(t, cursor, 4, 1);
  Row* deleted = put(t, cursor, 4, 2);
  RowLayout::header(deleted).flags |= RowHeader::kDeleted;
  (void)t.allocate(cursor, 4);  // claimed, never made live (an aborted insert)
  put(t, cursor, 4, 3);
  EXPECT_EQ(live_keys(t), (std::vector<int64_t>{1, 3}));
}

TEST(Table, ConcurrentInsertersLoseNoRow) {
  const RowLayout layout = RowLayout::for_meta(16, 8);
  Table t(1, "t", two_columns(), layout, 1 << 16);
  constexpr uint32_t kWorkers = 4;
  constexpr int64_t kEach = 20000;
  platform::run_threads(kWorkers, false, [&](uint32_t w) {
    RowCursor cursor;
    for (int64_t i = 0; i < kEach; i++) put(t, cursor, Table::kDefaultBlockRows, w * kEach + i);
  });
  const std::vector<int64_t> keys = live_keys(t);
  ASSERT_EQ(keys.size(), static_cast<std::size_t>(kWorkers * kEach));
  for (std::size_t i = 0; i < keys.size(); i++) ASSERT_EQ(keys[i], static_cast<int64_t>(i));
}

}  // namespace
}  // namespace abyss
