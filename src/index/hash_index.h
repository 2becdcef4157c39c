#pragma once
// Hash index from a 64-bit key to a row (Abyss §3.2), in one of two layouts
// (common/storage_options.h):
//   flat     one cache line per bucket holding up to kSlots keys and row
//            pointers, then a chain of overflow nodes: a probe reads one line.
//   chained  a bucket array of list heads and a node per key: a probe reads
//            the head, then the nodes (DBx1000's layout).
// Inserts take no latch (a compare-and-swap claims a slot or pushes a node),
// and look-ups take none. Entries are never removed during a run (a removed
// row stays indexed with its kDeleted flag), so readers need no memory
// reclamation. A re-inserted key shadows the old entry: look-ups return the
// newest.
#include <algorithm>
#include <bit>
#include <cstdint>

#include "common/arena.h"
#include "common/storage_options.h"
#include "common/types.h"
#include "platform/atomic.h"
#include "platform/memory.h"
#include "platform/touch.h"

namespace abyss {

class HashIndex final {
 public:
  struct Node {
    uint64_t key;
    Row* row;
    Node* next;
  };

  static constexpr uint32_t kSlots = 3;
  // A flat bucket. A slot is claimed by incrementing `used`, its key written,
  // then its row pointer published (release): a reader that sees the pointer
  // sees the key. Slots fill in order, and a full bucket's later keys go to
  // the overflow chain, newest first: so newest first is chain, then slots
  // from the last.
  struct alignas(64) Bucket {
    platform::Atomic<uint32_t> used;
    uint32_t unused;
    uint64_t keys[kSlots];
    platform::Atomic<Row*> rows[kSlots];
    platform::Atomic<Node*> overflow;
  };
  static_assert(sizeof(Bucket) == 64);

  // `table` names the owner in an out-of-memory message.
  HashIndex(uint64_t expected_keys, StorageOptions options, const char* table);
  ~HashIndex();
  HashIndex(const HashIndex&) = delete;
  HashIndex& operator=(const HashIndex&) = delete;

  // Bucket contents are seen by the platform through touch() and the atomics'
  // loads; chain nodes are touched one by one as the probe reads them.
  Row* find(uint64_t key) const {
    if (flat_ != nullptr) return find_flat(flat_[slot(key)], key);
    return find_chain(heads_[slot(key)].load(platform::memory_order_acquire), key);
  }

  // Starts fetching the line a probe of `key` reads first.
  void prefetch(uint64_t key) const {
    const void* line =
        flat_ != nullptr ? static_cast<const void*>(&flat_[slot(key)]) : static_cast<const void*>(&heads_[slot(key)]);
    platform::prefetch(line);
  }

  // Indexes `row` under `key`; a node, when one is needed, comes from `nodes`,
  // which must live as long as the index.
  void insert(uint64_t key, Row* row, Arena& nodes);

  uint64_t buckets() const { return mask_ + 1; }
  // The bucket array's bytes, as mapped.
  uint64_t bucket_bytes() const { return bytes_; }
  // The nodes the index links (a walk of every bucket: for tests and reports).
  uint64_t nodes() const;
  IndexKind kind() const { return flat_ != nullptr ? IndexKind::Flat : IndexKind::Chained; }

  // The bucket count for `expected_keys`: a power of two, at least 1,024;
  // chained, at least one per key; flat, at least one per 1.5 keys (three
  // slots a bucket leave few keys to the overflow chains).
  static uint64_t buckets_for(uint64_t expected_keys, IndexKind kind);
  // The bytes of the bucket array, as mapped (memory-use estimates).
  static uint64_t bucket_bytes(uint64_t expected_keys, StorageOptions options);
  // An upper bound on the node bytes `keys` inserts take from their arenas.
  static uint64_t node_bytes(uint64_t keys, IndexKind kind) {
    // Flat: only overflow takes nodes, a few percent of keys at 1.5 keys a
    // bucket; a quarter bounds it.
    return (kind == IndexKind::Flat ? keys / 4 : keys) * sizeof(Node);
  }

 private:
  static Row* find_chain(const Node* n, uint64_t key) {
    for (; n != nullptr; n = n->next) {
      platform::touch(n, sizeof(Node), platform::Access::Read);
      if (n->key == key) return n->row;
    }
    return nullptr;
  }

  static Row* find_flat(const Bucket& b, uint64_t key) {
    platform::touch(&b, sizeof(Bucket), platform::Access::Read);
    const uint32_t used = b.used.load(platform::memory_order_acquire);
    if (used == kSlots) {
      if (Row* r = find_chain(b.overflow.load(platform::memory_order_acquire), key)) return r;
    }
    for (uint32_t i = used; i-- > 0;) {
      Row* r = b.rows[i].load(platform::memory_order_acquire);
      if (r != nullptr && b.keys[i] == key) return r;  // null: claimed, not yet published
    }
    return nullptr;
  }

  static void push(platform::Atomic<Node*>& head, Node* node);

 public:
  // Visits every entry, visit(key, row), in no order; an entry inserted
  // meanwhile may or may not be visited. A key inserted twice is visited
  // twice (the newer entry shadows the older for find()).
  template <class Visit>
  void for_each(Visit&& visit) const {
    const uint64_t buckets = mask_ + 1;
    for (uint64_t b = 0; b < buckets; b++) {
      const Node* chain = nullptr;
      if (flat_ != nullptr) {
        const Bucket& bucket = flat_[b];
        const uint32_t used = std::min(bucket.used.load(platform::memory_order_acquire), kSlots);
        for (uint32_t i = 0; i < used; i++) {
          if (Row* r = bucket.rows[i].load(platform::memory_order_acquire)) visit(bucket.keys[i], r);
        }
        chain = bucket.overflow.load(platform::memory_order_acquire);
      } else {
        chain = heads_[b].load(platform::memory_order_acquire);
      }
      for (; chain != nullptr; chain = chain->next) visit(chain->key, chain->row);
    }
  }

 private:
  uint64_t slot(uint64_t key) const {
    // Fibonacci hashing: the top bits of the product spread sequential keys.
    return (key * 0x9e3779b97f4a7c15ULL) >> (64 - bits_);
  }

  uint64_t mask_;
  uint32_t bits_;
  bool huge_;
  std::size_t bytes_;
  Bucket* flat_ = nullptr;                    // flat layout
  platform::Atomic<Node*>* heads_ = nullptr;  // chained layout
};

}  // namespace abyss
