#pragma once
// Hash index from a 64-bit key to a row (Abyss §3.2). Chained buckets; an
// insert pushes a node onto its bucket with one compare-and-swap and look-ups
// take no latch. Nodes are never unlinked during a run (a removed row stays
// indexed with its kDeleted flag), so readers need no memory reclamation. A
// re-inserted key shadows the old node: look-ups return the newest.
#include <bit>
#include <cstdint>
#include <new>
#include <vector>

#include "common/out_of_memory.h"
#include "platform/atomic.h"
#include "platform/touch.h"
#include "storage/row.h"

namespace abyss {

class HashIndex final {
 public:
  struct Node {
    uint64_t key;
    Row* row;
    Node* next;
  };

  // `table` names the owner in an out-of-memory message.
  explicit HashIndex(uint64_t expected_keys, const char* table = "") {
    const uint64_t n = buckets_for(expected_keys);
    bits_ = static_cast<uint32_t>(std::countr_zero(n));
    mask_ = n - 1;
    try {
      buckets_ = std::vector<platform::Atomic<Node*>>(n);
    } catch (const std::bad_alloc&) {
      throw OutOfMemory(n * sizeof(platform::Atomic<Node*>), "the hash index of table ", table);
    }
  }

  // The bucket head is an Atomic, seen by the platform through its load; the
  // nodes are plain memory, touched one by one as the probe reads them.
  Row* find(uint64_t key) const {
    for (Node* n = buckets_[slot(key)].load(platform::memory_order_acquire); n != nullptr; n = n->next) {
      platform::touch(n, sizeof(Node), platform::Access::Read);
      if (n->key == key) return n->row;
    }
    return nullptr;
  }

  // `node` is caller-owned memory (the worker's arena) that lives as long as
  // the index.
  void insert(uint64_t key, Row* row, Node* node) {
    platform::touch(node, sizeof(Node), platform::Access::Write);
    node->key = key;
    node->row = row;
    auto& head = buckets_[slot(key)];
    Node* old = head.load(platform::memory_order_relaxed);
    do {
      node->next = old;
    } while (!head.compare_exchange_weak(old, node, platform::memory_order_release, platform::memory_order_relaxed));
  }

  uint64_t buckets() const { return mask_ + 1; }

  // The bucket count for `expected_keys`: a power of two, at least 1,024 and
  // at least one bucket per expected key.
  static uint64_t buckets_for(uint64_t expected_keys) {
    uint64_t n = 1024;
    while (n < expected_keys) n <<= 1;
    return n;
  }
  // The bytes of the bucket array (memory-use estimates).
  static uint64_t bucket_bytes(uint64_t expected_keys) {
    return buckets_for(expected_keys) * sizeof(platform::Atomic<Node*>);
  }

 private:
  uint64_t slot(uint64_t key) const {
    // Fibonacci hashing: the top bits of the product spread sequential keys.
    return (key * 0x9e3779b97f4a7c15ULL) >> (64 - bits_);
  }

  uint64_t mask_;
  uint32_t bits_;
  std::vector<platform::Atomic<Node*>> buckets_;
};

}  // namespace abyss
