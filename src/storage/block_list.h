#pragma once
// A table's tuple storage as a singly linked list of fixed-size blocks, the
// data table of the Terrier study (concurrent sequential scans in Terrier,
// Background and "Lock-free list"): tuples of one fixed size, blocks of
// 1 MiB, no deletion. Order among tuples does not matter, so each inserting
// worker fills a block of its own (its Cursor) and inserts share nothing but
// the rare append of a block. Two modes, chosen at construction, so
// `abyss bench scan` can set them side by side:
//
//   LatchFree  appending a block is one compare-and-swap on the last block's
//              `next` (Terrier study, "Lock-free list"); iterators and scans
//              take no latch at all (Terrier study, "Lock free iterator
//              functions").
//   Latched    the coarse-latched baseline the study started from (Terrier
//              study, Background): one global spin latch held for a whole
//              insert, including any block append, and taken by the
//              iterator's end test and by its advance, once each per tuple.
//
// What a concurrent reader sees. Each block counts its published slots; the
// owner writes a tuple, then stores the count with release, and a reader loads
// the count with acquire before it reads slots below it, so no reader sees a
// torn tuple. An iterator fixes its end block when it begins (the list's tail
// then) and visits no block appended later: a scan need not see the newest
// tuples (Terrier study, Results, "Duplicating data table"). That fixed end also
// makes what a scan sees prefix-closed per inserter: a worker appends its next
// block only once its current one is full, so every block of an inserter that
// lies before the scan's end block but is not its last one there was full
// before the scan began. (The study left its lock-free list unfinished; the
// per-worker blocks, published counts and fixed end are this list's own.)
//
// Engine tables (storage/table.h) keep their rows here too, through claim():
// a zeroed slot, published at once, that the caller fills in place and makes
// visible by its own means (a row's header says when it is live). Their
// blocks vary in size (a loader's block may hold a whole table, on huge
// pages; a worker's insert block holds a few thousand rows), so each block
// records its own capacity and mapping.
#include <cstddef>
#include <cstdint>

#include "platform/atomic.h"
#include "platform/latch.h"

namespace abyss {

enum class BlockListMode : uint8_t { LatchFree, Latched };

class BlockList final {
 public:
  // Terrier study, Background: each block is 1 MB.
  static constexpr std::size_t kDefaultBlockBytes = std::size_t{1} << 20;

  // A block's header, at the start of its mapping; the slots follow it.
  struct alignas(platform::kCacheLine) Block {
    // The next block, null at the tail: set once, by the compare-and-swap
    // that appends the next block (release), read with acquire.
    platform::Atomic<Block*> next{nullptr};
    // Slots [0, published) hold whole tuples. Only the block's owner stores
    // it (release, after the tuple's bytes); readers load it with acquire.
    platform::Atomic<uint32_t> published{0};
    // Its slots, and the bytes mapped for it (on huge pages when `huge`).
    // Like `seq`, written before the block is linked.
    uint32_t capacity = 0;
    bool huge = false;
    std::size_t bytes = 0;
    // Position in the list, from 1 (the sentinel is 0). Written before the
    // block is linked, so whoever reaches the block through an acquire load
    // of a link reads it safely; the tail hint only moves to a higher one.
    uint64_t seq = 0;

    char* slots() { return reinterpret_cast<char*>(this) + sizeof(Block); }
  };

  // The bytes of a block's header, before its slots.
  static constexpr std::size_t header_bytes() { return sizeof(Block); }

  class Iterator;

  // A worker's insert position: the block it fills alone, null before its
  // first insert. One per worker; a cursor is never shared.
  struct Cursor {
    Block* block = nullptr;
  };

  // Throws std::invalid_argument when a block of `block_bytes` cannot hold
  // one tuple of `tuple_bytes` (or either is zero). With `huge_pages`, a
  // block of a huge page or more is mapped on huge pages (see block_mapping).
  BlockList(uint32_t tuple_bytes, BlockListMode mode, std::size_t block_bytes = kDefaultBlockBytes,
            bool huge_pages = false);
  ~BlockList();
  BlockList(const BlockList&) = delete;
  BlockList& operator=(const BlockList&) = delete;

  uint32_t tuple_bytes() const { return tuple_bytes_; }
  // The slots of a block of block_bytes() (insert's blocks).
  uint32_t slots_per_block() const { return slots_per_block_; }
  std::size_t block_bytes() const { return block_bytes_; }
  BlockListMode mode() const { return mode_; }

  // Copies `tuple` (tuple_bytes() bytes) into the next slot of the cursor's
  // block, appending a new block for the cursor when it has none or it is
  // full, and answers where the tuple now lives. Throws OutOfMemory when the
  // system refuses a block. Safe beside any number of inserts through other
  // cursors and any number of iterators.
  const char* insert(Cursor& cursor, const void* tuple);

  // A zeroed slot in the cursor's block, published at once: the caller
  // fills it in place, and readers must learn from the tuple itself whether
  // it is whole (a table's rows carry a live flag). A cursor with no room
  // left gets a new block of at least `block_tuples` slots, as many as its
  // mapping holds (block_mapping). Same concurrency and errors as insert().
  char* claim(Cursor& cursor, uint64_t block_tuples);

