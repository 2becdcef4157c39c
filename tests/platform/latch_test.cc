#include "platform/latch.h"

#include <gtest/gtest.h>

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

TEST(Latch, RunTimeKindExcludesForBoth) {
  for (LatchKind k : {LatchKind::Spin, LatchKind::Queue}) {
    Latch l;
    EXPECT_EQ(count_under([&](McsLatch::Node& n) { l.lock(k, n); }, [&](McsLatch::Node& n) { l.unlock(k, n); }),
              80000u);
  }
}

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
