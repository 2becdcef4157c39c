#pragma once
// H-STORE: partition-level locking (Abyss §2.2, §4.3 "Local Partitions").
//
// The database is split into partitions (YCSB: key % --partitions). Before it
// starts, a transaction declares the partitions it will touch, takes a
// timestamp and queues on each partition's lock; a free partition goes to the
// oldest queued timestamp. Partitions are taken in increasing id order, so a
// transaction only waits for a partition above all those it holds: no cycle,
// no deadlock, no CC abort. Rows have no concurrency control at all; a
// multi-partition transaction reads and writes remote partitions' rows
// directly in shared memory, and writes them in place (Txn::write_in_place).
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include "cc/common/wait.h"
#include "cc/traits.h"
#include "common/config.h"
#include "common/types.h"
#include "platform/atomic.h"
#include "platform/latch.h"

namespace abyss::cc {

class Hstore final {
 public:
  static constexpr SchemeTraits kTraits{
      .name = "hstore",
      .summary = "partition locks taken before the transaction starts, in timestamp order",
      .paper = "Abyss §2.2, §4.3",
      .family = Family::PartitionLocking,
      .allocates_timestamps = true,  // the oldest queued timestamp gets a free partition
      .uses_latch = true,            // a partition's queue sits behind a latch
      .declares_partitions = true,   // partitions are locked before the first access
      .waits = true,                 // a transaction queues for busy partitions
      .aborts = false,               // partitions are taken in id order: no deadlock, no abort
      .writes_in_place = true,       // a held partition's rows are the transaction's alone (Abyss §2.2)
  };
  static constexpr uint32_t kMaxParts = 64;

  struct Request {
    Timestamp ts;
    platform::Atomic<bool> granted{false};
    Request* next = nullptr;
  };
  struct RowMeta {};
  struct AccessMeta {};
  struct TxnMeta {
    uint32_t held = 0;  // partitions of Txn::partitions() acquired, in order
    Request requests[kMaxParts];
  };

  Hstore(const Config& config, uint32_t /*workers*/)
      : latch_(config.latch), count_(config.partitions), parts_(new Partition[count_]) {}

  Rc begin(auto& t, bool /*restart*/) {
    const std::span<const uint32_t> parts = t.partitions();
    if (parts.size() > kMaxParts) {
      throw std::runtime_error("hstore: a transaction declared " + std::to_string(parts.size()) +
                               " partitions, at most " + std::to_string(kMaxParts));
    }
    auto& meta = t.meta();
    const Timestamp ts = t.worker().allocate_ts();
    for (meta.held = 0; meta.held < parts.size(); meta.held++) {
      Request& r = meta.requests[meta.held];
      r.ts = ts;
      r.next = nullptr;
      r.granted.store(false, platform::memory_order_relaxed);
      if (parts[meta.held] >= count_) throw std::runtime_error("hstore: partition id out of range");
      Partition& p = parts_[parts[meta.held]];
      {
        platform::Latch::Guard g(p.latch, latch_);
        if (!p.busy) {
          p.busy = true;
          continue;
        }
        r.next = p.waiters;
        p.waiters = &r;
      }
      // Never gives up: a partition is only waited for above all those held.
      (void)wait_for_grant(t.worker(), r, [](uint64_t) { return false; });
    }
    return Rc::Ok;
  }

  Rc read(auto& t, auto& a) {
    t.view_in_place(a);
    return Rc::Ok;
  }
  Rc write(auto& t, auto& a) {
    t.write_in_place(a);
    return Rc::Ok;
  }
  Rc upgrade(auto& /*t*/, auto& /*a*/) { return Rc::Ok; }
  Rc insert(auto& /*t*/, auto& /*a*/) { return Rc::Ok; }

  Rc commit(auto& t) {
    t.install_all();
    release(t);
    return Rc::Ok;
  }
  void abort(auto& t) { release(t); }

 private:
  struct alignas(platform::kCacheLine) Partition {
    platform::Latch latch;
    bool busy = false;
    Request* waiters = nullptr;  // unordered; the oldest is granted next
  };

  // Hands each held partition to its oldest waiter, or frees it.
  void release(auto& t) {
    const std::span<const uint32_t> parts = t.partitions();
    auto& meta = t.meta();
    for (uint32_t i = 0; i < meta.held; i++) {
      Partition& p = parts_[parts[i]];
      platform::Latch::Guard g(p.latch, latch_);
      Request** oldest = nullptr;
      for (Request** link = &p.waiters; *link != nullptr; link = &(*link)->next) {
        if (oldest == nullptr || (*link)->ts < (*oldest)->ts) oldest = link;
      }
      if (oldest == nullptr) {
        p.busy = false;
        continue;
      }
      Request* next = *oldest;
      *oldest = next->next;
      next->granted.store(true, platform::memory_order_release);
    }
    meta.held = 0;
  }

  platform::LatchKind latch_;
  uint32_t count_;
  std::unique_ptr<Partition[]> parts_;
};

}  // namespace abyss::cc
