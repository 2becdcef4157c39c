// The access set's index by row: every row added is found at its first
// access, across growth, and nothing is found after clear().
#include "txn/access_index.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "storage/row.h"

namespace abyss {
namespace {

// Distinct row addresses, 64 bytes apart as rows are (the index hashes the
// address, so no row is dereferenced).
std::vector<const Row*> rows(std::size_t n) {
  static std::vector<char> space(std::size_t{64} * 100'000);
  std::vector<const Row*> out;
  for (std::size_t i = 0; i < n; i++) out.push_back(reinterpret_cast<const Row*>(space.data() + 64 * i));
  return out;
}

TEST(AccessIndex, FindsEveryRowAtItsFirstAccessAcrossGrowth) {
  const std::vector<const Row*> r = rows(20'000);
  AccessIndex index;
  EXPECT_EQ(index.find(r[0]), AccessIndex::kNone) << "empty";
  for (uint32_t i = 0; i < r.size(); i++) index.add(r[i], i);
  // A second access of a row (a write after a read) keeps the first.
  index.add(r[7], 20'000);
  EXPECT_EQ(index.size(), r.size());
  for (uint32_t i = 0; i < r.size(); i++) ASSERT_EQ(index.find(r[i]), i) << "row " << i;
  EXPECT_EQ(index.find(rows(20'001).back()), AccessIndex::kNone) << "a row never added";
  EXPECT_GE(AccessIndex::max_bytes(r.size()), 2 * r.size() * sizeof(const Row*)) << "half the slots at most are full";
}

TEST(AccessIndex, ClearForgetsEveryRowAndTheIndexServesAgain) {
  const std::vector<const Row*> r = rows(1000);
  AccessIndex index;
  for (uint32_t i = 0; i < r.size(); i++) index.add(r[i], i);
  index.clear();
  EXPECT_EQ(index.size(), 0u);
  for (const Row* row : r) ASSERT_EQ(index.find(row), AccessIndex::kNone);
  // Added again in the other order: each at its new access.
  for (uint32_t i = 0; i < r.size(); i++) index.add(r[r.size() - 1 - i], i);
  for (uint32_t i = 0; i < r.size(); i++) ASSERT_EQ(index.find(r[r.size() - 1 - i]), i);
}

}  // namespace
}  // namespace abyss
