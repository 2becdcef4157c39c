#include "index/ordered_index.h"

#include <new>
#include <vector>

#include "platform/latch.h"

namespace abyss {

namespace {

constexpr auto kAcquire = platform::memory_order_acquire;
constexpr auto kRelease = platform::memory_order_release;
// A node not yet published: no other worker reads it until the release store
// of a pointer to it.
constexpr auto kPrivate = platform::memory_order_relaxed;

}  // namespace

uint64_t OrderedIndex::stable_version(const Node& node) {
  platform::SpinWait wait;
  for (;;) {
    const uint64_t v = node.version.load(kAcquire);
    if ((v & kLocked) == 0) return v;
    wait.once();
  }
}

const OrderedIndex::Leaf* OrderedIndex::leaf_for(uint64_t key, uint64_t& version, LowerFence* fence) const {
  for (;;) {  // each pass descends from the root; a pass that meets a change starts over
    const Node* node = root_.load(kAcquire);
    if (node == nullptr) return nullptr;
    uint64_t v = stable_version(*node);
    // A root that split after it was loaded is seen here: the new root was
    // stored before the old one was unlocked.
    if (root_.load(kAcquire) != node) continue;
    LowerFence lower;
    bool torn = false;
    while (!node->leaf) {
      const auto& inner = static_cast<const Inner&>(*node);
      platform::touch(&inner, sizeof(Inner), platform::Access::Read);
      const uint32_t i = lower_bound(inner.keys, count_of(inner, kInnerKeys), key);
      if (i > 0) lower = {true, inner.keys[i - 1].load(kAcquire)};  // deeper bounds are tighter
      const Node* child = inner.children[i].load(kAcquire);
      if (!unchanged(inner, v)) {
        torn = true;
        break;
      }
      const uint64_t child_version = stable_version(*child);
      if (!unchanged(inner, v)) {  // the child split before its version was read
        torn = true;
        break;
      }
      node = child;
      v = child_version;
    }
    if (torn) continue;
    version = v;
    if (fence != nullptr) *fence = lower;
    return static_cast<const Leaf*>(node);
  }
}

Row* OrderedIndex::find(uint64_t key) const {
  for (;;) {
    uint64_t version = 0;
    const Leaf* leaf = leaf_for(key, version, nullptr);
    if (leaf == nullptr) return nullptr;
    platform::touch(leaf, sizeof(Leaf), platform::Access::Read);
    const uint32_t n = count_of(*leaf, kLeafSlots);
    const uint32_t pos = lower_bound(leaf->keys, n, key);
    Row* row = pos < n && leaf->keys[pos].load(kAcquire) == key ? leaf->rows[pos].load(kAcquire) : nullptr;
    if (unchanged(*leaf, version)) return row;
  }
}

bool OrderedIndex::read_forward(const Leaf& leaf, uint64_t version, uint64_t from, uint64_t to, Batch& batch,
                                const Leaf*& next) {
  platform::touch(&leaf, sizeof(Leaf), platform::Access::Read);
  const uint32_t n = count_of(leaf, kLeafSlots);
  batch.n = 0;
  batch.beyond = false;
  for (uint32_t i = lower_bound(leaf.keys, n, from); i < n; i++) {
    const uint64_t key = leaf.keys[i].load(kAcquire);
    if (key > to) {
      batch.beyond = true;
      break;
    }
    batch.keys[batch.n] = key;
    batch.rows[batch.n] = leaf.rows[i].load(kAcquire);
    batch.n++;
  }
  next = leaf.next.load(kAcquire);
  return unchanged(leaf, version);
}

bool OrderedIndex::read_backward(const Leaf& leaf, uint64_t version, uint64_t from, uint64_t to, Batch& batch) {
  platform::touch(&leaf, sizeof(Leaf), platform::Access::Read);
  const uint32_t n = count_of(leaf, kLeafSlots);
  const uint32_t first = lower_bound(leaf.keys, n, from);
  batch.n = 0;
  batch.beyond = first > 0;
  for (uint32_t i = first; i < n; i++) {
    const uint64_t key = leaf.keys[i].load(kAcquire);
    if (key > to) break;
    batch.keys[batch.n] = key;
    batch.rows[batch.n] = leaf.rows[i].load(kAcquire);
    batch.n++;
  }
  return unchanged(leaf, version);
}

OrderedIndex::Leaf* OrderedIndex::spare_leaf(Spares& spares, Arena& nodes) {
  if (spares.leaf == nullptr) {
    spares.leaf = new (nodes.allocate(sizeof(Leaf), alignof(Leaf))) Leaf();
    spares.leaf->leaf = true;
  }
  return spares.leaf;
}

OrderedIndex::Inner* OrderedIndex::spare_inner(Spares& spares, uint32_t which, Arena& nodes) {
  Inner*& spare = spares.inner[which];
  if (spare == nullptr) {
    spare = new (nodes.allocate(sizeof(Inner), alignof(Inner))) Inner();
    spare->leaf = false;
  }
  return spare;
}

void OrderedIndex::split_leaf(Leaf& leaf, Leaf& right, uint64_t& separator) {
  platform::touch(&right, sizeof(Leaf), platform::Access::Write);
  const uint32_t n = leaf.count.load(kAcquire);
  const uint32_t keep = n / 2;
  for (uint32_t i = keep; i < n; i++) {
    right.keys[i - keep].store(leaf.keys[i].load(kAcquire), kPrivate);
    right.rows[i - keep].store(leaf.rows[i].load(kAcquire), kPrivate);
  }
  right.count.store(n - keep, kPrivate);
  right.next.store(leaf.next.load(kAcquire), kPrivate);
  separator = leaf.keys[keep - 1].load(kAcquire);
  leaf.next.store(&right, kRelease);  // publishes `right` to scans that follow the links
  leaf.count.store(keep, kRelease);
}

void OrderedIndex::split_inner(Inner& inner, Inner& right, uint64_t& separator) {
  platform::touch(&right, sizeof(Inner), platform::Access::Write);
  const uint32_t n = inner.count.load(kAcquire);
  const uint32_t keep = n / 2;
  separator = inner.keys[keep].load(kAcquire);
  for (uint32_t i = keep + 1; i < n; i++) right.keys[i - keep - 1].store(inner.keys[i].load(kAcquire), kPrivate);
  for (uint32_t i = keep + 1; i <= n; i++) {
    right.children[i - keep - 1].store(inner.children[i].load(kAcquire), kPrivate);
  }
  right.count.store(n - keep - 1, kPrivate);
  inner.count.store(keep, kRelease);
}

void OrderedIndex::insert_child(Inner& parent, uint64_t separator, Node* right) {
  platform::touch(&parent, sizeof(Inner), platform::Access::Write);
  const uint32_t n = parent.count.load(kAcquire);
  const uint32_t pos = lower_bound(parent.keys, n, separator);
  for (uint32_t i = n; i > pos; i--) parent.keys[i].store(parent.keys[i - 1].load(kAcquire), kRelease);
  for (uint32_t i = n + 1; i > pos + 1; i--) {
    parent.children[i].store(parent.children[i - 1].load(kAcquire), kRelease);
  }
  parent.keys[pos].store(separator, kRelease);
  parent.children[pos + 1].store(right, kRelease);
  parent.count.store(n + 1, kRelease);
}

void OrderedIndex::insert_at(Leaf& leaf, uint32_t pos, uint64_t key, Row* row) {
  platform::touch(&leaf, sizeof(Leaf), platform::Access::Write);
  const uint32_t n = leaf.count.load(kAcquire);
  for (uint32_t i = n; i > pos; i--) {
    leaf.keys[i].store(leaf.keys[i - 1].load(kAcquire), kRelease);
    leaf.rows[i].store(leaf.rows[i - 1].load(kAcquire), kRelease);
  }
  leaf.keys[pos].store(key, kRelease);
  leaf.rows[pos].store(row, kRelease);
  leaf.count.store(n + 1, kRelease);
}

void OrderedIndex::grow(Node* left, uint64_t separator, Node* right, Inner& root) {
  platform::touch(&root, sizeof(Inner), platform::Access::Write);
  root.keys[0].store(separator, kPrivate);
  root.children[0].store(left, kPrivate);
  root.children[1].store(right, kPrivate);
  root.count.store(1, kPrivate);
  root_.store(&root, kRelease);
}

bool OrderedIndex::insert(uint64_t key, Row* row, Arena& nodes, bool replace) {
  Spares spares;
  for (;;) {  // each pass descends from the root; a pass that meets a change starts over
    Node* node = root_.load(kAcquire);
    if (node == nullptr) {
      Leaf* first = spare_leaf(spares, nodes);
      Node* expected = nullptr;
      if (root_.compare_exchange_strong(expected, first, kRelease, kAcquire)) spares.leaf = nullptr;
      continue;
    }
    uint64_t version = stable_version(*node);
    if (root_.load(kAcquire) != node) continue;
    Inner* parent = nullptr;
    uint64_t parent_version = 0;
    bool restart = false;
    while (!node->leaf) {
      auto& inner = static_cast<Inner&>(*node);
      platform::touch(&inner, sizeof(Inner), platform::Access::Read);
      if (inner.count.load(kAcquire) == kInnerKeys) {
        // Full: split it now, so that its child's split would find room.
        Inner* right = spare_inner(spares, 0, nodes);
        Inner* root = parent == nullptr ? spare_inner(spares, 1, nodes) : nullptr;
        if (parent != nullptr && !try_lock(*parent, parent_version)) {
          restart = true;
          break;
        }
        if (!try_lock(inner, version)) {
          if (parent != nullptr) unlock_unchanged(*parent, parent_version);
          restart = true;
          break;
        }
        if (parent == nullptr && root_.load(kAcquire) != &inner) {  // a root that has split already
          unlock_unchanged(inner, version);
          restart = true;
          break;
        }
        uint64_t separator = 0;
        split_inner(inner, *right, separator);
        if (parent != nullptr) {
          insert_child(*parent, separator, right);
        } else {
          grow(&inner, separator, right, *root);
        }
        spares.inner[0] = nullptr;
        if (root != nullptr) spares.inner[1] = nullptr;
        unlock(inner);
        if (parent != nullptr) unlock(*parent);
        restart = true;  // descend through the halves from the root
        break;
      }
      const uint32_t i = lower_bound(inner.keys, count_of(inner, kInnerKeys), key);
      Node* child = inner.children[i].load(kAcquire);
      if (!unchanged(inner, version)) {
        restart = true;
        break;
      }
      const uint64_t child_version = stable_version(*child);
      if (!unchanged(inner, version)) {
        restart = true;
        break;
      }
      parent = &inner;
      parent_version = version;
      node = child;
      version = child_version;
    }
    if (restart) continue;

    auto& leaf = static_cast<Leaf&>(*node);
    platform::touch(&leaf, sizeof(Leaf), platform::Access::Read);
    const uint32_t n = count_of(leaf, kLeafSlots);
    const uint32_t pos = lower_bound(leaf.keys, n, key);
    const bool present = pos < n && leaf.keys[pos].load(kAcquire) == key;
    if (!unchanged(leaf, version)) continue;
    if (present) {
      if (!replace) return false;
      if (!try_lock(leaf, version)) continue;
      platform::touch(&leaf, sizeof(Leaf), platform::Access::Write);
      leaf.rows[pos].store(row, kRelease);
      unlock(leaf);
      return false;
    }
    if (n < kLeafSlots) {
      // Locking at the version read keeps `n` and `pos` true, and the leaf
      // the one for `key`: only a change of the leaf moves its range.
      if (!try_lock(leaf, version)) continue;
      insert_at(leaf, pos, key, row);
      unlock(leaf);
      return true;
    }

    // Full: split it, then insert into the half that holds `key`.
    Leaf* right = spare_leaf(spares, nodes);
    Inner* root = parent == nullptr ? spare_inner(spares, 1, nodes) : nullptr;
    if (parent != nullptr && !try_lock(*parent, parent_version)) continue;
    if (!try_lock(leaf, version)) {
      if (parent != nullptr) unlock_unchanged(*parent, parent_version);
      continue;
    }
    if (parent == nullptr && root_.load(kAcquire) != &leaf) {
      unlock_unchanged(leaf, version);
      continue;
    }
    uint64_t separator = 0;
    split_leaf(leaf, *right, separator);
    if (key <= separator) {
      insert_at(leaf, lower_bound(leaf.keys, leaf.count.load(kAcquire), key), key, row);
    } else {
      insert_at(*right, lower_bound(right->keys, right->count.load(kAcquire), key), key, row);
    }
    if (parent != nullptr) {
      insert_child(*parent, separator, right);
    } else {
      grow(&leaf, separator, right, *root);
    }
    unlock(leaf);
    if (parent != nullptr) unlock(*parent);
    return true;
  }
}

bool OrderedIndex::remove(uint64_t key) {
  for (;;) {
    uint64_t version = 0;
    const Leaf* found = leaf_for(key, version, nullptr);
    if (found == nullptr) return false;
    // The index's own leaf: only readers need it const.
    auto& leaf = const_cast<Leaf&>(*found);
    platform::touch(&leaf, sizeof(Leaf), platform::Access::Read);
    const uint32_t n = count_of(leaf, kLeafSlots);
    const uint32_t pos = lower_bound(leaf.keys, n, key);
    const bool present = pos < n && leaf.keys[pos].load(kAcquire) == key;
    if (!unchanged(leaf, version)) continue;
    if (!present) return false;
    if (!try_lock(leaf, version)) continue;
    platform::touch(&leaf, sizeof(Leaf), platform::Access::Write);
    for (uint32_t i = pos; i + 1 < n; i++) {
      leaf.keys[i].store(leaf.keys[i + 1].load(kAcquire), kRelease);
      leaf.rows[i].store(leaf.rows[i + 1].load(kAcquire), kRelease);
    }
    leaf.count.store(n - 1, kRelease);
    unlock(leaf);
    return true;
  }
}

uint32_t OrderedIndex::height() const {
  uint32_t levels = 0;
  for (const Node* node = root_.load(kAcquire); node != nullptr; levels++) {
    if (node->leaf) return levels + 1;
    node = static_cast<const Inner*>(node)->children[0].load(kAcquire);
  }
  return levels;
}

uint64_t OrderedIndex::nodes() const {
  uint64_t n = 0;
  std::vector<const Node*> pending;
  if (const Node* root = root_.load(kAcquire)) pending.push_back(root);
  while (!pending.empty()) {
    const Node* node = pending.back();
    pending.pop_back();
    n++;
    if (node->leaf) continue;
    const auto* inner = static_cast<const Inner*>(node);
    for (uint32_t i = 0; i <= count_of(*inner, kInnerKeys); i++) pending.push_back(inner->children[i].load(kAcquire));
  }
  return n;
}

}  // namespace abyss
