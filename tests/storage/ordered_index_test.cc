// The ordered index (B+-tree with optimistic lock coupling): every inserted
// key is found and no other, a duplicate insert is refused, a removed key is
// gone, forward and reverse range scans agree with a std::map over trees with
// splits at every level, a scan's leaf versions show a later insert into its
// range, and scans running beside concurrent inserts visit keys in order,
// once each, missing none inserted before they began.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/arena.h"
#include "index/ordered_index.h"
#include "platform/atomic.h"
#include "platform/latch.h"
#include "platform/machine.h"
#include "platform/thread.h"

namespace abyss {
namespace {

// Distinct fake row addresses: the index never dereferences a row.
Row* row_for(uint64_t key) { return reinterpret_cast<Row*>((key + 1) * 64); }

using Entries = std::vector<std::pair<uint64_t, Row*>>;

enum class Order { Forward, Reverse };

Entries scan_all(const OrderedIndex& index, uint64_t lo, uint64_t hi, std::size_t limit, Order order = Order::Forward) {
  Entries out;
  auto collect = [&](uint64_t key, Row* row) {
    out.emplace_back(key, row);
    return true;
  };
  if (order == Order::Forward) {
    index.scan(lo, hi, limit, collect);
  } else {
    index.scan_reverse(lo, hi, limit, collect);
  }
  return out;
}

Entries scan_all_reverse(const OrderedIndex& index, uint64_t lo, uint64_t hi, std::size_t limit) {
  return scan_all(index, lo, hi, limit, Order::Reverse);
}

Entries model_scan(const std::map<uint64_t, Row*>& model, uint64_t lo, uint64_t hi, std::size_t limit) {
  Entries out;
  if (lo > hi) return out;
  for (auto it = model.lower_bound(lo); it != model.end() && it->first <= hi && out.size() < limit; ++it) {
    out.emplace_back(it->first, it->second);
  }
  return out;
}

Entries model_scan_reverse(const std::map<uint64_t, Row*>& model, uint64_t lo, uint64_t hi, std::size_t limit) {
  Entries out;
  if (lo > hi) return out;
  for (auto it = std::make_reverse_iterator(model.upper_bound(hi));
       it != model.rend() && it->first >= lo && out.size() < limit; ++it) {
    out.emplace_back(it->first, it->second);
  }
  return out;
}

constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
constexpr std::size_t kAll = std::numeric_limits<std::size_t>::max();

TEST(OrderedIndex, AnEmptyTreeFindsAndScansNothing) {
  OrderedIndex index;
  EXPECT_EQ(index.find(0), nullptr);
  EXPECT_EQ(index.find(kMax), nullptr);
  EXPECT_FALSE(index.remove(7));
  EXPECT_TRUE(scan_all(index, 0, kMax, kAll).empty());
  EXPECT_TRUE(scan_all_reverse(index, 0, kMax, kAll).empty());
  EXPECT_EQ(index.height(), 0u);
}

TEST(OrderedIndex, SequentialInsertsAreAllFound) {
  OrderedIndex index;
  Arena nodes;
  constexpr uint64_t kKeys = 100000;
  for (uint64_t k = 0; k < kKeys; k++) ASSERT_TRUE(index.insert(k * 3, row_for(k * 3), nodes)) << k;
  for (uint64_t k = 0; k < kKeys; k++) {
    ASSERT_EQ(index.find(k * 3), row_for(k * 3)) << k;
    ASSERT_EQ(index.find(k * 3 + 1), nullptr) << k;
  }
  EXPECT_GE(index.height(), 4u);  // inner nodes have split, and the root more than once
  const Entries all = scan_all(index, 0, kMax, kAll);
  ASSERT_EQ(all.size(), kKeys);
  for (uint64_t k = 0; k < kKeys; k++) ASSERT_EQ(all[k].first, k * 3);
}

TEST(OrderedIndex, DescendingAndRandomInsertsAreAllFound) {
  constexpr uint64_t kKeys = 100000;
  std::vector<uint64_t> keys(kKeys);
  std::iota(keys.begin(), keys.end(), 0);
  std::mt19937_64 rng(42);
  std::shuffle(keys.begin(), keys.end(), rng);
  for (uint64_t& k : keys) k = k * 0x9e3779b97f4a7c15ULL;  // distinct, spread over the whole key space

  OrderedIndex random;
  Arena nodes;
  for (uint64_t k : keys) ASSERT_TRUE(random.insert(k, row_for(k), nodes)) << k;
  for (uint64_t k : keys) ASSERT_EQ(random.find(k), row_for(k)) << k;
  for (uint64_t k : keys) ASSERT_EQ(random.find(k + 1), nullptr) << k;  // no key of this set is another's successor
  EXPECT_GE(random.height(), 4u);

  OrderedIndex descending;
  for (uint64_t k = kKeys; k-- > 0;) ASSERT_TRUE(descending.insert(k, row_for(k), nodes)) << k;
  for (uint64_t k = 0; k < kKeys; k++) ASSERT_EQ(descending.find(k), row_for(k)) << k;
  EXPECT_EQ(descending.find(kKeys), nullptr);
}

TEST(OrderedIndex, ADuplicateInsertIsRefusedAndChangesNothing) {
  OrderedIndex index;
  Arena nodes;
  for (uint64_t k = 0; k < 1000; k++) ASSERT_TRUE(index.insert(k, row_for(k), nodes));
  // Into full leaves and partly filled ones alike.
  for (uint64_t k = 0; k < 1000; k++) EXPECT_FALSE(index.insert(k, row_for(k + 5000), nodes)) << k;
  for (uint64_t k = 0; k < 1000; k++) EXPECT_EQ(index.find(k), row_for(k)) << k;
  EXPECT_EQ(scan_all(index, 0, kMax, kAll).size(), 1000u);
}

TEST(OrderedIndex, ARemovedKeyIsAbsentAndCanBeInsertedAgain) {
  OrderedIndex index;
  Arena nodes;
  constexpr uint64_t kKeys = 20000;
  for (uint64_t k = 0; k < kKeys; k++) ASSERT_TRUE(index.insert(k, row_for(k), nodes));
  for (uint64_t k = 0; k < kKeys; k += 3) ASSERT_TRUE(index.remove(k)) << k;
  for (uint64_t k = 0; k < kKeys; k += 3) EXPECT_FALSE(index.remove(k)) << k;  // gone already
  EXPECT_FALSE(index.remove(kKeys));
  for (uint64_t k = 0; k < kKeys; k++) ASSERT_EQ(index.find(k), k % 3 == 0 ? nullptr : row_for(k)) << k;
  // Whole leaves emptied: scans step over them.
  for (uint64_t k = 1000; k < 3000; k++) index.remove(k);
  const Entries mid = scan_all(index, 900, 3100, kAll);
  const Entries mid_reverse = scan_all_reverse(index, 900, 3100, kAll);
  std::map<uint64_t, Row*> model;
  for (uint64_t k = 0; k < kKeys; k++) {
    if (k % 3 != 0 && (k < 1000 || k >= 3000)) model[k] = row_for(k);
  }
  EXPECT_EQ(mid, model_scan(model, 900, 3100, kAll));
  EXPECT_EQ(mid_reverse, model_scan_reverse(model, 900, 3100, kAll));
  for (uint64_t k = 0; k < kKeys; k += 3) ASSERT_TRUE(index.insert(k, row_for(k + 1), nodes)) << k;
  for (uint64_t k = 0; k < kKeys; k += 3) ASSERT_EQ(index.find(k), row_for(k + 1)) << k;
}

// Random keys in a narrow domain (so ranges hold many keys and many misses),
// some removed, with the extreme keys 0 and 2^64 - 1 present.
class OrderedIndexScan : public testing::Test {
 protected:
  void SetUp() override {
    std::mt19937_64 rng(7);
    std::uniform_int_distribution<uint64_t> key(1, 400000);
    for (int i = 0; i < 60000; i++) add(key(rng));
    add(0);
    add(kMax);
    for (int i = 0; i < 5000; i++) {
      const uint64_t k = key(rng);
      if (model.erase(k) != 0) {
        ASSERT_TRUE(index.remove(k)) << k;
      }
    }
    ASSERT_GE(index.height(), 4u);
  }
  void add(uint64_t k) {
    const bool fresh = model.emplace(k, row_for(k)).second;
    ASSERT_EQ(index.insert(k, row_for(k), nodes), fresh) << k;
  }
  void expect_both(uint64_t lo, uint64_t hi, std::size_t limit) {
    EXPECT_EQ(scan_all(index, lo, hi, limit), model_scan(model, lo, hi, limit)) << lo << ".." << hi << " " << limit;
    EXPECT_EQ(scan_all_reverse(index, lo, hi, limit), model_scan_reverse(model, lo, hi, limit))
        << lo << ".." << hi << " " << limit;
  }

