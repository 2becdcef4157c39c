#pragma once
// A row lock kept in one word and taken without waiting (Abyss §4.2: no lock
// table, no latch): readers are counted below `kExclusive`, and a value at or
// above it means the row is held exclusively. Each step is one
// compare-and-swap that either takes the lock or says it is held. NO_WAIT
// keeps one exclusive bit; VLL counts its exclusive holders too (CX above
// CS), and takes the word's counts this way at an access.
#include <cstdint>

#include "platform/atomic.h"

namespace abyss::cc {

template <uint64_t kExclusive>
struct CountWord {
  // One more reader, unless the row is held exclusively.
  static bool try_shared(platform::Atomic<uint64_t>& word) {
    uint64_t v = word.load(platform::memory_order_relaxed);
    do {
      if (v >= kExclusive) return false;
    } while (!word.compare_exchange_weak(v, v + 1, platform::memory_order_acquire, platform::memory_order_relaxed));
    return true;
  }
  // The row exclusively, when nobody holds it.
  static bool try_exclusive(platform::Atomic<uint64_t>& word) { return swap(word, 0); }
  // A reader's hold made exclusive, when it is the row's only reader.
  static bool try_upgrade(platform::Atomic<uint64_t>& word) { return swap(word, 1); }

 private:
  static bool swap(platform::Atomic<uint64_t>& word, uint64_t expected) {
    return word.compare_exchange_strong(expected, kExclusive, platform::memory_order_acquire,
                                        platform::memory_order_relaxed);
  }
};

}  // namespace abyss::cc
