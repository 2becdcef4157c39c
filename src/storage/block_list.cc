#include "storage/block_list.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

#include "common/out_of_memory.h"
#include "platform/memory.h"

namespace abyss {
namespace {

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

BlockList::BlockList(uint32_t tuple_bytes, BlockListMode mode, std::size_t block_bytes, bool huge_pages)
    : tuple_bytes_(tuple_bytes),
      mode_(mode),
      block_bytes_(block_bytes),
      huge_pages_(huge_pages),
      slots_per_block_(slots_in(block_bytes, tuple_bytes)),
      tail_(&sentinel_) {}

BlockList::~BlockList() {
  Block* b = sentinel_.next.load(platform::memory_order_acquire);
  while (b != nullptr) {
    Block* next = b->next.load(platform::memory_order_acquire);
    const std::size_t bytes = b->bytes;
    const bool huge = b->huge;
    b->~Block();
    platform::unmap(b, bytes, huge);
    b = next;
  }
}

uint64_t BlockList::bytes_for(uint64_t tuples, uint64_t cursors, uint32_t tuple_bytes, std::size_t block_bytes) {
  const uint64_t slots = slots_in(block_bytes, tuple_bytes);
  const uint64_t blocks = (tuples + slots - 1) / slots + cursors;
  return blocks * platform::mapped_size(block_bytes, false);
}

bool BlockList::huge_block(std::size_t bytes, bool huge_pages) { return huge_pages && bytes >= platform::kHugePage; }

std::size_t BlockList::block_mapping(uint64_t block_tuples, uint32_t tuple_bytes, bool huge_pages) {
  const std::size_t bytes = header_bytes() + std::max<uint64_t>(block_tuples, 1) * tuple_bytes;
  return platform::mapped_size(bytes, huge_block(bytes, huge_pages));
}

const char* BlockList::insert(Cursor& cursor, const void* tuple) {
  // Terrier study, Background: the baseline holds one latch over the insert's
  // whole critical section, block allocation included.
  MaybeLatched g(*this);
  uint32_t slot = 0;
  char* to = next_slot(cursor, block_bytes_, slot);
  std::memcpy(to, tuple, tuple_bytes_);
  // Publishes the tuple: a reader that loads this count (acquire) sees its bytes whole.
  cursor.block->published.store(slot + 1, platform::memory_order_release);
  return to;
}

char* BlockList::next_slot(Cursor& cursor, std::size_t block_bytes, uint32_t& slot) {
  Block* b = cursor.block;
  // The cursor's owner is the only writer of its block's count: a relaxed
  // load reads its own last store.
  slot = b == nullptr ? 0 : b->published.load(platform::memory_order_relaxed);
  if (b == nullptr || slot == b->capacity) {
    b = cursor.block = claim_block(block_bytes);
    slot = 0;
  }
  return b->slots() + static_cast<std::size_t>(slot) * tuple_bytes_;
}

char* BlockList::claim(Cursor& cursor, uint64_t block_tuples) {
  MaybeLatched g(*this);
  uint32_t slot = 0;
  char* to = next_slot(cursor, block_mapping(block_tuples, tuple_bytes_, huge_pages_), slot);
  cursor.block->published.store(slot + 1, platform::memory_order_release);
  return to;
}

BlockList::Block* BlockList::claim_block(std::size_t bytes) {
  const bool huge = huge_block(bytes, huge_pages_);
  void* mem = platform::map_zeroed(bytes, huge);
  if (mem == nullptr) throw OutOfMemory(bytes, "a block of a block list");
  Block* b = new (mem) Block();
  b->bytes = platform::mapped_size(bytes, huge);
  b->huge = huge;
  // The slots asked for: claim() asks for its whole mapping.
  b->capacity = static_cast<uint32_t>(std::min<uint64_t>((bytes - header_bytes()) / tuple_bytes_, UINT32_MAX));
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

uint64_t BlockList::mapped_bytes() const {
  uint64_t n = 0;
  for (const Block* b = sentinel_.next.load(platform::memory_order_acquire); b != nullptr;
       b = b->next.load(platform::memory_order_acquire)) {
    n += b->bytes;
  }
  return n;
}

}  // namespace abyss
