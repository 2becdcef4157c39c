#pragma once
// Ordered index from a 64-bit key to a row: a B+-tree synchronized by
// optimistic lock coupling (Leis, Scheibner, Kemper, Neumann, "The ART of
// practical synchronization", DaMoN 2016, "Optimistic Lock Coupling"), whose
// nodes carry a version word as Silo's and Masstree's do, so that a scan can
// later check that no leaf it read has changed (Silo §4.6, node-set
// validation against phantoms). Not yet used by tables or transactions.
//
// A node's version word is even while the node is unlocked and odd while a
// writer holds it; a writer locks it by a compare-and-swap from the version it
// read to that version plus one, and unlocks it by adding one more, so every
// change of a node moves its version by two. A reader writes no shared memory:
// it reads a node's version (waiting while it is locked), reads the node, and
// reads the version again; if it moved, what it read may be torn, and the
// operation starts over from the root. Descending, a reader checks a parent's
// version before it follows the child pointer it read, and again after it has
// read the child's version, so a child split between the two is seen.
//
// Node words that a reader may load while a writer stores them are Atomics:
// loads acquire and stores release, the seqlock's order without standalone
// fences (platform/shared_copy.h): a reader that loaded any word a writer
// stored sees that writer's lock, or a later version, when it reads the
// version again. Each node a reader or writer visits is also named by
// platform::touch, as the hash index names its buckets, so a simulated
// machine sees the traffic.
//
// Writers split eagerly on the way down (Leis et al.'s B-tree): a full inner
// node is split before the insert descends through it, so a leaf's split
// always finds room in its parent, and a split locks only the node and its
// parent. Nodes are never freed during a run and never merged: remove() takes
// the entry out of its leaf and leaves an underfull, possibly empty, leaf in
// place. So a leaf's range of keys only shrinks, and only from above (a split
// moves its upper half to a new right sibling); its lower bound is fixed for
// the index's life. Scans rely on that.
//
// Leaves are linked left to right. A forward scan follows the links; a
// reverse scan descends again from the root for each leaf, to the key just
// below the leaf's lower bound (the separator to its left, read on the way
// down), so a leaf keeps no pointer to its left sibling.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "common/arena.h"
#include "common/types.h"
#include "platform/atomic.h"
#include "platform/touch.h"

namespace abyss {

class OrderedIndex final {
 public:
  // Entries a leaf holds, and separator keys an inner node holds (it has one
  // child more): either node is 504 bytes of words, eight cache lines aligned.
  static constexpr uint32_t kLeafSlots = 30;
  static constexpr uint32_t kInnerKeys = 30;

  struct Node {
    platform::Atomic<uint64_t> version;  // odd while locked; +2 per change
    platform::Atomic<uint32_t> count;    // entries (leaf) or separator keys (inner)
    bool leaf;                           // set before the node is published, never changed
  };

  // Entries sorted by key; `next` is the leaf to the right (null at the end).
  struct alignas(platform::kCacheLine) Leaf : Node {
    platform::Atomic<Leaf*> next;
    platform::Atomic<uint64_t> keys[kLeafSlots];
    platform::Atomic<Row*> rows[kLeafSlots];
  };

  // children[i] holds the keys k with keys[i-1] < k <= keys[i] (no bound
  // below for i = 0, none above for i = count).
  struct alignas(platform::kCacheLine) Inner : Node {
    platform::Atomic<uint64_t> keys[kInnerKeys];
    platform::Atomic<Node*> children[kInnerKeys + 1];
  };
  static_assert(sizeof(Leaf) == 512 && sizeof(Inner) == 512, "a node is eight cache lines");

  // An observer that ignores the leaves a scan reads.
  struct NoObserver {
    void operator()(const void* /*leaf*/, uint64_t /*version*/) const {}
  };

  // The tree starts empty; its first insert allocates the root.
  OrderedIndex() = default;
  OrderedIndex(const OrderedIndex&) = delete;
  OrderedIndex& operator=(const OrderedIndex&) = delete;

  // The row indexed under `key`, or null.
  Row* find(uint64_t key) const;

  // Indexes `row` under `key`, unless `key` is indexed already: then it
  // answers false, having changed nothing, or with `replace`, having made the
  // entry point to `row`. Nodes come from `nodes`, which must live as long as
  // the index (an arena per worker). A node allocated for a split that a
  // concurrent writer made first stays unused in the arena.
  bool insert(uint64_t key, Row* row, Arena& nodes, bool replace = false);

