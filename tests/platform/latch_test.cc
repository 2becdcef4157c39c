#include "platform/latch.h"

#include <gtest/gtest.h>

#include "platform/clock.h"
#include "platform/thread.h"

namespace abyss::platform {
namespace {

// A plain counter incremented under the latch by several threads ends exact
// only if the latch excludes.
template <class Lock, class Unlock>
uint64_t count_under(Lock lock, Unlock unlock) {
  uint64_t counter = 0;
  run_threads(4, false, [&](uint32_t) {
    for (int i = 0; i < 20000; i++) {
      McsLatch::Node node;
      lock(node);
      counter = counter + 1;
      unlock(node);
    }
  });
  return counter;
}

TEST(Latch, SpinLatchExcludes) {
  SpinLatch l;
  EXPECT_EQ(count_under([&](McsLatch::Node&) { l.lock(); }, [&](McsLatch::Node&) { l.unlock(); }), 80000u);
}

TEST(Latch, McsLatchExcludes) {
  McsLatch l;
  EXPECT_EQ(count_under([&](McsLatch::Node& n) { l.lock(n); }, [&](McsLatch::Node& n) { l.unlock(n); }), 80000u);
}

TEST(Latch, RunTimeKindExcludesForEach) {
  for (LatchKind k : {LatchKind::Spin, LatchKind::Queue, LatchKind::Mutex}) {
    Latch l;
    EXPECT_EQ(count_under([&](McsLatch::Node& n) { l.lock(k, n); }, [&](McsLatch::Node& n) { l.unlock(k, n); }),
              80000u);
  }
}

#if !defined(ABYSS_SIM)  // a simulated core has no kernel to sleep in (platform/latch.h)
TEST(Latch, BlockingLatchExcludes) {
  BlockingLatch l;
  EXPECT_EQ(count_under([&](McsLatch::Node&) { l.lock(); }, [&](McsLatch::Node&) { l.unlock(); }), 80000u);
}

// A holder that naps with a blocking latch held keeps its waiters out
// (asleep in the kernel); its release lets each of them in turn.
TEST(Latch, BlockingLatchLetsItsWaitersInOnRelease) {
  BlockingLatch l;
  Atomic<bool> held{false};
  Atomic<uint32_t> entered{0};
  uint32_t entered_while_held = 0;
  run_threads(4, false, [&](uint32_t i) {
    if (i == 0) {
      l.lock();
      held.store(true, memory_order_release);
      nap_us(20'000);
      entered_while_held = entered.load(memory_order_relaxed);
      l.unlock();
      return;
    }
    while (!held.load(memory_order_acquire)) yield_thread();
    l.lock();
    entered.fetch_add(1, memory_order_relaxed);
    l.unlock();
  });
  EXPECT_EQ(entered_while_held, 0u);
  EXPECT_EQ(entered.load(memory_order_relaxed), 3u);
}
#endif

TEST(Latch, SpinTryLockFailsWhileHeld) {
  SpinLatch l;
  ASSERT_TRUE(l.try_lock());
  EXPECT_FALSE(l.try_lock());
  l.unlock();
  EXPECT_TRUE(l.try_lock());
  l.unlock();
}

}  // namespace
}  // namespace abyss::platform