  // An iterator at the first published tuple, whose end block is the list's
  // tail now (see the top of this file).
  Iterator begin() const;

  // The Terrier study's Scan(): copies tuples from `it` on into `out`, which
  // has room for `capacity` of them, and advances `it` past them. Answers how
  // many it copied: fewer than `capacity` only when `it` reached its end.
  // Like the study's, it tests the end and advances once per tuple, so the
  // Latched mode takes the latch twice a tuple.
  uint32_t scan(Iterator& it, char* out, uint32_t capacity) const;

  // Blocks appended so far. Exact when no insert runs.
  uint64_t block_count() const;

  // The bytes mapped for the blocks appended so far. Exact when no insert runs.
  uint64_t mapped_bytes() const;

  // The bytes a block of at least `block_tuples` tuples maps: its header and
  // slots, rounded up to whole pages, or to whole huge pages when
  // `huge_pages` is on and they come to a huge page or more.
  static std::size_t block_mapping(uint64_t block_tuples, uint32_t tuple_bytes, bool huge_pages);
  // Whether a block of `bytes` is mapped on huge pages.
  static bool huge_block(std::size_t bytes, bool huge_pages);

  // The most bytes mapped for `tuples` tuples inserted through `cursors`
  // cursors (each cursor's last block may be part full): what a caller
  // checks against the machine's memory before it starts.
  static uint64_t bytes_for(uint64_t tuples, uint64_t cursors, uint32_t tuple_bytes,
                            std::size_t block_bytes = kDefaultBlockBytes);

 private:
  // Holds the list's latch for a scope in the Latched mode; nothing in the
  // LatchFree mode.
  class MaybeLatched {
   public:
    explicit MaybeLatched(const BlockList& list)
        : latch_(list.mode_ == BlockListMode::Latched ? &list.latch_ : nullptr) {
      if (latch_ != nullptr) latch_->lock();
    }
    ~MaybeLatched() {
      if (latch_ != nullptr) latch_->unlock();
    }
    MaybeLatched(const MaybeLatched&) = delete;
    MaybeLatched& operator=(const MaybeLatched&) = delete;

   private:
    platform::SpinLatch* latch_;
  };

  // The next slot of the cursor's block (a new block of `block_bytes` when
  // it has none or is full), and its number there; nothing is published.
  char* next_slot(Cursor& cursor, std::size_t block_bytes, uint32_t& slot);
  Block* claim_block(std::size_t bytes);
  void append(Block* block);
  // The last block linked now (the sentinel when the list is empty).
  Block* last_block() const;

  const uint32_t tuple_bytes_;
  const BlockListMode mode_;
  const std::size_t block_bytes_;
  const bool huge_pages_;
  const uint32_t slots_per_block_;
  // Holds no slots: the first block hangs off its `next`, so an append to an
  // empty list is the same compare-and-swap as any other.
  mutable Block sentinel_;
  // A block at or near the tail, where appends start looking for it: moved
  // forward only (by `seq`) with a compare-and-swap after each append, so it
  // may lag the tail by the appends under way (Terrier study, "Lock-free
  // list": last_node_).
  alignas(platform::kCacheLine) platform::Atomic<Block*> tail_;
  // The Latched mode's one latch: the study's baseline used spin latches.
  alignas(platform::kCacheLine) mutable platform::SpinLatch latch_;
};

// A position in the list: a block, a slot of it, and how many of its slots
// were published when last looked at. Walks the blocks up to the end block
// fixed by begin(); in the Latched mode each valid() and next() holds the
// list's latch (the study's baseline end() and operator++).
class BlockList::Iterator {
 public:
  bool valid() const {
    MaybeLatched g(*list_);
    return block_ != nullptr;
  }

  void next() {
    MaybeLatched g(*list_);
    if (++slot_ < limit_) return;
    settle();
  }

  // The tuple at this position; only while valid().
  const char* operator*() const { return block_->slots() + static_cast<std::size_t>(slot_) * list_->tuple_bytes_; }

 private:
  friend class BlockList;
  Iterator(const BlockList* list, Block* first, Block* last) : list_(list), block_(first), last_(last) {}

  // Moves on once slot_ has reached limit_: re-reads this block's count (its
  // owner may have published more since), then follows `next`, until a
  // published slot is found or the end block holds no more.
  void settle() {
    for (;;) {
      limit_ = block_->published.load(platform::memory_order_acquire);
      if (slot_ < limit_) return;
      if (block_ == last_) {
        block_ = nullptr;
        return;
      }
      block_ = block_->next.load(platform::memory_order_acquire);
      slot_ = 0;
    }
  }

  const BlockList* list_;
  Block* block_;  // null once at the end
  Block* last_;   // the end block, fixed by begin()
  uint32_t slot_ = 0;
  uint32_t limit_ = 0;
};

}  // namespace abyss
