#include "bench/scan_designs.h"

#include <cstdint>
#include <limits>
#include <memory>

#include "common/out_of_memory.h"
#include "platform/memory.h"

namespace abyss::scan_designs {

Block::Block(uint32_t tuple_bytes, std::size_t block_bytes)
    : capacity(static_cast<uint32_t>((block_bytes - sizeof(Block)) / tuple_bytes)),
      bytes(static_cast<std::size_t>(capacity) * tuple_bytes),
      slots(static_cast<char*>(platform::map_zeroed(bytes, false))) {
  if (slots == nullptr) throw OutOfMemory(bytes, "a block of the scan bench");
}

Block::~Block() { platform::unmap(slots, bytes, false); }

Block* LatchedLinks::append() {
  auto block = std::make_unique<Block>(tuple_bytes_, block_bytes_);
  Block* b = block.get();
  platform::MutexGuard g(links_);
  blocks_.push_back(std::move(block));
  return b;
}

FineGrained::Iterator FineGrained::begin() const {
  Iterator it(this);
  platform::MutexGuard g(links_);
  if (blocks_.empty()) return it;
  it.at_ = blocks_.begin();
  it.block_ = it.at_->get();
  it.limit_ = it.block_->published.load(platform::memory_order_acquire);
  it.settle();
  return it;
}

void FineGrained::Iterator::settle() {
  while (slot_ >= limit_ && block_ != table_->blocks_.back().get()) {
    ++at_;
    block_ = at_->get();
    slot_ = 0;
    limit_ = block_->published.load(platform::memory_order_acquire);
  }
}

Snapshot::Iterator Snapshot::begin() const {
  Iterator it(tuple_bytes_);
  platform::MutexGuard g(links_);
  it.copy_.reserve(blocks_.size());
  for (const auto& b : blocks_) {
    const uint32_t published = b->published.load(platform::memory_order_acquire);
    if (published > 0) it.copy_.push_back({b.get(), published});
  }
  return it;
}

OrderedMap::~OrderedMap() {
  map_.scan(0, std::numeric_limits<uint64_t>::max(), std::numeric_limits<std::size_t>::max(),
            [](uint64_t /*key*/, Row* row) {
              delete reinterpret_cast<Block*>(row);
              return true;
            });
}

uint64_t OrderedMap::last_key() const {
  uint64_t last = 0;
  map_.scan_reverse(0, std::numeric_limits<uint64_t>::max(), 1, [&](uint64_t key, Row* /*row*/) {
    last = key;
    return false;
  });
  return last;
}

Block* OrderedMap::append(Cursor& cursor) {
  if (cursor.nodes == nullptr) {
    platform::MutexGuard g(arenas_latch_);
    cursor.nodes = &arenas_.emplace_back(std::size_t{64} << 10, "the scan bench's ordered map");
  }
  auto block = std::make_unique<Block>(tuple_bytes_, block_bytes_);
  // The key comes from the map, not from a counter beside it: k + 1 is
  // claimed by the insert itself, and only once k is present.
  while (!map_.insert(last_key() + 1, as_row(block.get()), *cursor.nodes)) {
  }
  return block.release();
}

OrderedMap::Iterator OrderedMap::begin() const {
  Iterator it(this);
  it.last_ = last_key();
  it.settle();
  return it;
}

void OrderedMap::Iterator::settle() {
  for (;;) {
    if (block_ != nullptr) {
      limit_ = block_->published.load(platform::memory_order_acquire);
      if (slot_ < limit_) return;
    }
    if (key_ == last_) {
      block_ = nullptr;
      return;
    }
    block_ = as_block(table_->map_.find(++key_));
    slot_ = 0;
    if (block_ == nullptr) return;  // a gap below the last key: the walk ends
  }
}

}  // namespace abyss::scan_designs
