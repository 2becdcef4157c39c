// The hash index in both layouts (flat cache-line buckets with overflow
// chains, and chained nodes), on small and huge pages: every inserted key is
// found, absent keys are not, a re-inserted key returns its newest row even
// once its bucket overflows, and concurrent inserts lose nothing.
#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "common/arena.h"
#include "common/storage_options.h"
#include "index/hash_index.h"
#include "platform/thread.h"

namespace abyss {
namespace {}  // namespace

void PrintTo(const StorageOptions& o, std::ostream* os) {
  *os << kIndexNames[static_cast<std::size_t>(o.index)] << (o.huge_pages ? ", huge pages" : ", small pages");
}

namespace {

class HashIndexTest : public testing::TestWithParam<StorageOptions> {};

// Distinct fake row addresses: the index never dereferences a row.
Row* row_for(uint64_t i) { return reinterpret_cast<Row*>((i + 1) * 64); }

TEST_P(HashIndexTest, FindsEveryKeyItHoldsAndNoOther) {
  // Ten times the expected keys: buckets fill and overflow.
  HashIndex index(1000, GetParam(), "t");
  Arena nodes;
  const uint64_t keys = 10 * index.buckets();
  for (uint64_t k = 0; k < keys; k++) index.insert(k * 7, row_for(k), nodes);
  for (uint64_t k = 0; k < keys; k++) ASSERT_EQ(index.find(k * 7), row_for(k)) << k;
  for (uint64_t k = 0; k < 1000; k++) EXPECT_EQ(index.find(k * 7 + 3), nullptr) << k;
  EXPECT_EQ(index.kind(), GetParam().index);
}

TEST_P(HashIndexTest, AReinsertedKeyShadowsTheOldOne) {
  HashIndex index(16, GetParam(), "t");
  Arena nodes;
  // Each key three times, interleaved with others, so later copies land in
  // slots and in overflow chains.
  for (uint64_t round = 0; round < 3; round++) {
    for (uint64_t k = 0; k < 5000; k++) index.insert(k, row_for(k + round * 5000), nodes);
    for (uint64_t k = 0; k < 5000; k++) ASSERT_EQ(index.find(k), row_for(k + round * 5000)) << k << " " << round;
  }
}

TEST_P(HashIndexTest, ConcurrentInsertsAreAllFound) {
  HashIndex index(4096, GetParam(), "t");
  constexpr uint32_t kThreads = 4;
  constexpr uint64_t kEach = 20000;  // about 20 keys a bucket: slots and chains race
  std::vector<Arena> arenas(kThreads);
  platform::run_parallel(kThreads, [&](uint32_t t) {
    for (uint64_t i = 0; i < kEach; i++) {
      const uint64_t k = i * kThreads + t;
      index.insert(k, row_for(k), arenas[t]);
      if (index.find(k) != row_for(k)) throw std::runtime_error("key " + std::to_string(k) + " lost");
    }
  });
  for (uint64_t k = 0; k < kThreads * kEach; k++) ASSERT_EQ(index.find(k), row_for(k)) << k;
}

TEST_P(HashIndexTest, PrefetchingAnyKeyIsHarmless) {
  HashIndex index(100, GetParam(), "t");
  for (uint64_t k = 0; k < 100000; k += 997) index.prefetch(k);
  EXPECT_EQ(index.find(5), nullptr);
}

TEST(HashIndexSize, FlatBucketsHoldALineAndTheCountsScaleWithKeys) {
  EXPECT_EQ(sizeof(HashIndex::Bucket), 64u);
  EXPECT_EQ(HashIndex::buckets_for(0, IndexKind::Flat), 1024u);
  EXPECT_EQ(HashIndex::buckets_for(1u << 20, IndexKind::Chained), 1u << 20);
  EXPECT_EQ(HashIndex::buckets_for(1u << 20, IndexKind::Flat), 1u << 20);  // 2/3 of 2^20 rounds up to it
  EXPECT_EQ(HashIndex::buckets_for(3u << 20, IndexKind::Flat), 2u << 20);
  // On huge pages a bucket array is a whole number of 2 MiB pages.
  EXPECT_EQ(HashIndex::bucket_bytes(1, {IndexKind::Chained, true}), uint64_t{2} << 20);
  EXPECT_EQ(HashIndex::bucket_bytes(1, {IndexKind::Chained, false}), 1024u * 8);
}

std::string name_of(const testing::TestParamInfo<StorageOptions>& info) {
  return std::string(info.param.index == IndexKind::Flat ? "Flat" : "Chained") +
         (info.param.huge_pages ? "Huge" : "Small");
}

INSTANTIATE_TEST_SUITE_P(Layouts, HashIndexTest,
                         testing::Values(StorageOptions{IndexKind::Flat, true}, StorageOptions{IndexKind::Flat, false},
                                         StorageOptions{IndexKind::Chained, true},
                                         StorageOptions{IndexKind::Chained, false}),
                         name_of);

}  // namespace
}  // namespace abyss
