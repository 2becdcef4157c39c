#pragma once
// The NoSQL study's locking (§2 and §3.3): MongoDB's multi-granularity
// locks, where its ladder starts, and the wait/signal fast path that
// replaces them. A command takes an intent lock on each of the global,
// database and collection resources (IS to read, IX to write) and a shared
// or exclusive lock on each document it names (a document: its key's hash
// among kDocuments), in that order and the documents in ascending order, so
// no two commands wait on each other in a cycle. It holds them while its
// transaction runs under --cc and releases them when it ends; they are
// taken before the transaction, never by it.
//
//   hierarchical  one manager: its latch is held to walk the hierarchy and
//                 update every resource's granted counts on the way; a
//                 request that conflicts lets the latch go, waits, and
//                 walks again.
//   wait-signal   no manager: the intent counts are atomics (intent locks
//                 are compatible with each other, and no command takes S or
//                 X above a document), and each document has its own latch
//                 and counts; a waiter waits on its document alone, and a
//                 release signals by clearing it.
//
// Waiting is platform::SpinWait (spin, yield, then short naps) in both.
#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "platform/atomic.h"
#include "platform/latch.h"

namespace abyss::server {

enum class Locking : uint8_t { None, Hierarchical, WaitSignal };
inline constexpr std::array<std::string_view, 3> kLockingNames = {"none", "hierarchical", "wait-signal"};

class LockManager final {
 public:
  static constexpr uint32_t kDocuments = 1u << 16;

  explicit LockManager(Locking kind) : kind_(kind), documents_(std::make_unique<Document[]>(kDocuments)) {}

  // Locks `docs` (ascending, distinct, each below kDocuments) exclusively
  // when `write`, else shared, with the intents above them. Answers how many
  // times it found a document held in a conflicting mode and waited.
  uint64_t lock(std::span<const uint32_t> docs, bool write) {
    if (kind_ == Locking::None) return 0;
    return kind_ == Locking::Hierarchical ? lock_hierarchical(docs, write) : lock_wait_signal(docs, write);
  }

  void unlock(std::span<const uint32_t> docs, bool write) {
    if (kind_ == Locking::Hierarchical) {
      platform::MutexGuard hold(manager_);
      for (Counts& level : levels_) (write ? level.ix : level.is)--;
      for (uint32_t d : docs) release(documents_[d], write);
    } else if (kind_ == Locking::WaitSignal) {
      for (Intent& level : intents_) (write ? level.ix : level.is).fetch_sub(1, platform::memory_order_release);
      for (uint32_t d : docs) {
        Document& doc = documents_[d];
        doc.latch.lock();
        release(doc, write);
        doc.latch.unlock();
      }
    }
  }

 private:
  struct Counts {
    uint64_t is = 0;
    uint64_t ix = 0;
  };
  struct alignas(platform::kCacheLine) Intent {
    platform::Atomic<uint64_t> is{0};
    platform::Atomic<uint64_t> ix{0};
  };
  struct alignas(platform::kCacheLine) Document {
    platform::SpinLatch latch;  // wait-signal: guards the counts
    uint32_t shared = 0;
    bool exclusive = false;
  };

  static bool grantable(const Document& d, bool write) { return !d.exclusive && (!write || d.shared == 0); }
  static void grant(Document& d, bool write) {
    if (write) {
      d.exclusive = true;
    } else {
      d.shared++;
    }
  }
  static void release(Document& d, bool write) {
    if (write) {
      d.exclusive = false;
    } else {
      d.shared--;
    }
  }

  uint64_t lock_hierarchical(std::span<const uint32_t> docs, bool write) {
    uint64_t waits = 0;
    std::size_t granted = 0;  // documents of `docs` granted so far
    manager_.lock();
    for (Counts& level : levels_) (write ? level.ix : level.is)++;  // always compatible: nothing takes S or X here
    while (granted < docs.size()) {
      Document& d = documents_[docs[granted]];
      if (grantable(d, write)) {
        grant(d, write);
        granted++;
        continue;
      }
      waits++;
      manager_.unlock();
      platform::SpinWait wait;
      wait.once();
      manager_.lock();
    }
    manager_.unlock();
    return waits;
  }

  uint64_t lock_wait_signal(std::span<const uint32_t> docs, bool write) {
    uint64_t waits = 0;
    for (Intent& level : intents_) (write ? level.ix : level.is).fetch_add(1, platform::memory_order_acquire);
    for (uint32_t id : docs) {
      Document& d = documents_[id];
      platform::SpinWait wait;
      for (;;) {
        d.latch.lock();
        if (grantable(d, write)) {
          grant(d, write);
          d.latch.unlock();
          break;
        }
        d.latch.unlock();
        waits++;
        wait.once();
      }
    }
    return waits;
  }

  Locking kind_;
  platform::Mutex manager_;          // hierarchical: guards levels_ and every document's counts
  std::array<Counts, 3> levels_{};   // hierarchical: global, database, collection
  std::array<Intent, 3> intents_{};  // wait-signal: the same, as atomics
  std::unique_ptr<Document[]> documents_;
};

}  // namespace abyss::server
