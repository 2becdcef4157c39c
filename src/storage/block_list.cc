#include "storage/block_list.h"

#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

#include "common/out_of_memory.h"
#include "platform/memory.h"

namespace abyss {
namespace {

// Blocks of 1 MiB stay on small pages: a huge page would hold two of them in
// one mapping, which a block list that maps block by block cannot share.
constexpr bool kHugePages = false;

uint32_t slots_in(std::size_t block_bytes, uint32_t tuple_bytes) {
  if (tuple_bytes == 0) throw std::invalid_argument("a block list's tuples need at least one byte");
  if (block_bytes < BlockList::header_bytes() + tuple_bytes) {
    throw std::invalid_argument("a block of " + std::to_string(block_bytes) + " bytes holds no tuple of " +
                                std::to_string(tuple_bytes) + " bytes after its " +
                                std::to_string(BlockList::header_bytes()) + "-byte header");
  }
  const std::size_t slots = (block_bytes - BlockList::header_bytes()) / tuple_bytes;
  if (slots > UINT32_MAX) throw std::invalid_argument("a block of more than 2^32 slots");
  return static_cast<uint32_t>(slots);
}

}  // namespace

BlockList::BlockList(uint32_t tuple_bytes, BlockListMode mode, std::size_t block_bytes)
    : tuple_bytes_(tuple_bytes),
      mode_(mode),
      block_bytes_(block_bytes),
      slots_per_block_(slots_in(block_bytes, tuple_bytes)),
      tail_(&sentinel_) {}

BlockList::~BlockList() {
  Block* b = sentinel_.next.load(platform::memory_order_acquire);
  while (b != nullptr) {
    Block* next = b->next.load(platform::memory_order_acquire);
    b->~Block();
    platform::unmap(b, block_bytes_, kHugePages);
    b = next;
  }
}

uint64_t BlockList::bytes_for(uint64_t tuples, uint64_t cursors, uint32_t tuple_bytes, std::size_t block_bytes) {
  const uint64_t slots = slots_in(block_bytes, tuple_bytes);
  const uint64_t blocks = (tuples + slots - 1) / slots + cursors;
  return blocks * platform::mapped_size(block_bytes, kHugePages);
}

const char* BlockList::insert(Cursor& cursor, const void* tuple) {
  // Terrier study, Background: the baseline holds one latch over the insert's
  // whole critical section, block allocation included.
  MaybeLatched g(*this);
  return insert_unlatched(cursor, tuple);
}

const char* BlockList::insert_unlatched(Cursor& cursor, const void* tuple) {
  Block* b = cursor.block;
  // The cursor's owner is the only writer of its block's count: a relaxed
  // load reads its own last store.
  uint32_t slot = b == nullptr ? slots_per_block_ : b->published.load(platform::memory_order_relaxed);
  if (slot == slots_per_block_) {
    b = cursor.block = claim_block();
    slot = 0;
  }
  char* to = b->slots() + static_cast<std::size_t>(slot) * tuple_bytes_;
  std::memcpy(to, tuple, tuple_bytes_);
  // Publishes the tuple: a reader that loads this count (acquire) sees its bytes whole.
  b->published.store(slot + 1, platform::memory_order_release);
  return to;
}

BlockList::Block* BlockList::claim_block() {
  void* mem = platform::map_zeroed(block_bytes_, kHugePages);
  if (mem == nullptr) throw OutOfMemory(block_bytes_, "a block of a block list");
  Block* b = new (mem) Block();
  append(b);
  return b;
}

void BlockList::append(Block* block) {
  // Terrier study, "Lock-free list": swing the last block's null `next` to
  // the new block; a failed swap has found a newer last block, from which
  // the next try starts.
  Block* last = tail_.load(platform::memory_order_acquire);
  for (;;) {
    Block* next = last->next.load(platform::memory_order_acquire);
    if (next != nullptr) {
      last = next;
      continue;
    }
    block->seq = last->seq + 1;
    if (last->next.compare_exchange_weak(next, block, platform::memory_order_release, platform::memory_order_acquire)) {
      break;
    }
    if (next != nullptr) last = next;
  }
  // Moves the hint forward, never back: two appenders that finish out of
  // order would otherwise leave it on the older block.
  Block* hint = tail_.load(platform::memory_order_acquire);
  while (hint->seq < block->seq &&
         !tail_.compare_exchange_weak(hint, block, platform::memory_order_release, platform::memory_order_acquire)) {
  }
}

BlockList::Block* BlockList::last_block() const {
  Block* last = tail_.load(platform::memory_order_acquire);
  while (Block* next = last->next.load(platform::memory_order_acquire)) last = next;
  return last;
}

BlockList::Iterator BlockList::begin() const {
  MaybeLatched g(*this);
  // Starts on the sentinel, which holds no slot: settle() moves to the first
  // published tuple, or to the end.
  Iterator it(this, &sentinel_, last_block());
  it.settle();
  return it;
}

uint32_t BlockList::scan(Iterator& it, char* out, uint32_t capacity) const {
  uint32_t n = 0;
  for (; n < capacity && it.valid(); it.next()) {
    std::memcpy(out + static_cast<std::size_t>(n) * tuple_bytes_, *it, tuple_bytes_);
    n++;
  }
  return n;
}

uint64_t BlockList::block_count() const { return last_block()->seq; }

}  // namespace abyss
