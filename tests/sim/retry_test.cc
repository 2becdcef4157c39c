// A retry loop on simulated cores (cc/common/wait.h): an attempt blocked by
// another core waits until what it read is written; one raced by a core that
// has already finished tries again at once, since a wait would park until a
// write that never comes.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "cc/common/wait.h"
#include "platform/atomic.h"
#include "platform/backoff.h"
#include "platform/sim/machine.h"
#include "platform/sim/topology.h"
#include "stats/stats.h"

namespace abyss::cc {
namespace {

struct FakeWorker {
  uint64_t waited = 0;
  void charge(TimeCat /*cat*/, uint64_t cycles) { waited += cycles; }
};

platform::sim::Topology mesh() {
  platform::sim::Topology t;
  EXPECT_EQ(platform::sim::load_topology(std::string(ABYSS_TEST_TOPOLOGY_DIR) + "/mesh.toml", t), "");
  return t;
}

// Core 1 reads a version word, takes a microsecond (its copy), and reads it
// again; core 0 installs a new version in that microsecond and ends. The
// attempt that saw the version change must run again at once: the word is
// never written again.
void raced_copy(Attempt raced, uint32_t& attempts) {
  ASSERT_EQ(platform::sim::configure(2, mesh()), "");
  alignas(64) platform::Atomic<uint64_t> word{2};
  platform::sim::run(2, [&](uint32_t core) {
    if (core == 0) {
      platform::pause_for_ns(500);
      word.store(4, platform::memory_order_release);
      return;
    }
    FakeWorker w;
    retry_until_done(w, [&] {
      attempts++;
      const uint64_t before = word.load(platform::memory_order_acquire);
      platform::pause_for_ns(1000);
      return word.load(platform::memory_order_acquire) == before ? Attempt::Done : raced;
    });
  });
}

TEST(SimRetry, AnAttemptRacedByAFinishedCoreRunsAgainAtOnce) {
  uint32_t attempts = 0;
  raced_copy(Attempt::Again, attempts);
  EXPECT_EQ(attempts, 2u);
}

// The control: asked to wait instead, the same attempt parks until the word
// is written again, which no core does, and the run ends naming the core.
TEST(SimRetry, WaitingInsteadParksForAWriteNoCoreMakes) {
  uint32_t attempts = 0;
  try {
    raced_copy(Attempt::Retry, attempts);
    FAIL() << "the run should have ended with an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("core 1 on line"), std::string::npos) << e.what();
  }
  EXPECT_EQ(attempts, 1u);
}

}  // namespace
}  // namespace abyss::cc
