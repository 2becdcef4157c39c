#pragma once
// Tag arrays for the simulated caches: set-associative, LRU, one 8-byte
// entry per line holding the line number and the version of the line it
// holds. A lookup hits only if the version is still the line's current one,
// so a write anywhere invalidates every other copy without a sharer list.
// The entries lie in zeroed pages (an all-zero entry is empty: the machine
// numbers lines from 1), so a set of up to 8 ways is one host cache line
// and an unused set costs nothing.
#include <algorithm>
#include <bit>
#include <cstdint>

#include "platform/sim/mapped.h"

namespace abyss::platform::sim {

class TagArray final {
 public:
  TagArray() = default;
  // `lines` is rounded down to a power-of-two number of sets of `ways`.
  TagArray(uint64_t lines, uint32_t ways) {
    ways_ = std::max<uint32_t>(1, ways);
    uint64_t sets = 1;
    while (sets * 2 * ways_ <= lines) sets *= 2;
    set_mask_ = sets - 1;
    shift_ = 64 - static_cast<uint32_t>(std::countr_zero(sets));
    slots_ = Mapped<uint64_t>(sets * ways_, false);
  }

  bool empty() const { return slots_.empty(); }

  // Whether `line` is held at `version`; a hit becomes the most recent.
  bool hit(uint64_t line, uint32_t version) {
    if (slots_.empty()) return false;
    uint64_t* set = &slots_[index(line)];
    const uint64_t want = pack(line, version);
    for (uint32_t w = 0; w < ways_; w++) {
      if (set[w] == want) {
        std::rotate(set, set + w, set + w + 1);
        return true;
      }
    }
    return false;
  }

  // Whether `line` is held at any version (a shared level that keeps data
  // for the whole chip).
  bool holds(uint64_t line) {
    if (slots_.empty()) return false;
    uint64_t* set = &slots_[index(line)];
    for (uint32_t w = 0; w < ways_; w++) {
      if (set[w] != kEmpty && (set[w] >> kVersionBits) == (line & kLineMask)) {
        std::rotate(set, set + w, set + w + 1);
        return true;
      }
    }
    return false;
  }

  // Holds `line` at `version` as the most recent entry of its set, replacing
  // an older copy of the line or the least recent entry. A block of `lines`
  // lines (a row, simulated as one unit) also takes the most recent way of
  // the next lines - 1 sets, so it weighs on the cache as its lines would.
  void fill(uint64_t line, uint32_t version, uint32_t lines = 1) {
    if (slots_.empty()) return;
    const uint64_t first = index(line);
    uint64_t* set = &slots_[first];
    uint32_t w = 0;
    while (w + 1 < ways_ && set[w] != kEmpty && (set[w] >> kVersionBits) != (line & kLineMask)) w++;
    std::rotate(set, set + w, set + w + 1);
    set[0] = pack(line, version);
    for (uint32_t k = 1; k < lines; k++) {
      uint64_t* other = &slots_[(first + uint64_t{k} * ways_) % slots_.size()];
      std::rotate(other, other + ways_ - 1, other + ways_);
      other[0] = kFiller;
    }
  }

 private:
  static constexpr uint32_t kVersionBits = 20;
  static constexpr uint64_t kLineMask = (uint64_t{1} << (64 - kVersionBits)) - 1;
  static constexpr uint64_t kEmpty = 0;                  // line 0 is never a line's number
  static constexpr uint64_t kFiller = ~uint64_t{0} - 1;  // a block's other lines: never a hit

  static uint64_t pack(uint64_t line, uint32_t version) {
    return ((line & kLineMask) << kVersionBits) | (version & ((1u << kVersionBits) - 1));
  }
  uint64_t index(uint64_t line) const {
    // Lines of one row are consecutive; a multiplicative hash spreads rows
    // that are a power of two apart over the sets.
    return sets_are_one() ? 0 : ((line * 0x9E3779B97F4A7C15ull) >> shift_) * ways_;
  }

  Mapped<uint64_t> slots_;
  bool sets_are_one() const { return set_mask_ == 0; }

  uint64_t set_mask_ = 0;
  uint32_t shift_ = 63;
  uint32_t ways_ = 1;
};

}  // namespace abyss::platform::sim
