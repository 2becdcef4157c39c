#pragma once
// Latches: short critical sections on in-memory structures (not transaction
// locks). Three kinds, switchable per run: a test-and-test-and-set spin latch
// and an MCS queuing latch where each waiter spins on its own node, so a
// release touches one other core instead of all of them (Tale §5); and a
// blocking latch whose waiters sleep in the kernel, as DBx1000's pthread
// mutexes do (Tale §4.1).
#include <cstdint>
#if defined(ABYSS_SIM)
#include <memory>
#else
#include <mutex>
#endif

#include "common/latch_kind.h"
#include "platform/atomic.h"
#include "platform/clock.h"

namespace abyss::platform {

// A wait: construct it before the loop whose condition it waits on, and call
// once() each time the condition does not hold yet. A wait with a time limit
// says when it ends (`until`, in cycles()), so a simulated core need not poll
// for it.
#if defined(ABYSS_SIM)
// On a simulated core a wait parks the core until a line its condition read
// is written or its deadline passes (docs/many-core.md, "Waiting").
class SpinWait final {
 public:
  SpinWait() { sim::begin_wait(); }
  ~SpinWait() { sim::end_wait(); }
  SpinWait(const SpinWait&) = delete;
  SpinWait& operator=(const SpinWait&) = delete;
  void until(uint64_t deadline_cycles) { deadline_ = deadline_cycles; }
  void once() { sim::spin(steps_++, deadline_); }

 private:
  uint32_t steps_ = 0;
  uint64_t deadline_ = ~uint64_t{0};
};
#else
// Spins with a pause hint, then yields the core, then naps: on an
// oversubscribed machine (more workers than cores) the thread being waited for
// may be preempted, and a yield does not always let it run again (it may be
// queued on the other core); a short nap does. A wait that a running holder
// ends in microseconds never gets past the spinning.
class SpinWait final {
 public:
  void until(uint64_t /*deadline_cycles*/) {}  // the caller's condition checks the clock
  void once() {
    if (++spins_ < kSpinsBeforeYield) {
      cpu_relax();
      return;
    }
    spins_ = 0;
    if (++yields_ < kYieldsBeforeNap) {
      yield_thread();
    } else {
      nap_us(kNapUs);
    }
  }

 private:
  static constexpr uint32_t kSpinsBeforeYield = 256;
  static constexpr uint32_t kYieldsBeforeNap = 16;
  static constexpr uint32_t kNapUs = 20;
  uint32_t spins_ = 0;
  uint32_t yields_ = 0;
};
#endif

class SpinLatch final {
 public:
  // The queue node is unused; the signature matches McsLatch so code can be
  // written once over both.
  struct Node {};

  void lock(Node& /*unused*/) { lock(); }
  void unlock(Node& /*unused*/) { unlock(); }

  void lock() {
    SpinWait w;
    for (;;) {
      if (!held_.load(memory_order_relaxed) && !held_.exchange(true, memory_order_acquire)) return;
      w.once();
    }
  }
  bool try_lock() { return !held_.load(memory_order_relaxed) && !held_.exchange(true, memory_order_acquire); }
  void unlock() { held_.store(false, memory_order_release); }

 private:
  Atomic<bool> held_{false};
};

// Mellor-Crummey & Scott queue lock. The caller provides the node (usually on
// its stack) and passes the same node to unlock.
class McsLatch final {
 public:
  struct Node {
    Atomic<Node*> next{nullptr};
    Atomic<bool> locked{false};

    Node() = default;
    // Lets a node live in a copyable record (an access-set entry). lock()
    // resets both fields, so a copy starts fresh; never copy one in use.
    Node(const Node& /*other*/) {}
    Node& operator=(const Node& /*other*/) { return *this; }
  };

  void lock(Node& me) {
    me.next.store(nullptr, memory_order_relaxed);
    me.locked.store(true, memory_order_relaxed);
    Node* prev = tail_.exchange(&me, memory_order_acq_rel);
    if (prev == nullptr) return;
    prev->next.store(&me, memory_order_release);
    SpinWait w;
    while (me.locked.load(memory_order_acquire)) w.once();
  }

  void unlock(Node& me) {
    Node* succ = me.next.load(memory_order_acquire);
    if (succ == nullptr) {
      Node* expected = &me;
      if (tail_.compare_exchange_strong(expected, nullptr, memory_order_acq_rel)) return;
      // A successor swapped itself in but has not linked yet: wait for the link.
      SpinWait w;
      while ((succ = me.next.load(memory_order_acquire)) == nullptr) w.once();
    }
    succ->locked.store(false, memory_order_release);
  }

