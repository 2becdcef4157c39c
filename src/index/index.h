#pragma once
// The index seam: one interface for a table's indexes, whichever structure
// holds the keys. A table has a primary index and may have secondary ones
// (storage/table.h); each maps a 64-bit key to a row and is one of
//   hash     HashIndex: a probe is one cache line (flat) or a pointer chase
//            (chained), no order, entries never removed;
//   ordered  OrderedIndex: a B+-tree with optimistic lock coupling, ordered
//            scans in both directions, real removal, and leaf versions a
//            scan's caller can validate later (phantom protection).
// A composite key is packed into the 64 bits most significant part first, so
// the ordered index sorts by its parts in turn (see the workloads' key
// functions). The structure is fixed when the index is made; every call
// dispatches on it with one well-predicted branch, so the hot path stays a
// direct call.
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "common/arena.h"
#include "common/storage_options.h"
#include "common/types.h"
#include "index/hash_index.h"
#include "index/ordered_index.h"

namespace abyss {

class Index final {
 public:
  // An ordered index's last entry, past every key (Table::end_row): keys
  // are below it.
  static constexpr uint64_t kEndKey = ~uint64_t{0};

  // `expected_keys` sizes a hash index's buckets (an ordered index grows by
  // nodes); `table` names the owner in an out-of-memory message.
  Index(std::string name, IndexType type, uint64_t expected_keys, StorageOptions options, const char* table)
      : name_(std::move(name)), type_(type) {
    if (type == IndexType::Hash) {
      hash_.emplace(expected_keys, options, table);
    } else {
      ordered_.emplace();
    }
  }
  Index(const Index&) = delete;
  Index& operator=(const Index&) = delete;

  const std::string& name() const { return name_; }
  IndexType type() const { return type_; }
  bool is_ordered() const { return type_ == IndexType::Ordered; }

  // Visits every entry, visit(key, row), while inserts may go on: each
  // entry present throughout is visited (an ordered index in key order, a
  // hash index in none).
  template <class Visit>
  void for_each(Visit&& visit) const {
    if (hash_.has_value()) {
      hash_->for_each(visit);
    } else {
      ordered_->scan(0, kEndKey - 1, ~std::size_t{0}, [&](uint64_t key, Row* row) {
        visit(key, row);
        return true;
      });
    }
  }

  // The row indexed under `key`, or null.
  Row* find(uint64_t key) const { return hash_.has_value() ? hash_->find(key) : ordered_->find(key); }

  // Starts fetching the line a probe of `key` reads first. A B+-tree's
  // descent is a chain of dependent loads that a prefetch cannot start, so
  // only the hash index does anything.
  void prefetch(uint64_t key) const {
    if (hash_.has_value()) hash_->prefetch(key);
  }

  // Indexes `row` under `key`. A key indexed already, which only a scheme
  // that lets two inserts of one key commit (NONE) or a load that repeats a
  // key can cause, has its old entry shadowed: the hash index finds the newer
  // row first, the ordered one points its entry at it. Nodes come from
  // `nodes`, which must live as long as the index.
  void insert(uint64_t key, Row* row, Arena& nodes) {
    if (hash_.has_value()) {
      hash_->insert(key, row, nodes);
    } else if (key == kEndKey) {
      refuse(key);
    } else {
      ordered_->insert(key, row, nodes, /*replace=*/true);
    }
  }

  // Takes `key`'s entry out of an ordered index; false if there was none. A
  // hash index keeps its entries for the run (a removed row is flagged
  // deleted in its header instead), so it refuses.
  bool remove(uint64_t key) {
    if (!ordered_.has_value()) throw std::logic_error("index " + name_ + " is a hash index: entries are not removed");
    return ordered_->remove(key);
  }

  // The structures themselves: scans need the ordered index, memory reports
  // the hash index's buckets. Each is null for the other type.
  HashIndex* hash() { return hash_ ? &*hash_ : nullptr; }
  const HashIndex* hash() const { return hash_ ? &*hash_ : nullptr; }
  OrderedIndex* ordered() { return ordered_ ? &*ordered_ : nullptr; }
  const OrderedIndex* ordered() const { return ordered_ ? &*ordered_ : nullptr; }

 private:
  // Throws for a key an ordered index cannot take (index.cc: out of line,
  // off the insert's path).
  [[noreturn]] void refuse(uint64_t key) const;

  std::string name_;
  IndexType type_;
  std::optional<HashIndex> hash_;  // in place: a probe follows no extra pointer
  std::optional<OrderedIndex> ordered_;
};

}  // namespace abyss
