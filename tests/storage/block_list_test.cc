// The block list (storage/block_list.h), in both modes: tuples come back in
// the order one cursor inserted them, a block fills to its last slot before
// the next is appended, each cursor fills blocks of its own, Scan() resumes
// where its buffer ended, and an iterator's end is the tail when it began.
// Under concurrent inserters and scanners every scan sees whole tuples, each
// at most once, a prefix of each inserter's tuples and at least what was
// inserted before it began; once the inserters are done a scan sees every
// tuple exactly once, and no appended block is lost.
#include "storage/block_list.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "platform/atomic.h"
#include "platform/latch.h"
#include "platform/machine.h"
#include "platform/thread.h"

namespace abyss {
namespace {}  // namespace

// Names a mode in a failed test's parameter line.
void PrintTo(BlockListMode mode, std::ostream* os) {
  *os << (mode == BlockListMode::Latched ? "Latched" : "LatchFree");
}

namespace {

class BlockListModes : public ::testing::TestWithParam<BlockListMode> {};

std::string mode_name(const ::testing::TestParamInfo<BlockListMode>& info) {
  return info.param == BlockListMode::Latched ? "Latched" : "LatchFree";
}

// A small block: 64 header bytes and 252 slots of 16 bytes.
constexpr std::size_t kSmallBlock = 4096;

struct Pair {
  uint64_t cursor;
  uint64_t value;
};

Pair read_pair(const char* p) {
  Pair t;
  std::memcpy(&t, p, sizeof(t));
  return t;
}

std::vector<Pair> all_pairs(const BlockList& list) {
  std::vector<Pair> out;
  for (auto it = list.begin(); it.valid(); it.next()) out.push_back(read_pair(*it));
  return out;
}

TEST_P(BlockListModes, EmptyListHasNoTuple) {
  BlockList list(sizeof(Pair), GetParam(), kSmallBlock);
  EXPECT_FALSE(list.begin().valid());
  auto it = list.begin();
  char buffer[sizeof(Pair)];
  EXPECT_EQ(list.scan(it, buffer, 1), 0u);
  EXPECT_EQ(list.block_count(), 0u);
}

TEST_P(BlockListModes, IteratesInTheOrderOneCursorInserted) {
  BlockList list(sizeof(Pair), GetParam(), kSmallBlock);
  BlockList::Cursor cursor;
  std::vector<const char*> where;
  for (uint64_t v = 0; v < 1000; v++) {
    const Pair t{0, v};
    where.push_back(list.insert(cursor, &t));
  }
  uint64_t v = 0;
  for (auto it = list.begin(); it.valid(); it.next(), v++) {
    ASSERT_LT(v, 1000u);
    EXPECT_EQ(*it, where[v]) << "tuple " << v << " is where insert said";
    EXPECT_EQ(read_pair(*it).value, v);
  }
  EXPECT_EQ(v, 1000u);
}

TEST_P(BlockListModes, FillsABlockToItsLastSlotBeforeAppendingOne) {
  BlockList list(sizeof(Pair), GetParam(), kSmallBlock);
  ASSERT_EQ(BlockList::header_bytes(), 64u);
  const uint32_t slots = list.slots_per_block();
  ASSERT_EQ(slots, (kSmallBlock - 64) / sizeof(Pair));
  BlockList::Cursor cursor;
  for (uint64_t v = 0; v < slots; v++) {
    const Pair t{0, v};
    list.insert(cursor, &t);
  }
  EXPECT_EQ(list.block_count(), 1u);
  EXPECT_EQ(all_pairs(list).size(), slots);
  const Pair t{0, slots};
  list.insert(cursor, &t);
  EXPECT_EQ(list.block_count(), 2u);
  const std::vector<Pair> all = all_pairs(list);
  ASSERT_EQ(all.size(), slots + 1u);
  for (uint64_t v = 0; v <= slots; v++) EXPECT_EQ(all[v].value, v);
}

TEST_P(BlockListModes, EachCursorFillsBlocksOfItsOwn) {
  BlockList list(sizeof(Pair), GetParam(), kSmallBlock);
  const uint32_t slots = list.slots_per_block();
  BlockList::Cursor cursors[2];
  const uint64_t each = uint64_t{3} * slots;
  std::vector<const char*> first_of(2);
  for (uint64_t v = 0; v < each; v++) {
    for (uint64_t c = 0; c < 2; c++) {
      const Pair t{c, v};
      const char* at = list.insert(cursors[c], &t);
      // A slot a block's width from a cursor's previous one is in another block.
      if (v % slots == 0) first_of[c] = at;
      EXPECT_LT(static_cast<std::size_t>(at - first_of[c]), slots * sizeof(Pair));
    }
  }
  EXPECT_EQ(list.block_count(), 6u);
  // Blocks alternate between the cursors, each holding one cursor's run.
  const std::vector<Pair> all = all_pairs(list);
  ASSERT_EQ(all.size(), 2 * each);
  for (uint64_t i = 0; i < all.size(); i++) {
    const uint64_t block = i / slots;
    EXPECT_EQ(all[i].cursor, block % 2) << "tuple " << i;
    EXPECT_EQ(all[i].value, block / 2 * slots + i % slots) << "tuple " << i;
  }
}

TEST_P(BlockListModes, ScanFillsItsBufferAndResumesWhereItEnded) {
  BlockList list(sizeof(Pair), GetParam(), kSmallBlock);
  BlockList::Cursor cursor;
  for (uint64_t v = 0; v < 1000; v++) {
    const Pair t{0, v};
    list.insert(cursor, &t);
  }
  std::vector<Pair> buffer(64);
  auto it = list.begin();
  uint64_t next = 0;
  for (uint32_t got; (got = list.scan(it, reinterpret_cast<char*>(buffer.data()), 64)) > 0;) {
    EXPECT_EQ(got, next + 64 <= 1000 ? 64u : 1000 % 64);
    for (uint32_t i = 0; i < got; i++) EXPECT_EQ(buffer[i].value, next + i);
    next += got;
  }
  EXPECT_EQ(next, 1000u);
  EXPECT_FALSE(it.valid());
}

// The iterator's end is the tail block when it began: a block appended later
// is not visited, a tuple published later in a block it has not passed is.
//
//    cursor A         | cursor B        | iterator
//    -----------------------------------------------------
//    10 tuples (blk 1)|                 |
//                     |                 | begin: end block is 1
//                     | 5 tuples (blk 2)|
//    3 more (blk 1)   |                 |
//                     |                 | walk: 13 of A, none of B
TEST_P(BlockListModes, AnIteratorEndsAtTheTailWhenItBegan) {
  BlockList list(sizeof(Pair), GetParam(), kSmallBlock);
  BlockList::Cursor a;
  BlockList::Cursor b;
  uint64_t v = 0;
  for (; v < 10; v++) {
    const Pair t{0, v};
    list.insert(a, &t);
  }
  auto it = list.begin();
  for (uint64_t i = 0; i < 5; i++) {
    const Pair t{1, i};
    list.insert(b, &t);
  }
  for (; v < 13; v++) {
    const Pair t{0, v};
    list.insert(a, &t);
  }
  uint64_t seen = 0;
  for (; it.valid(); it.next(), seen++) EXPECT_EQ(read_pair(*it).cursor, 0u);
  EXPECT_EQ(seen, 13u);
  EXPECT_EQ(all_pairs(list).size(), 18u);
}

TEST(BlockListShape, RefusesATupleNoBlockHolds) {
  EXPECT_THROW(BlockList(0, BlockListMode::LatchFree, kSmallBlock), std::invalid_argument);
  EXPECT_THROW(BlockList(kSmallBlock, BlockListMode::LatchFree, kSmallBlock), std::invalid_argument);
  EXPECT_NO_THROW(BlockList(kSmallBlock - 64, BlockListMode::Latched, kSmallBlock));
  // The benchmark's shape: 1 MiB blocks of 8-byte tuples.
  const BlockList list(8, BlockListMode::LatchFree);
  EXPECT_EQ(list.slots_per_block(), ((std::size_t{1} << 20) - 64) / 8);
}

// A tuple that says whose it is, which of theirs, and a checksum of both and
// its payload: a torn read (bytes of two writes, or of none) fails the sum.
struct Stamped {
  uint32_t inserter;
  uint32_t seq;
  uint64_t payload;
  uint64_t check;
};

uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  return x ^ (x >> 33);
}

Stamped stamp(uint32_t inserter, uint32_t seq) {
  const uint64_t payload = mix((uint64_t{inserter} << 32) | seq);
  return {inserter, seq, payload, mix(payload ^ 0x9e3779b97f4a7c15ULL) + inserter + seq};
}

bool whole(const Stamped& t) {
  const Stamped want = stamp(t.inserter, t.seq);
  return t.payload == want.payload && t.check == want.check;
}

// Concurrent inserters and scanners. Scanners scan again and again until
// every inserter is done, then once more; scans alternate between Scan() into
// a buffer and the bare iterator. Each scan checks, per inserter, that every
// tuple it saw is whole and seen once, that the seen ones are a prefix (as
// many as the highest seq seen plus one), at least what the inserter had
// published when the scan began, and at least what this scanner's previous
// scan saw. run_parallel on the simulated build runs the threads one after
// another: the inserters finish first and each scanner scans once.
void inserts_beside_scans(BlockListMode mode, std::size_t block_bytes, uint32_t each) {
  constexpr uint32_t kInserters = 4;
  constexpr uint32_t kScanners = 3;
  BlockList list(sizeof(Stamped), mode, block_bytes);
  struct alignas(platform::kCacheLine) Progress {
    platform::Atomic<uint32_t> inserted{0};
  };
  std::vector<Progress> progress(kInserters);
  platform::Atomic<uint32_t> finished{0};
  std::vector<uint32_t> scans(kScanners, 0);
  // Inserters pause at 16 steps until two more scans have ended, so scans
  // overlap every stretch of the inserts; a failed scanner releases them.
  constexpr uint32_t kSteps = 16;
  const uint32_t step = std::max(each / kSteps, 1u);
  platform::Atomic<uint32_t> scans_ended{0};
  platform::Atomic<bool> scanner_failed{false};

  platform::run_parallel(kInserters + kScanners, [&](uint32_t t) {
    if (t < kInserters) {
      BlockList::Cursor cursor;
      for (uint32_t seq = 0; seq < each; seq++) {
        const Stamped s = stamp(t, seq);
        list.insert(cursor, &s);
        progress[t].inserted.store(seq + 1, platform::memory_order_release);
        if (!platform::kSimulated && (seq + 1) % step == 0) {
          const uint32_t target = scans_ended.load(platform::memory_order_acquire) + 2;
          for (platform::SpinWait wait; scans_ended.load(platform::memory_order_acquire) < target &&
                                        !scanner_failed.load(platform::memory_order_acquire);) {
            wait.once();
          }
        }
      }
      finished.fetch_add(1, platform::memory_order_release);
      return;
    }
    const uint32_t scanner = t - kInserters;
    std::vector<uint32_t> previous(kInserters, 0);
    std::vector<std::vector<uint8_t>> seen(kInserters, std::vector<uint8_t>(each));
    std::vector<Stamped> buffer(97);
    for (bool last = false; !last; scans[scanner]++) {
      last = finished.load(platform::memory_order_acquire) == kInserters;
      uint32_t before[kInserters];
      for (uint32_t i = 0; i < kInserters; i++) before[i] = progress[i].inserted.load(platform::memory_order_acquire);
      for (auto& s : seen) std::fill(s.begin(), s.end(), 0);
      std::vector<uint32_t> count(kInserters, 0);
      std::vector<uint32_t> top(kInserters, 0);  // highest seq seen, plus one
      const std::string what = "scan " + std::to_string(scans[scanner]) + " of scanner " + std::to_string(scanner);
      const auto fail = [&](const std::string& why) {
        scanner_failed.store(true, platform::memory_order_release);
        throw std::runtime_error(why);
      };
      const auto visit = [&](const Stamped& s) {
        if (s.inserter >= kInserters || s.seq >= each || !whole(s)) {
          fail(what + " read a torn tuple (inserter " + std::to_string(s.inserter) + ", seq " + std::to_string(s.seq) +
               ")");
        }
        if (seen[s.inserter][s.seq]++ != 0) {
          fail(what + " saw tuple " + std::to_string(s.seq) + " of inserter " + std::to_string(s.inserter) + " twice");
        }
        count[s.inserter]++;
        top[s.inserter] = std::max(top[s.inserter], s.seq + 1);
      };
      auto it = list.begin();
      if (scans[scanner] % 2 == 0) {
        for (uint32_t got;
             (got = list.scan(it, reinterpret_cast<char*>(buffer.data()), static_cast<uint32_t>(buffer.size()))) > 0;) {
          for (uint32_t i = 0; i < got; i++) visit(buffer[i]);
        }
      } else {
        for (; it.valid(); it.next()) {
          Stamped s;
          std::memcpy(&s, *it, sizeof(s));
          visit(s);
        }
      }
      for (uint32_t i = 0; i < kInserters; i++) {
        const std::string of = what + ", inserter " + std::to_string(i) + ": ";
        if (count[i] != top[i]) {
          fail(of + "saw " + std::to_string(count[i]) + " tuples up to seq " + std::to_string(top[i]) +
               ", not a prefix");
        }
        if (count[i] < before[i]) {
          fail(of + "saw " + std::to_string(count[i]) + " tuples, " + std::to_string(before[i]) +
               " were published before it began");
        }
        if (count[i] < previous[i]) {
          fail(of + "saw " + std::to_string(count[i]) + " tuples, the scan before saw " + std::to_string(previous[i]));
        }
        if (last && count[i] != each) {
          fail(of + "after the inserts saw " + std::to_string(count[i]) + " of " + std::to_string(each));
        }
        previous[i] = count[i];
      }
      scans_ended.fetch_add(1, platform::memory_order_release);
    }
  });

  for (uint32_t s = 0; s < kScanners; s++) EXPECT_GE(scans[s], 1u);
  // Nothing lost, nothing twice: the final scan of each scanner checked it;
  // once more from here, and every block each inserter appended is linked.
  std::vector<uint32_t> count(kInserters, 0);
  for (auto it = list.begin(); it.valid(); it.next()) {
    Stamped s;
    std::memcpy(&s, *it, sizeof(s));
    ASSERT_TRUE(s.inserter < kInserters && whole(s));
    ASSERT_EQ(s.seq, count[s.inserter]) << "one inserter's tuples in its order";
    count[s.inserter]++;
  }
  for (uint32_t i = 0; i < kInserters; i++) EXPECT_EQ(count[i], each) << "inserter " << i;
  const uint64_t blocks_each = (each + list.slots_per_block() - 1) / list.slots_per_block();
  EXPECT_EQ(list.block_count(), kInserters * blocks_each);
}

TEST_P(BlockListModes, ConcurrentInsertsAndScansSeeWholeTuplesInPrefixes) {
  // 168 slots of 24 bytes a block: about 1200 blocks in all.
  inserts_beside_scans(GetParam(), kSmallBlock, 50'000);
}

TEST_P(BlockListModes, ConcurrentAppendsOfOneSlotBlocksLoseNone) {
  // A block of one slot: every insert appends, so the appends race each other
  // at the tail.
  inserts_beside_scans(GetParam(), BlockList::header_bytes() + sizeof(Stamped), 1'500);
}

INSTANTIATE_TEST_SUITE_P(BlockList, BlockListModes, ::testing::Values(BlockListMode::LatchFree, BlockListMode::Latched),
                         mode_name);

}  // namespace
}  // namespace abyss