 private:
  Atomic<Node*> tail_{nullptr};
};

#if !defined(ABYSS_SIM)
// A latch whose waiters block, as a pthread mutex's do (glibc's, without lock
// elision): one 4-byte word, 0 free, 1 held, 2 held with waiters. A release
// that finds waiters wakes one (a futex wake, through std::atomic's wait and
// notify); a waiter retries on waking and, failing, sleeps again.
class BlockingLatch final {
 public:
  void lock() {
    uint32_t seen = 0;
    if (word_.compare_exchange_strong(seen, 1, memory_order_acquire, memory_order_relaxed)) return;
    if (seen != 2) seen = word_.exchange(2, memory_order_acquire);
    while (seen != 0) {
      word_.wait(2, memory_order_relaxed);
      seen = word_.exchange(2, memory_order_acquire);
    }
  }
  void unlock() {
    if (word_.exchange(0, memory_order_release) == 2) word_.notify_one();
  }

 private:
  Atomic<uint32_t> word_{0};
};
#endif

// Which latch a run uses (`--latch spin|queue|mutex`; common/latch_kind.h).
using abyss::LatchKind;

// A latch whose kind is picked at run time (a predictable branch per use). On
// simulated cores a mutex latch is the queue latch: the simulator has no
// kernel to sleep in, and a queue hands the latch to one waiter, as a
// mutex's wake does (docs/schemes.md, "Latches").
class Latch final {
 public:
  struct Guard;

  void lock(LatchKind kind, McsLatch::Node& node) {
    if (kind == LatchKind::Spin) {
      spin_.lock();
#if !defined(ABYSS_SIM)
    } else if (kind == LatchKind::Mutex) {
      blocking_.lock();
#endif
    } else {
      mcs_.lock(node);
    }
  }
  void unlock(LatchKind kind, McsLatch::Node& node) {
    if (kind == LatchKind::Spin) {
      spin_.unlock();
#if !defined(ABYSS_SIM)
    } else if (kind == LatchKind::Mutex) {
      blocking_.unlock();
#endif
    } else {
      mcs_.unlock(node);
    }
  }

 private:
  SpinLatch spin_;
#if !defined(ABYSS_SIM)
  BlockingLatch blocking_;
#endif
  McsLatch mcs_;
};
#if !defined(ABYSS_SIM)
static_assert(sizeof(Latch) == 16, "the blocking latch's word fits beside the spin latch's flag");
#endif

// Scoped latch holder with its own queue node.
struct Latch::Guard {
  Guard(Latch& l, LatchKind k) : latch(l), kind(k) { latch.lock(kind, node); }
  ~Guard() { latch.unlock(kind, node); }
  Guard(const Guard&) = delete;
  Guard& operator=(const Guard&) = delete;
  Latch& latch;
  LatchKind kind;
  McsLatch::Node node;
};

// A blocking mutex, for the `--ts-alloc mutex` baseline and rare registrations.
#if defined(ABYSS_SIM)
// Simulated: an MCS queue lock with one queue node per simulated core, so a
// release hands the lock to the next waiter alone, as a blocking mutex's
// wake-up does, rather than every waiter retrying at once.
class Mutex final {
 public:
  void lock() { latch_.lock(nodes_[sim::current_core()].node); }
  void unlock() { latch_.unlock(nodes_[sim::current_core()].node); }

 private:
  // A line each, as a blocked thread's wait state is its own: nodes that
  // shared a line would make each waiter's hand-off a miss for its
  // neighbours.
  struct alignas(kCacheLine) CoreNode {
    McsLatch::Node node;
  };
  McsLatch latch_;
  std::unique_ptr<CoreNode[]> nodes_ = std::make_unique<CoreNode[]>(sim::kMaxCores);
};
#else
class Mutex final {
 public:
  void lock() { m_.lock(); }
  void unlock() { m_.unlock(); }

 private:
  std::mutex m_;
};
#endif

class MutexGuard final {
 public:
  explicit MutexGuard(Mutex& m) : m_(m) { m_.lock(); }
  ~MutexGuard() { m_.unlock(); }
  MutexGuard(const MutexGuard&) = delete;
  MutexGuard& operator=(const MutexGuard&) = delete;

 private:
  Mutex& m_;
};

}  // namespace abyss::platform
