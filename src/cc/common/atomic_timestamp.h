#pragma once
// A timestamp that workers share without a latch. The atomic holds the raw
// value, so a load or store is exactly that of a plain uint64_t, with the
// memory order the caller names.
#include <cstdint>

#include "common/types.h"
#include "platform/atomic.h"

namespace abyss::cc {

class AtomicTimestamp {
 public:
  Timestamp load(platform::MemoryOrder order) const { return Timestamp{raw_.load(order)}; }
  void store(Timestamp ts, platform::MemoryOrder order) { raw_.store(ts.value, order); }

 private:
  platform::Atomic<uint64_t> raw_{kNoTimestamp.value};
};

}  // namespace abyss::cc
