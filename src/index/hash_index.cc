#include "index/hash_index.h"

#include <new>

#include "common/out_of_memory.h"

namespace abyss {

HashIndex::HashIndex(uint64_t expected_keys, StorageOptions options, const char* table)
    : huge_(options.huge_pages), bytes_(bucket_bytes(expected_keys, options)) {
  const uint64_t n = buckets_for(expected_keys, options.index);
  bits_ = static_cast<uint32_t>(std::countr_zero(n));
  mask_ = n - 1;
  void* memory = platform::map_zeroed(bytes_, huge_);
  if (memory == nullptr) throw OutOfMemory(bytes_, "the hash index of table ", table);
  // Every bucket constructed in place: empty slots, null heads.
  if (options.index == IndexKind::Flat) {
    flat_ = new (memory) Bucket[n]();
  } else {
    heads_ = new (memory) platform::Atomic<Node*>[n]();
  }
}

HashIndex::~HashIndex() {
  // Buckets and heads hold only atomics over plain words: nothing to destroy.
  platform::unmap(flat_ != nullptr ? static_cast<void*>(flat_) : static_cast<void*>(heads_), bytes_, huge_);
}

void HashIndex::insert(uint64_t key, Row* row, Arena& nodes) {
  if (flat_ != nullptr) {
    Bucket& b = flat_[slot(key)];
    platform::touch(&b, sizeof(Bucket), platform::Access::Write);
    uint32_t used = b.used.load(platform::memory_order_relaxed);
    while (used < kSlots) {
      if (b.used.compare_exchange_weak(used, used + 1, platform::memory_order_relaxed,
                                       platform::memory_order_relaxed)) {
        b.keys[used] = key;
        b.rows[used].store(row, platform::memory_order_release);
        return;
      }
    }
    // Full: the key goes to the overflow chain.
  }
  auto* node = static_cast<Node*>(nodes.allocate(sizeof(Node), 8));
  platform::touch(node, sizeof(Node), platform::Access::Write);
  node->key = key;
  node->row = row;
  push(flat_ != nullptr ? flat_[slot(key)].overflow : heads_[slot(key)], node);
}

uint64_t HashIndex::nodes() const {
  uint64_t n = 0;
  for (uint64_t b = 0; b <= mask_; b++) {
    const Node* head = flat_ != nullptr ? flat_[b].overflow.load(platform::memory_order_acquire)
                                        : heads_[b].load(platform::memory_order_acquire);
    for (; head != nullptr; head = head->next) n++;
  }
  return n;
}

void HashIndex::push(platform::Atomic<Node*>& head, Node* node) {
  Node* old = head.load(platform::memory_order_relaxed);
  do {
    node->next = old;
  } while (!head.compare_exchange_weak(old, node, platform::memory_order_release, platform::memory_order_relaxed));
}

uint64_t HashIndex::buckets_for(uint64_t expected_keys, IndexKind kind) {
  const uint64_t wanted = kind == IndexKind::Flat ? (expected_keys * 2 + 2) / 3 : expected_keys;
  uint64_t n = 1024;
  while (n < wanted && n < (uint64_t{1} << 62)) n <<= 1;
  return n;
}

uint64_t HashIndex::bucket_bytes(uint64_t expected_keys, StorageOptions options) {
  const uint64_t each = options.index == IndexKind::Flat ? sizeof(Bucket) : sizeof(platform::Atomic<Node*>);
  const uint64_t n = buckets_for(expected_keys, options.index);
  if (n > ~uint64_t{0} / each) return ~uint64_t{0};  // no machine holds it; the mapping is refused
  return platform::mapped_size(n * each, options.huge_pages);
}

}  // namespace abyss