  // Takes `key`'s entry out of its leaf; false if there was none. Leaves are
  // not merged: an emptied leaf stays linked and keeps its range of keys.
  bool remove(uint64_t key);

  // Calls visit(key, row) for the entries with lo <= key <= hi in ascending
  // key order, at most `limit` of them, until visit answers false. Calls
  // observe(leaf, version) for each leaf whose entries it used, with the
  // version it read them at, before visiting them: the scan saw no insert or
  // remove in the leaf's part of the range as long as version_of(leaf) still
  // equals that version. A concurrent change to a leaf being read makes the
  // scan descend again to the key after the last one it visited: it visits no
  // key twice, and visits every key present in the range throughout the scan.
  template <class Visit, class Observe = NoObserver>
  void scan(uint64_t lo, uint64_t hi, std::size_t limit, Visit&& visit, Observe&& observe = Observe{}) const;

  // scan() in descending key order, with the same guarantees.
  template <class Visit, class Observe = NoObserver>
  void scan_reverse(uint64_t lo, uint64_t hi, std::size_t limit, Visit&& visit, Observe&& observe = Observe{}) const;

  // A leaf's current version, to compare with the one a scan reported: odd
  // (never equal) while a writer holds the leaf.
  static uint64_t version_of(const void* leaf) {
    return static_cast<const Leaf*>(leaf)->version.load(platform::memory_order_acquire);
  }

  // Levels from the root to the leaves (0 when empty), along the leftmost
  // path: for tests and reports, with no writer running.
  uint32_t height() const;
  // The nodes reachable from the root (a walk: for tests and memory reports,
  // with no writer running). Nodes a lost split race left in an arena are
  // not counted.
  uint64_t nodes() const;

 private:
  static constexpr uint64_t kLocked = 1;

  // The entries of one leaf that a scan will visit, copied out before the
  // leaf's version is checked.
  struct Batch {
    uint32_t n = 0;
    bool beyond = false;  // the leaf holds a key past the scanned range's far end
    uint64_t keys[kLeafSlots];
    Row* rows[kLeafSlots];
  };

  // The lower bound of a leaf's keys, as its descent found it: the leaf holds
  // only keys greater than `key`; none when the leaf is the leftmost.
  struct LowerFence {
    bool bounded = false;
    uint64_t key = 0;
  };

  // Nodes an insert allocated ahead of a split and has not used yet:
  // allocation can throw, so it is never done while a node is locked. A split
  // takes a leaf or inner[0] for its new right half and inner[1] for a new root.
  struct Spares {
    Leaf* leaf = nullptr;
    Inner* inner[2] = {nullptr, nullptr};
  };

  // The version of `node` once no writer holds it (a waiting point while one does).
  static uint64_t stable_version(const Node& node);
  static bool unchanged(const Node& node, uint64_t version) {
    return node.version.load(platform::memory_order_acquire) == version;
  }
  static bool try_lock(Node& node, uint64_t version) {
    uint64_t expected = version;
    return node.version.compare_exchange_strong(expected, version | kLocked, platform::memory_order_acquire,
                                                platform::memory_order_relaxed);
  }
  // Unlocks a node this writer changed: the version moves on.
  static void unlock(Node& node) { node.version.fetch_add(1, platform::memory_order_release); }
  // Unlocks a node this writer locked and left as it was: the version is restored.
  static void unlock_unchanged(Node& node, uint64_t version) {
    node.version.store(version, platform::memory_order_release);
  }

