#include "cc/lock/row_lock.h"

#include <gtest/gtest.h>

namespace abyss::cc {
namespace {

constexpr auto kSpin = LatchKind::Spin;
auto always = [](const RowLock&) { return true; };
auto never = [](const RowLock&) { return false; };

TEST(RowLock, SharedLocksAreCompatible) {
  RowLock l;
  LockRequest a;
  LockRequest b;
  EXPECT_EQ(l.acquire(a, LockMode::Shared, kSpin, never), RowLock::Outcome::Granted);
  EXPECT_EQ(l.acquire(b, LockMode::Shared, kSpin, never), RowLock::Outcome::Granted);
  EXPECT_TRUE(a.granted.load(platform::memory_order_acquire));
  EXPECT_TRUE(b.granted.load(platform::memory_order_acquire));
}

TEST(RowLock, ExclusiveConflictsAndIsRefusedWhenItMayNotWait) {
  RowLock l;
  LockRequest a;
  LockRequest b;
  ASSERT_EQ(l.acquire(a, LockMode::Shared, kSpin, never), RowLock::Outcome::Granted);
  EXPECT_EQ(l.acquire(b, LockMode::Exclusive, kSpin, never), RowLock::Outcome::Refused);
  EXPECT_EQ(b.state, LockRequest::State::Idle);
}

//    A      | B      | C
//    ------------------------
//    X lock |        |
//           | S wait |
//           |        | S wait
//    release|        |           <- B and C are both granted (compatible)
TEST(RowLock, ReleaseGrantsTheCompatibleHeadOfTheQueue) {
  RowLock l;
  LockRequest a;
  LockRequest b;
  LockRequest c;
  ASSERT_EQ(l.acquire(a, LockMode::Exclusive, kSpin, never), RowLock::Outcome::Granted);
  ASSERT_EQ(l.acquire(b, LockMode::Shared, kSpin, always), RowLock::Outcome::Queued);
  ASSERT_EQ(l.acquire(c, LockMode::Shared, kSpin, always), RowLock::Outcome::Queued);
  EXPECT_FALSE(b.granted.load(platform::memory_order_acquire));
  l.release(a, kSpin);
  EXPECT_TRUE(b.granted.load(platform::memory_order_acquire));
  EXPECT_TRUE(c.granted.load(platform::memory_order_acquire));
  EXPECT_EQ(b.state, LockRequest::State::Owner);
}

//    A      | B      | C
//    ------------------------
//    S lock |        |
//           | X wait |
//           |        | S wait   <- queues behind B (FIFO), though compatible with A
//    release|        |          <- only B is granted
TEST(RowLock, QueueIsFifoSoWritersDoNotStarve) {
  RowLock l;
  LockRequest a;
  LockRequest b;
  LockRequest c;
  ASSERT_EQ(l.acquire(a, LockMode::Shared, kSpin, never), RowLock::Outcome::Granted);
  ASSERT_EQ(l.acquire(b, LockMode::Exclusive, kSpin, always), RowLock::Outcome::Queued);
  ASSERT_EQ(l.acquire(c, LockMode::Shared, kSpin, always), RowLock::Outcome::Queued);
  l.release(a, kSpin);
  EXPECT_TRUE(b.granted.load(platform::memory_order_acquire));
  EXPECT_FALSE(c.granted.load(platform::memory_order_acquire));
  l.release(b, kSpin);
  EXPECT_TRUE(c.granted.load(platform::memory_order_acquire));
}

TEST(RowLock, CancelledWaiterLeavesTheQueue) {
  RowLock l;
  LockRequest a;
  LockRequest b;
  LockRequest c;
  ASSERT_EQ(l.acquire(a, LockMode::Exclusive, kSpin, never), RowLock::Outcome::Granted);
  ASSERT_EQ(l.acquire(b, LockMode::Exclusive, kSpin, always), RowLock::Outcome::Queued);
  ASSERT_EQ(l.acquire(c, LockMode::Exclusive, kSpin, always), RowLock::Outcome::Queued);
  l.release(b, kSpin);  // b gives up while waiting
  EXPECT_EQ(b.state, LockRequest::State::Idle);
  l.release(a, kSpin);
  EXPECT_FALSE(b.granted.load(platform::memory_order_acquire));
  EXPECT_TRUE(c.granted.load(platform::memory_order_acquire));
}

TEST(RowLock, UpgradeOnlyForTheSoleOwner) {
  RowLock l;
  LockRequest a;
  LockRequest b;
  ASSERT_EQ(l.acquire(a, LockMode::Shared, kSpin, never), RowLock::Outcome::Granted);
  ASSERT_EQ(l.acquire(b, LockMode::Shared, kSpin, never), RowLock::Outcome::Granted);
  EXPECT_FALSE(l.upgrade(a, kSpin));
  l.release(b, kSpin);
  EXPECT_TRUE(l.upgrade(a, kSpin));
  LockRequest c;
  EXPECT_EQ(l.acquire(c, LockMode::Shared, kSpin, never), RowLock::Outcome::Refused);
}

TEST(RowLock, MayWaitSeesOwnersAndWaiters) {
  RowLock l;
  LockRequest a;
  a.ts = Timestamp{5};
  LockRequest b;
  b.ts = Timestamp{7};
  LockRequest c;
  c.ts = Timestamp{9};
  ASSERT_EQ(l.acquire(a, LockMode::Exclusive, kSpin, never), RowLock::Outcome::Granted);
  ASSERT_EQ(l.acquire(b, LockMode::Exclusive, kSpin, always), RowLock::Outcome::Queued);
  uint64_t seen = 0;
  l.acquire(c, LockMode::Exclusive, kSpin, [&](const RowLock& lock) {
    lock.for_each_request([&](const LockRequest& r) { seen += r.ts.value; });
    return false;
  });
  EXPECT_EQ(seen, 12u);
}

}  // namespace
}  // namespace abyss::cc
