#pragma once
// The access set's index by row, for a transaction past a few dozen
// accesses: Txn::find() scans a short access set, and looks a long one (a
// long reader's thousands of rows) up here, so a transaction of n accesses
// costs O(n), not O(n^2). Open addressing with linear probing over a power
// of two of slots, at most half of them full; an entry names the first of
// the row's accesses, as a scan from the front would find it.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "storage/row.h"

namespace abyss {

class AccessIndex final {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  // Access `i` is of `row`: indexed unless an earlier access of the row is.
  void add(const Row* row, uint32_t i) {
    if (2 * (std::size_t{count_} + 1) > slots_.size()) grow();
    Slot& s = slots_[probe(row)];
    if (s.row == row) return;
    s = Slot{row, i};
    count_++;
  }
  // The first access of `row`, or kNone.
  uint32_t find(const Row* row) const {
    if (count_ == 0) return kNone;
    const Slot& s = slots_[probe(row)];
    return s.row == row ? s.access : kNone;
  }
  uint32_t size() const { return count_; }
  // The most bytes it takes for `accesses` entries, while it grows to them.
  static uint64_t max_bytes(uint64_t accesses) {
    uint64_t slots = kMinSlots;
    while (slots < 2 * accesses) slots *= 2;
    return (slots + slots / 2) * sizeof(Slot);
  }
  // Empties it, keeping its slots for the next long transaction.
  void clear() {
    if (count_ == 0) return;
    for (Slot& s : slots_) s = Slot{};
    count_ = 0;
  }

 private:
  struct Slot {
    const Row* row = nullptr;
    uint32_t access = kNone;
  };
  static constexpr uint32_t kMinSlots = 128;

  // The slot holding `row`, or the empty one where it would go.
  std::size_t probe(const Row* row) const {
    const std::size_t mask = slots_.size() - 1;
    // Fibonacci hashing of the address: rows are 8-byte aligned at least.
    std::size_t i = (reinterpret_cast<std::uintptr_t>(row) >> 3) * 0x9E3779B97F4A7C15ULL >> shift_;
    while (slots_[i].row != nullptr && slots_[i].row != row) i = (i + 1) & mask;
    return i;
  }
  void grow() {
    std::vector<Slot> old;
    old.swap(slots_);
    const std::size_t n = old.empty() ? kMinSlots : 2 * old.size();
    slots_.assign(n, Slot{});
    shift_ = 64;
    for (std::size_t s = n; s > 1; s >>= 1) shift_--;
    for (const Slot& s : old) {
      if (s.row != nullptr) slots_[probe(s.row)] = s;
    }
  }

  std::vector<Slot> slots_;
  uint32_t shift_ = 64;  // 64 - log2(slots)
  uint32_t count_ = 0;
};

}  // namespace abyss