  static uint32_t count_of(const Node& node, uint32_t capacity) {
    return std::min(node.count.load(platform::memory_order_acquire), capacity);  // a torn read stays in bounds
  }
  // The first of keys[0, n) not less than `key` (n if none).
  static uint32_t lower_bound(const platform::Atomic<uint64_t>* keys, uint32_t n, uint64_t key) {
    uint32_t lo = 0;
    uint32_t hi = n;
    while (lo < hi) {
      const uint32_t mid = (lo + hi) / 2;
      if (keys[mid].load(platform::memory_order_acquire) < key) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  // The leaf whose range holds `key`, with the version its contents must
  // still have (null when the tree is empty); its lower bound into `fence`.
  const Leaf* leaf_for(uint64_t key, uint64_t& version, LowerFence* fence) const;

  // Copies the entries of `leaf` with from <= key <= to into `batch`
  // (ascending) and its next pointer into `next`; false if the leaf moved off
  // `version` meanwhile, and the copy must be thrown away.
  static bool read_forward(const Leaf& leaf, uint64_t version, uint64_t from, uint64_t to, Batch& batch,
                           const Leaf*& next);
  // Copies the entries of `leaf` with from <= key <= to into `batch`
  // (ascending; a reverse scan visits them from the end); `beyond` when the
  // leaf holds a key below `from`. False if the leaf moved off `version`.
  static bool read_backward(const Leaf& leaf, uint64_t version, uint64_t from, uint64_t to, Batch& batch);

  // The spare leaf, or spares.inner[which], allocated from `nodes` if missing.
  static Leaf* spare_leaf(Spares& spares, Arena& nodes);
  static Inner* spare_inner(Spares& spares, uint32_t which, Arena& nodes);
  // Splits a full, locked leaf: its upper half moves to `right`, linked after
  // it; `separator` is the greatest key left behind.
  static void split_leaf(Leaf& leaf, Leaf& right, uint64_t& separator);
  // Splits a full, locked inner node: its upper keys and children move to
  // `right`, and its middle key, which neither keeps, into `separator`.
  static void split_inner(Inner& inner, Inner& right, uint64_t& separator);
  // Adds `right`, split off a child of the locked, not full `parent`, after
  // that child.
  static void insert_child(Inner& parent, uint64_t separator, Node* right);
  // Puts `row` under `key` at `pos` of a locked leaf with room.
  static void insert_at(Leaf& leaf, uint32_t pos, uint64_t key, Row* row);
  // The locked root `left` has split into itself and `right`: a new root above
  // them. Set before `left` is unlocked, so a reader that reads the old root's
  // version after the split also sees it is no longer the root.
  void grow(Node* left, uint64_t separator, Node* right, Inner& root);

  platform::Atomic<Node*> root_;
};

template <class Visit, class Observe>
void OrderedIndex::scan(uint64_t lo, uint64_t hi, std::size_t limit, Visit&& visit, Observe&& observe) const {
  if (lo > hi || limit == 0) return;
  uint64_t from = lo;  // every key below it has been visited or was absent
  std::size_t visited = 0;
  Batch batch;
  const Leaf* leaf = nullptr;
  uint64_t version = 0;
  for (;;) {
    if (leaf == nullptr) {
      leaf = leaf_for(from, version, nullptr);
      if (leaf == nullptr) return;  // empty
    }
    const Leaf* next = nullptr;
    if (!read_forward(*leaf, version, from, hi, batch, next)) {
      leaf = nullptr;  // changed while read: descend again to `from`
      continue;
    }
    observe(static_cast<const void*>(leaf), version);
    for (uint32_t i = 0; i < batch.n; i++) {
      if (!visit(batch.keys[i], batch.rows[i]) || ++visited == limit || batch.keys[i] == hi) return;
      from = batch.keys[i] + 1;  // below hi: no overflow
    }
    if (batch.beyond || next == nullptr) return;
    // The next leaf's lower bound is this leaf's upper bound at `version`, and
    // it never changes: every key from `from` on that was in the index
    // throughout is in it or further right.
    leaf = next;
    version = stable_version(*leaf);
  }
}

template <class Visit, class Observe>
void OrderedIndex::scan_reverse(uint64_t lo, uint64_t hi, std::size_t limit, Visit&& visit, Observe&& observe) const {
  if (lo > hi || limit == 0) return;
  uint64_t to = hi;  // every key above it has been visited or was absent
  std::size_t visited = 0;
  Batch batch;
  for (;;) {
    uint64_t version = 0;
    LowerFence fence;
    const Leaf* leaf = leaf_for(to, version, &fence);
    if (leaf == nullptr) return;                                  // empty
    if (!read_backward(*leaf, version, lo, to, batch)) continue;  // changed while read: descend again to `to`
    observe(static_cast<const void*>(leaf), version);
    for (uint32_t i = batch.n; i-- > 0;) {
      if (!visit(batch.keys[i], batch.rows[i]) || ++visited == limit || batch.keys[i] == lo) return;
      to = batch.keys[i] - 1;  // above lo: no underflow
    }
    // The keys left to visit are at most the leaf's lower bound, which is
    // fixed: they are in the leaves to its left.
    if (batch.beyond || !fence.bounded || fence.key < lo) return;
    to = fence.key;
  }
}

}  // namespace abyss
