#include "platform/thread.h"

#include <gtest/gtest.h>

#include <new>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "platform/atomic.h"
#include "platform/machine.h"

namespace abyss::platform {
namespace {

TEST(RunThreads, RunsEveryIndexOnce) {
  std::vector<int> runs(8, 0);
  run_threads(8, false, [&](uint32_t i) { runs[i]++; });
  for (int r : runs) EXPECT_EQ(r, 1);
}

TEST(RunThreads, RethrowsAWorkersExceptionAfterJoiningAll) {
  // Worker 0 throws; the others wait until it has thrown and only then
  // finish their work, so they can only be seen finished if run_threads joined
  // them before rethrowing.
  constexpr uint32_t kThreads = 6;
  Atomic<bool> thrown{false};
  std::vector<int> finished(kThreads, 0);
  try {
    run_threads(kThreads, false, [&](uint32_t i) {
      if (i == 0) {
        thrown.store(true, memory_order_release);
        throw std::runtime_error("worker 0 failed");
      }
      while (!thrown.load(memory_order_acquire)) cpu_relax();
      finished[i] = 1;
    });
    FAIL() << "run_threads returned normally";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "worker 0 failed");
  }
  for (uint32_t i = 1; i < kThreads; i++) EXPECT_EQ(finished[i], 1) << "worker " << i;
}

TEST(RunThreads, BadAllocInAWorkerReachesTheCaller) {
  // The loaders' case: an allocation failure in a thread used to escape it
  // and call std::terminate.
  EXPECT_THROW(run_threads(3, false,
                           [](uint32_t i) {
                             if (i == 2) throw std::bad_alloc();
                           }),
               std::bad_alloc);
}

TEST(RunThreads, OneOfSeveralExceptionsIsRethrown) {
  try {
    run_threads(4, false, [](uint32_t i) { throw static_cast<int>(i); });
    FAIL() << "run_threads returned normally";
  } catch (int i) {
    EXPECT_GE(i, 0);
    EXPECT_LT(i, 4);
  }
}

TEST(RunParallel, RunsEveryIndexOnceAndPassesAnExceptionOn) {
  std::vector<int> runs(4, 0);
  run_parallel(4, [&](uint32_t i) { runs[i]++; });
  for (int r : runs) EXPECT_EQ(r, 1);
  // The loaders' case: a table too large for memory ends the load with bad_alloc.
  EXPECT_THROW(run_parallel(3,
                            [](uint32_t i) {
                              if (i == 1) throw std::bad_alloc();
                            }),
               std::bad_alloc);
}

// A thread of its own: it runs, join() waits for it, moving it hands the
// join over, and the destructor joins one never joined. A simulated build
// has none and says so.
TEST(Thread, RunsOnItsOwnAndIsJoined) {
  if (kSimulated) {
    EXPECT_THROW(Thread([] {}), std::logic_error);
    return;
  }
  Atomic<int> ran{0};
  {
    Thread a([&] { ran.fetch_add(1, memory_order_relaxed); });
    EXPECT_TRUE(a.joinable());
    a.join();
    EXPECT_FALSE(a.joinable());
    EXPECT_EQ(ran.load(memory_order_relaxed), 1);
    Thread b([&] { ran.fetch_add(1, memory_order_relaxed); });
    Thread c = std::move(b);
    EXPECT_FALSE(b.joinable());  // NOLINT(bugprone-use-after-move): moved-from is empty by contract
    EXPECT_TRUE(c.joinable());
    a = std::move(c);
    Thread d([&] { ran.fetch_add(1, memory_order_relaxed); });
  }  // a and d joined here
  EXPECT_EQ(ran.load(memory_order_relaxed), 3);
}

}  // namespace
}  // namespace abyss::platform
