#pragma once
// The five designs the Terrier study compares for a table that is scanned
// while it is appended to (concurrent sequential scans in Terrier, Approach
// and Results), for `abyss bench scan` to set side by side. Every design keeps
// tuples of one size in blocks, each inserting worker filling a block of its
// own (its Cursor) and publishing its slots with a release store of the
// block's count; they differ in the container that links the blocks and in
// what a scan or an insert must latch:
//
//   coarse        the study's starting point: BlockList's Latched mode, one
//                 spin latch held for a whole insert and taken by the
//                 iterator's end test and its advance, twice a tuple.
//   fine-grained  the study's first step: a standard mutex around the parts
//                 that are not thread-safe only, which are the list's links.
//                 An insert takes it to append a block, not to copy a tuple;
//                 the iterator's end test takes it to read the list's last
//                 block (as the study's end(), once a tuple), its advance
//                 within a block takes none, and its step to the next block
//                 takes it again. The end is live: a scan sees blocks
//                 appended while it runs.
//   snapshot      the study's second step: begin() copies the list, each
//                 block with its count, under the mutex, and the iterator
//                 walks its copy without latches; inserts as fine-grained.
//   ordered-map   the study's third step, a concurrent ordered map of
//                 blocks keyed by their position, done without the race the
//                 study hit. Its map took its keys from a counter of its
//                 own: a block could be keyed k + 1 and inserted before the
//                 block keyed k, so a reader or an inserter looking for the
//                 last block found a gap or a stale one. Here a key is
//                 claimed by the map itself: an appender reads the map's
//                 last key k and inserts its block under k + 1 only if that
//                 key is still absent (insert-if-absent), else it reads
//                 again. A key is inserted only once its predecessor is
//                 present, so the keys are always 1..last with no gap, and an
//                 iterator that fixes its end at the last key finds every
//                 block below it. The map is abyss's concurrent B+-tree
//                 (index/ordered_index.h) in place of the study's TBB map.
//   lock-free     the study's last step: BlockList's LatchFree mode, one
//                 compare-and-swap on the last block's link to append, no
//                 latch anywhere else.
//
// All five answer the same calls, so the bench and its check are written
// once over them: insert(cursor, tuple), begin(), scan(it, out, capacity)
// (the study's Scan(): an end test and an advance a tuple), and an iterator's
// valid(), next() and operator*.
//
// check_concurrent() is the study's correctness workload (Terrier study,
// "Benchmarking": threads that scan and insert at once): it holds every
// design to what a scan must see, whole tuples, none twice, every one
// published before it began, and after the inserts, all of them.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <list>
#include <memory>
#include <string>
#include <vector>

#include "common/arena.h"
#include "index/ordered_index.h"
#include "platform/atomic.h"
#include "platform/latch.h"
#include "platform/thread.h"
#include "storage/block_list.h"

namespace abyss::scan_designs {

inline const std::vector<std::string> kNames = {"coarse", "fine-grained", "snapshot", "ordered-map", "lock-free"};

// A block of the three designs that link their blocks in a container of
// their own: its count of published slots, stored by its owner alone, and
// the slots, mapped as the block list maps its blocks (1 MiB, zeroed), so
// the five designs pay the same for memory.
struct alignas(platform::kCacheLine) Block {
  Block(uint32_t tuple_bytes, std::size_t block_bytes);
  ~Block();
  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;
  platform::Atomic<uint32_t> published{0};
  uint32_t capacity = 0;
  std::size_t bytes = 0;  // mapped for the slots
  char* slots = nullptr;
};

// A worker's insert position: the block it fills alone; and, for the
// ordered map, the arena its map nodes come from.
struct Cursor {
  Block* block = nullptr;
  Arena* nodes = nullptr;
};

// Copies `tuple` into the next slot of the cursor's block, asking append()
// for a new block first when the cursor has none or it is full, and publishes
// the slot.
template <class Append>
const char* fill(Cursor& cursor, const void* tuple, uint32_t tuple_bytes, Append&& append) {
  if (cursor.block == nullptr ||
      cursor.block->published.load(platform::memory_order_relaxed) == cursor.block->capacity) {
    cursor.block = append();
  }
  Block& b = *cursor.block;
  const uint32_t slot = b.published.load(platform::memory_order_relaxed);
  char* at = b.slots + static_cast<std::size_t>(slot) * tuple_bytes;
  std::memcpy(at, tuple, tuple_bytes);
  b.published.store(slot + 1, platform::memory_order_release);
  return at;
}

// The study's Scan() over any of the designs' iterators: an end test and an
// advance a tuple, each tuple copied into `out`.
template <class Iterator>
uint32_t scan_into(Iterator& it, char* out, uint32_t capacity, uint32_t tuple_bytes) {
  uint32_t n = 0;
  for (; n < capacity && it.valid(); it.next(), n++) {
    std::memcpy(out + static_cast<std::size_t>(n) * tuple_bytes, *it, tuple_bytes);
  }
  return n;
}

// The fine-grained and snapshot designs' table: a std::list of blocks (the
// study's baseline kept its blocks in an STL list) whose links a mutex guards.
class LatchedLinks {
 public:
  LatchedLinks(uint32_t tuple_bytes, std::size_t block_bytes) : tuple_bytes_(tuple_bytes), block_bytes_(block_bytes) {}
  uint32_t tuple_bytes() const { return tuple_bytes_; }

