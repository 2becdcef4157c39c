// The index seam (index/index.h): a hash and an ordered index answer the same
// look-ups for the same inserts; only the ordered one removes and scans; a
// table's primary index is of the type it was made with, and its secondary
// indexes, numbered from 1, hold their own keys for the same rows.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "common/arena.h"
#include "common/storage_options.h"
#include "index/index.h"
#include "storage/database.h"
#include "storage/row.h"
#include "storage/schema.h"

namespace abyss {
namespace {

Row* row_for(uint64_t key) { return reinterpret_cast<Row*>((key + 1) * 64); }

class IndexSeam : public ::testing::TestWithParam<IndexType> {};

TEST_P(IndexSeam, FindsWhatWasInsertedAndNothingElse) {
  Index index("primary", GetParam(), 1000, StorageOptions{}, "t");
  EXPECT_EQ(index.type(), GetParam());
  EXPECT_EQ(index.is_ordered(), GetParam() == IndexType::Ordered);
  Arena nodes;
  for (uint64_t k = 0; k < 5000; k += 5) index.insert(k, row_for(k), nodes);
  for (uint64_t k = 0; k < 5000; k++) {
    index.prefetch(k);
    EXPECT_EQ(index.find(k), k % 5 == 0 ? row_for(k) : nullptr) << k;
  }
  EXPECT_EQ(index.hash() != nullptr, GetParam() == IndexType::Hash);
  EXPECT_EQ(index.ordered() != nullptr, GetParam() == IndexType::Ordered);
}

TEST_P(IndexSeam, OnlyTheOrderedIndexRemoves) {
  Index index("primary", GetParam(), 16, StorageOptions{}, "t");
  Arena nodes;
  index.insert(7, row_for(7), nodes);
  if (GetParam() == IndexType::Hash) {
    EXPECT_THROW(index.remove(7), std::logic_error);
    EXPECT_EQ(index.find(7), row_for(7));
  } else {
    EXPECT_TRUE(index.remove(7));
    EXPECT_FALSE(index.remove(7));
    EXPECT_EQ(index.find(7), nullptr);
  }
}

INSTANTIATE_TEST_SUITE_P(Types, IndexSeam, ::testing::Values(IndexType::Hash, IndexType::Ordered),
                         [](const auto& info) { return std::string(kIndexTypeNames[static_cast<int>(info.param)]); });

TEST(TableIndexes, PrimaryOfTheChosenTypeAndSecondariesByNumber) {
  Database db(RowLayout::for_meta(8, 8));
  Schema schema;
  schema.add_int64("ID");
  schema.add_int64("GROUP");
  Table& t = db.create_table("t", std::move(schema), 64, IndexType::Ordered);
  EXPECT_TRUE(t.index().is_ordered());
  EXPECT_EQ(t.index_count(), 1u);
  const uint32_t by_group = t.add_index("by_group", IndexType::Ordered, 64);
  const uint32_t by_id = t.add_index("by_id_hash", IndexType::Hash, 64);
  EXPECT_EQ(by_group, 1u);
  EXPECT_EQ(by_id, 2u);
  EXPECT_EQ(t.index_count(), 3u);
  EXPECT_EQ(&t.index(0), &t.index());
  EXPECT_EQ(t.index(by_group).name(), "by_group");

  // Rows 0..19 in groups of 5; the secondary key is (group, id), unique.
  RowCursor cursor;
  Arena nodes;
  std::vector<Row*> rows;
  for (uint64_t id = 0; id < 20; id++) {
    Row* row = t.load_row(
        cursor, nodes, 64, id, [](void*) {}, [](char*) {});
    t.index(by_group).insert(((id / 5) << 32) | id, row, nodes);
    t.index(by_id).insert(id, row, nodes);
    rows.push_back(row);
  }
  for (uint64_t id = 0; id < 20; id++) {
    EXPECT_EQ(t.index().find(id), rows[id]);
    EXPECT_EQ(t.index(by_id).find(id), rows[id]);
    EXPECT_EQ(t.index(by_group).find(((id / 5) << 32) | id), rows[id]);
  }
  // Group 2's rows, in order, through the secondary index.
  std::vector<Row*> group;
  t.index(by_group).ordered()->scan(uint64_t{2} << 32, (uint64_t{3} << 32) - 1, 100, [&](uint64_t, Row* r) {
    group.push_back(r);
    return true;
  });
  EXPECT_EQ(group, std::vector<Row*>(rows.begin() + 10, rows.begin() + 15));
  t.adopt(std::move(nodes));
}

}  // namespace
}  // namespace abyss
