// The logger's wakes: a server's worker asleep in its poller learns of news
// from its log only through its waker.
#include "log/logger.h"

#include <gtest/gtest.h>

namespace abyss::log {
namespace {

LogSettings in_memory() {
  LogSettings s;
  s.policy = LogPolicy::Memory;
  return s;
}

// A commit of worker 0's, its record written, waits for worker 1 to publish
// past its epoch; worker 0 is about to sleep. The worker that makes the
// epoch durable wakes it, so its reply does not wait for a timeout.
TEST(LoggerWakes, AWorkerAwaitingItsAcksIsWokenWhenTheirEpochTurnsDurable) {
  Logger logger(in_memory(), 2, 1.0);
  WorkerLog& w0 = logger.worker(0);
  WorkerLog& w1 = logger.worker(1);
  int woken0 = 0;
  int woken1 = 0;
  w0.set_waker([&] { woken0++; });
  w1.set_waker([&] { woken1++; });

  const uint64_t e = w0.enter_install();
  w0.leave_install();
  w0.record_buffer() += "r";
  w0.appended(1, e);
  w0.committed({e, 1, 0, 0, false, 0});
  w0.idle();  // writes its record; worker 1 still holds the durable epoch back
  ASSERT_FALSE(w0.is_idle());
  ASSERT_LT(logger.durable(), e);
  EXPECT_EQ(woken0, 0);
  EXPECT_GT(woken1, 0) << "worker 1 holds the durable epoch back and was not told";

  w1.idle();  // nothing of its own: publishes, and the epoch turns durable
  EXPECT_TRUE(w1.is_idle());
  EXPECT_GE(logger.durable(), e);
  EXPECT_EQ(woken0, 1) << "worker 0 awaits a durable epoch and was not woken";

  int acked = 0;
  (void)w0.poll([&](const WorkerLog::Pending& p, uint64_t) {
    EXPECT_EQ(p.epoch, e);
    acked++;
  });
  EXPECT_EQ(acked, 1);
  w1.idle();  // a later durable epoch wakes no one: worker 0 awaits nothing now
  w0.idle();
  EXPECT_EQ(woken0, 1);
}

// A worker with nothing to acknowledge is not woken when the epoch turns durable.
TEST(LoggerWakes, AWorkerAwaitingNothingIsNotWoken) {
  Logger logger(in_memory(), 2, 1.0);
  WorkerLog& w0 = logger.worker(0);
  WorkerLog& w1 = logger.worker(1);
  int woken0 = 0;
  w0.set_waker([&] { woken0++; });
  w1.set_waker([] {});
  const uint64_t e = w1.enter_install();
  w1.leave_install();
  w1.record_buffer() += "r";
  w1.appended(1, e);
  w1.committed({e, 1, 0, 0, false, 0});
  w1.idle();
  const int before = woken0;  // worker 0 held the durable epoch back: woken to publish
  w0.idle();
  EXPECT_GE(logger.durable(), e);
  EXPECT_EQ(woken0, before);
}

}  // namespace
}  // namespace abyss::log