  const char* insert(Cursor& cursor, const void* tuple) {
    return fill(cursor, tuple, tuple_bytes_, [&] { return append(); });
  }
  template <class Iterator>
  uint32_t scan(Iterator& it, char* out, uint32_t capacity) const {
    return scan_into(it, out, capacity, tuple_bytes_);
  }

 protected:
  // Makes a block outside the mutex and links it at the end under it.
  Block* append();

  const uint32_t tuple_bytes_;
  const std::size_t block_bytes_;
  std::list<std::unique_ptr<Block>> blocks_;
  mutable platform::Mutex links_;
};

class FineGrained final : public LatchedLinks {
 public:
  using Cursor = scan_designs::Cursor;
  using LatchedLinks::LatchedLinks;

  class Iterator {
   public:
    // The study's end() test, under the mutex at every call as the study's
    // was: at the end of a block it reads the list's last block, which
    // appends move. The end is live: blocks appended since begin() count.
    bool valid() {
      if (block_ == nullptr) return false;
      platform::MutexGuard g(table_->links_);
      if (slot_ < limit_) return true;
      limit_ = block_->published.load(platform::memory_order_acquire);
      settle();
      return slot_ < limit_;
    }
    // Within a block no latch; to the next block under the mutex.
    void next() {
      if (++slot_ < limit_) return;
      limit_ = block_->published.load(platform::memory_order_acquire);
      if (slot_ < limit_) return;
      platform::MutexGuard g(table_->links_);
      settle();
    }
    const char* operator*() const { return block_->slots + static_cast<std::size_t>(slot_) * table_->tuple_bytes_; }

   private:
    friend class FineGrained;
    explicit Iterator(const FineGrained* table) : table_(table) {}
    // Under the mutex: moves past blocks with no published slot at or after
    // slot_, up to the last block, where it stays (the live end).
    void settle();

    const FineGrained* table_;
    std::list<std::unique_ptr<Block>>::const_iterator at_;
    Block* block_ = nullptr;  // null: the list was empty at begin()
    uint32_t slot_ = 0;
    uint32_t limit_ = 0;
  };

  Iterator begin() const;
};

class Snapshot final : public LatchedLinks {
 public:
  using Cursor = scan_designs::Cursor;
  using LatchedLinks::LatchedLinks;

  class Iterator {
   public:
    bool valid() const { return at_ < copy_.size(); }
    void next() {
      if (++slot_ < copy_[at_].published) return;
      slot_ = 0;
      for (at_++; at_ < copy_.size() && copy_[at_].published == 0;) at_++;
    }
    const char* operator*() const { return copy_[at_].block->slots + static_cast<std::size_t>(slot_) * tuple_bytes_; }

   private:
    friend class Snapshot;
    struct Copied {
      const Block* block;
      uint32_t published;
    };
    explicit Iterator(uint32_t tuple_bytes) : tuple_bytes_(tuple_bytes) {}

    uint32_t tuple_bytes_;
    std::vector<Copied> copy_;  // the blocks with published slots at begin()
    std::size_t at_ = 0;
    uint32_t slot_ = 0;
  };

  Iterator begin() const;
};

class OrderedMap final {
 public:
  using Cursor = scan_designs::Cursor;

  OrderedMap(uint32_t tuple_bytes, std::size_t block_bytes) : tuple_bytes_(tuple_bytes), block_bytes_(block_bytes) {}
  ~OrderedMap();
  OrderedMap(const OrderedMap&) = delete;
  OrderedMap& operator=(const OrderedMap&) = delete;
  uint32_t tuple_bytes() const { return tuple_bytes_; }

  // Walks the blocks keyed 1 .. the last key when it began, each up to its
  // count as the walk reaches it (a gap in the keys ends the walk early:
  // the study's race, which the check would report as tuples lost).
  class Iterator {
   public:
    bool valid() const { return block_ != nullptr; }
    void next() {
      if (++slot_ < limit_) return;
      settle();
    }
    const char* operator*() const { return block_->slots + static_cast<std::size_t>(slot_) * table_->tuple_bytes_; }

   private:
    friend class OrderedMap;
    explicit Iterator(const OrderedMap* table) : table_(table) {}
    void settle();

    const OrderedMap* table_;
    uint64_t key_ = 0;
    uint64_t last_ = 0;  // the last key when the iterator began
    const Block* block_ = nullptr;
    uint32_t slot_ = 0;
    uint32_t limit_ = 0;
  };

  const char* insert(Cursor& cursor, const void* tuple) {
    return fill(cursor, tuple, tuple_bytes_, [&] { return append(cursor); });
  }
  Iterator begin() const;
  uint32_t scan(Iterator& it, char* out, uint32_t capacity) const { return scan_into(it, out, capacity, tuple_bytes_); }

