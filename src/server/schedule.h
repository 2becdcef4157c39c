#pragma once
// Contention-aware scheduling (the NoSQL scaling study, §3.2): a partition
// of the key space runs one operation at a time. An operation claims every
// partition its keys fall in before it runs, all or none; one that cannot
// is not run to contend under the scheme, it waits on a partition it could
// not claim and is tried again once that partition is released. No thread
// owns a partition (the study's Xyza ties none), and claiming all or none,
// never holding one while waiting for another, cannot deadlock.
//
// Semantic-aware scheduling is the caller's: an operation whose weak
// consistency lets it go unapplied is dropped instead of waiting
// (worker.h, --semantic-drop).
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "platform/atomic.h"
#include "platform/latch.h"

namespace abyss::server {

class PartitionClaims final {
 public:
  explicit PartitionClaims(uint32_t partitions) : slots_(std::make_unique<Slot[]>(partitions)) {}

  // Claims every partition of `parts` (sorted, distinct) for `holder`
  // (non-zero), or none; `blocked` is then one it could not claim.
  bool try_claim(std::span<const uint32_t> parts, uint32_t holder, uint32_t& blocked) {
    for (std::size_t i = 0; i < parts.size(); i++) {
      uint32_t free = 0;
      if (!slots_[parts[i]].holder.compare_exchange_strong(free, holder, platform::memory_order_acquire,
                                                           platform::memory_order_relaxed)) {
        for (std::size_t j = 0; j < i; j++) slots_[parts[j]].holder.store(0, platform::memory_order_release);
        blocked = parts[i];
        return false;
      }
    }
    return true;
  }

  // Queues `waiter` on partition `p` until its release. False when `p` is
  // free already: claim again now. A release after this call wakes it.
  bool wait(uint32_t p, uint64_t waiter) {
    Slot& s = slots_[p];
    s.latch.lock();
    const bool held = s.holder.load(platform::memory_order_acquire) != 0;
    if (held) s.waiters.push_back(waiter);
    s.latch.unlock();
    return held;
  }

  // Releases `parts` and hands every operation that waited on one of them
  // to wake(waiter), to be claimed again: all of them, so one whose
  // connection has gone away holds no other back.
  template <class Wake>
  void release(std::span<const uint32_t> parts, Wake&& wake) {
    for (uint32_t p : parts) {
      Slot& s = slots_[p];
      s.holder.store(0, platform::memory_order_release);
      std::vector<uint64_t> woken;
      s.latch.lock();
      woken.swap(s.waiters);
      s.latch.unlock();
      for (uint64_t w : woken) wake(w);
    }
  }

 private:
  struct alignas(platform::kCacheLine) Slot {
    platform::Atomic<uint32_t> holder{0};  // 0: free; else the claiming worker plus one
    platform::SpinLatch latch;             // guards waiters
    std::vector<uint64_t> waiters;
  };
  std::unique_ptr<Slot[]> slots_;
};

}  // namespace abyss::server