  Arena nodes;
  OrderedIndex index;
  std::map<uint64_t, Row*> model;
};

TEST_F(OrderedIndexScan, RandomRangesAndLimitsMatchAMap) {
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<uint64_t> bound(0, 410000);
  std::uniform_int_distribution<std::size_t> limit(1, 300);
  for (int i = 0; i < 2000; i++) {
    uint64_t lo = bound(rng);
    uint64_t hi = lo + bound(rng) % (i % 2 == 0 ? 200 : 20000);
    expect_both(lo, hi, kAll);
    expect_both(lo, hi, limit(rng));
  }
}

TEST_F(OrderedIndexScan, EdgeRangesMatchAMap) {
  expect_both(0, kMax, kAll);  // the whole tree, both extreme keys included
  expect_both(0, kMax, 1);
  expect_both(0, 0, kAll);
  expect_both(kMax, kMax, kAll);
  expect_both(kMax - 1, kMax, kAll);
  expect_both(500000, kMax - 1, kAll);  // empty range beyond every key but the last
  expect_both(10, 5, kAll);             // lo > hi
  EXPECT_TRUE(scan_all(index, 10, 5, kAll).empty());
  expect_both(0, kMax, 0);  // limit 0
  EXPECT_TRUE(scan_all(index, 0, kMax, 0).empty());
  // A single key, present, then absent.
  const uint64_t present = std::next(model.begin(), 1234)->first;
  expect_both(present, present, kAll);
  EXPECT_EQ(scan_all(index, present, present, kAll).size(), 1u);
  uint64_t absent = present + 1;
  while (model.count(absent) != 0) absent++;
  expect_both(absent, absent, kAll);
  EXPECT_TRUE(scan_all(index, absent, absent, kAll).empty());
  // Ranges that start or end at a leaf boundary: every key's neighbourhood for a stretch.
  for (auto it = std::next(model.begin(), 20000); it != std::next(model.begin(), 20200); ++it) {
    expect_both(it->first, it->first + 100, kAll);
    expect_both(it->first - 100, it->first, kAll);
  }
}

TEST_F(OrderedIndexScan, AVisitThatAnswersFalseStopsTheScan) {
  Entries seen;
  index.scan(1000, 300000, kAll, [&](uint64_t key, Row* row) {
    seen.emplace_back(key, row);
    return seen.size() < 77;
  });
  EXPECT_EQ(seen, model_scan(model, 1000, 300000, 77));
  seen.clear();
  index.scan_reverse(1000, 300000, kAll, [&](uint64_t key, Row* row) {
    seen.emplace_back(key, row);
    return seen.size() < 77;
  });
  EXPECT_EQ(seen, model_scan_reverse(model, 1000, 300000, 77));
}

// What a scan's observer reported: each leaf with its version.
using LeafReads = std::vector<std::pair<const void*, uint64_t>>;

bool all_unchanged(const LeafReads& reads) {
  return std::all_of(reads.begin(), reads.end(),
                     [](const auto& r) { return OrderedIndex::version_of(r.first) == r.second; });
}

TEST(OrderedIndex, AScansLeafVersionsShowAnInsertOrRemoveInItsRange) {
  //    Scan             | Writer            |
  //    ---------------------------------------
  //    scan [lo, hi]     |                   |
  //    (leaves L1..Ln)  |                   |
  //                     | insert k, lo<k<hi |
  //    validate L1..Ln  |                   |   <- some Li's version moved: a phantom
  OrderedIndex index;
  Arena nodes;
  for (uint64_t k = 0; k < 100000; k += 10) ASSERT_TRUE(index.insert(k, row_for(k), nodes));
  for (const bool reverse : {false, true}) {
    SCOPED_TRACE(reverse ? "reverse" : "forward");
    auto scan_range = [&](uint64_t lo, uint64_t hi) {
      LeafReads reads;
      auto visit = [](uint64_t, Row*) { return true; };
      auto observe = [&](const void* leaf, uint64_t version) { reads.emplace_back(leaf, version); };
      if (reverse) {
        index.scan_reverse(lo, hi, kAll, visit, observe);
      } else {
        index.scan(lo, hi, kAll, visit, observe);
      }
      return reads;
    };
    const uint64_t fresh = reverse ? 50001 : 50003;
    LeafReads reads = scan_range(50000, 51000);
    EXPECT_GE(reads.size(), 3u);  // about 100 keys: several leaves
    EXPECT_TRUE(all_unchanged(reads));
    // Far outside the range: the scanned leaves stay as they were.
    ASSERT_TRUE(index.insert(reverse ? 7 : 90007, row_for(7), nodes));
    EXPECT_TRUE(all_unchanged(reads));
    // Into the gap between two keys of the range: a phantom.
    ASSERT_TRUE(index.insert(fresh, row_for(fresh), nodes));
    EXPECT_FALSE(all_unchanged(reads));
    // A removal in the range shows the same way.
    reads = scan_range(50000, 51000);
    EXPECT_TRUE(all_unchanged(reads));
    ASSERT_TRUE(index.remove(reverse ? 50600 : 50500));
    EXPECT_FALSE(all_unchanged(reads));
    // Into an empty range between two keys: the leaf that covers it moves.
    reads = scan_range(60001, 60009);
    EXPECT_TRUE(all_unchanged(reads));
    EXPECT_FALSE(reads.empty());
    ASSERT_TRUE(index.insert(reverse ? 60004 : 60005, row_for(60005), nodes));
    EXPECT_FALSE(all_unchanged(reads));
  }
}

TEST(OrderedIndex, ConcurrentInsertsAndScansSeeEveryPublishedKeyOnce) {
  //    Writer t (each of kWriters)        | Scanner                               |
  //    ------------------------------------------------------------------------------
  //    insert keys[t][0..i]               |                                       |
  //    published[t] = i + 1 (release)     |                                       |
  //                                       | c[t] = published[t] (acquire), all t  |
  //    insert keys[t][i+1..]              | scan [lo, hi] (forward or reverse)    |   <- strictly monotone, and holds
  //                                       |                                       |      every keys[t][0..c[t]) in it
  // Every kStep keys a writer waits until a scan that began after it got
  // there has ended, so scans see the tree at many sizes even where the
  // scheduler would run the writers to their end first. The simulated build's
  // run_parallel runs the threads one after another on the host: there the
  // writers do not wait, and the scanner makes one scan of the full tree.
  constexpr uint32_t kWriters = 3;
  constexpr uint64_t kEach = 30000;
  constexpr uint64_t kStep = kEach / 16;
  // Writer t inserts k * kWriters + t in a scrambled order, so all three split
  // the same leaves and inner nodes.
  std::vector<std::vector<uint64_t>> keys(kWriters);
  for (uint32_t t = 0; t < kWriters; t++) {
    for (uint64_t i = 0; i < kEach; i++) keys[t].push_back(i * kWriters + t);
    std::shuffle(keys[t].begin(), keys[t].end(), std::mt19937_64(t + 1));
  }
  struct alignas(platform::kCacheLine) Published {
    platform::Atomic<uint64_t> count;
  };
  std::vector<Published> published(kWriters);
  Published scans_ended;
  platform::Atomic<bool> scanner_failed{false};  // then the writers wait for it no more
  platform::Atomic<uint32_t> finished{0};
  std::vector<Arena> arenas(kWriters);
  OrderedIndex index;
  uint64_t scans = 0;

  platform::run_parallel(kWriters + 1, [&](uint32_t t) {
    if (t < kWriters) {
      for (uint64_t i = 0; i < kEach; i++) {
        const uint64_t k = keys[t][i];
        if (!index.insert(k, row_for(k), arenas[t])) {
          finished.fetch_add(1, platform::memory_order_release);  // the scanner's end does not wait for this writer
          throw std::runtime_error("insert of " + std::to_string(k) + " refused");
        }
        published[t].count.store(i + 1, platform::memory_order_release);
        if (!platform::kSimulated && (i + 1) % kStep == 0) {
          // The scan under way may have begun before this point: two more ends.
          const uint64_t target = scans_ended.count.load(platform::memory_order_acquire) + 2;
          for (platform::SpinWait wait; scans_ended.count.load(platform::memory_order_acquire) < target &&
                                        !scanner_failed.load(platform::memory_order_acquire);) {
            wait.once();
          }
        }
      }
      finished.fetch_add(1, platform::memory_order_release);
      return;
    }
    std::mt19937_64 rng(99);
    std::uniform_int_distribution<uint64_t> bound(0, kWriters * kEach);
    std::vector<uint64_t> seen;
    for (bool last = false; !last; scans++) {
      // Past the writers' end, one more scan of everything: it must find every key.
      last = finished.load(platform::memory_order_acquire) == kWriters;
      uint64_t before[kWriters];
      for (uint32_t w = 0; w < kWriters; w++) before[w] = published[w].count.load(platform::memory_order_acquire);
      const bool reverse = scans % 2 == 1;
      uint64_t lo = 0;
      uint64_t hi = kMax;
      if (!last && scans % 3 == 2) {
        lo = bound(rng);
        hi = lo + bound(rng) / 4;
      }
      seen.clear();
      std::optional<uint64_t> bad;  // a key out of range or with another key's row
      auto visit = [&](uint64_t key, Row* row) {
        seen.push_back(key);
        if (row != row_for(key) || key < lo || key > hi) bad = key;
        return true;
      };
      if (reverse) {
        index.scan_reverse(lo, hi, kAll, visit);
        std::reverse(seen.begin(), seen.end());
      } else {
        index.scan(lo, hi, kAll, visit);
      }
      const std::string what = std::string(reverse ? "reverse" : "forward") + " scan " + std::to_string(scans) +
                               " of [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
      const auto fail = [&](const std::string& why) {
        scanner_failed.store(true, platform::memory_order_release);
        throw std::runtime_error(what + why);
      };
      if (bad) fail(" visited key " + std::to_string(*bad) + " out of range or with a wrong row");
      if (std::adjacent_find(seen.begin(), seen.end(), std::greater_equal<>()) != seen.end()) {
        fail(" not strictly monotone");
      }
      for (uint32_t w = 0; w < kWriters; w++) {
        for (uint64_t i = 0; i < before[w]; i++) {
          const uint64_t k = keys[w][i];
          if (k >= lo && k <= hi && !std::binary_search(seen.begin(), seen.end(), k)) {
            fail(" missed key " + std::to_string(k));
          }
        }
      }
      scans_ended.count.fetch_add(1, platform::memory_order_release);
    }
  });

  if (!platform::kSimulated) {
    EXPECT_GE(scans, 2 * 16u);  // at least two at each of a writer's steps
  }
  const Entries all = scan_all(index, 0, kMax, kAll);
  ASSERT_EQ(all.size(), kWriters * kEach);
  for (uint64_t k = 0; k < kWriters * kEach; k++) {
    ASSERT_EQ(all[k].first, k);
    ASSERT_EQ(index.find(k), row_for(k)) << k;
  }
}

}  // namespace
}  // namespace abyss