 private:
  // The block list's blocks stand where the index keeps rows.
  static Row* as_row(Block* b) { return reinterpret_cast<Row*>(b); }
  static const Block* as_block(const Row* r) { return reinterpret_cast<const Block*>(r); }

  // The map's last key, 0 when it is empty.
  uint64_t last_key() const;
  // Keys a new block under the last key plus one (see the top of this file).
  Block* append(Cursor& cursor);

  const uint32_t tuple_bytes_;
  const std::size_t block_bytes_;
  OrderedIndex map_;
  // Each cursor's node arena, made on its first append.
  std::deque<Arena> arenas_;
  platform::Mutex arenas_latch_;
};

// The shape of check_concurrent's workload.
struct CheckShape {
  uint32_t inserters = 8;
  uint32_t scanners = 8;
  uint64_t loaded = 0;  // tuples one worker inserts before the threads start
  uint64_t each = 0;    // tuples each inserter inserts beside the scanners
};

// What check_concurrent saw: the first wrong answer (empty if none), and the
// scans it checked.
struct CheckResult {
  std::string error;
  uint64_t scans = 0;
};

// The study's correctness workload on `table` (empty, tuples of 8 bytes):
// `loaded` tuples first, then `inserters` threads insert `each` tuples apiece
// while `scanners` threads scan again and again until the inserts are done,
// then once more. Each tuple is a distinct value, so every scan checks that
// it read only values inserted, none twice, every loaded one, and of each
// inserter at least what it had published when the scan began; the last scans
// must see every tuple.
template <class Table>
CheckResult check_concurrent(Table& table, const CheckShape& shape) {
  using Value = uint64_t;
  const uint64_t total = shape.loaded + shape.inserters * shape.each;
  {
    typename Table::Cursor cursor;
    for (Value v = 0; v < shape.loaded; v++) table.insert(cursor, &v);
  }
  struct alignas(platform::kCacheLine) Progress {
    platform::Atomic<uint64_t> inserted{0};
  };
  std::vector<Progress> progress(shape.inserters);
  platform::Atomic<uint32_t> finished{0};
  platform::Atomic<bool> failed{false};
  std::vector<std::string> errors(shape.inserters + shape.scanners);
  std::vector<uint64_t> scans(shape.scanners, 0);

  platform::run_parallel(shape.inserters + shape.scanners, [&](uint32_t t) {
    if (t < shape.inserters) {
      typename Table::Cursor cursor;
      const Value base = shape.loaded + t * shape.each;
      for (uint64_t i = 0; i < shape.each && !failed.load(platform::memory_order_relaxed); i++) {
        const Value v = base + i;
        table.insert(cursor, &v);
        progress[t].inserted.store(i + 1, platform::memory_order_release);
      }
      finished.fetch_add(1, platform::memory_order_release);
      return;
    }
    const uint32_t s = t - shape.inserters;
    std::vector<uint8_t> seen(total);
    std::vector<Value> buffer(1024);
    std::vector<uint64_t> before(shape.inserters);
    std::vector<uint64_t> count(shape.inserters + 1);  // the loaded tuples, then each inserter's
    const auto fail = [&](const std::string& why) {
      errors[t] = "scan " + std::to_string(scans[s] + 1) + " of scanner " + std::to_string(s) + " " + why;
      failed.store(true, platform::memory_order_release);
    };
    for (bool last = false; !last && !failed.load(platform::memory_order_acquire); scans[s]++) {
      last = finished.load(platform::memory_order_acquire) == shape.inserters;
      for (uint32_t i = 0; i < shape.inserters; i++)
        before[i] = progress[i].inserted.load(platform::memory_order_acquire);
      std::fill(seen.begin(), seen.end(), 0);
      std::fill(count.begin(), count.end(), 0);
      auto it = table.begin();
      for (uint32_t got; (got = table.scan(it, reinterpret_cast<char*>(buffer.data()), 1024)) > 0;) {
        for (uint32_t k = 0; k < got; k++) {
          const Value v = buffer[k];
          if (v >= total) return fail("read " + std::to_string(v) + ", a value never inserted");
          if (seen[v]++ != 0) return fail("saw tuple " + std::to_string(v) + " twice");
          count[v < shape.loaded ? 0 : 1 + (v - shape.loaded) / shape.each]++;
        }
      }
      if (count[0] != shape.loaded) {
        return fail("saw " + std::to_string(count[0]) + " of the " + std::to_string(shape.loaded) + " tuples loaded");
      }
      for (uint32_t i = 0; i < shape.inserters; i++) {
        const uint64_t want = last ? shape.each : before[i];
        if (count[i + 1] < want) {
          return fail("saw " + std::to_string(count[i + 1]) + " tuples of inserter " + std::to_string(i) + ", " +
                      std::to_string(want) + (last ? " were inserted" : " were published before it began"));
        }
      }
    }
  });

  CheckResult r;
  for (const uint64_t n : scans) r.scans += n;
  for (const std::string& e : errors) {
    if (!e.empty()) {
      r.error = e;
      break;
    }
  }
  return r;
}

}  // namespace abyss::scan_designs
