// The simulated machine itself (src/platform/sim/): scheduling in virtual
// time order, waits that park, the coherence costs' direction, determinism,
// and the topology files.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "platform/atomic.h"
#include "platform/clock.h"
#include "platform/latch.h"
#include "platform/machine.h"
#include "platform/memory.h"
#include "platform/sim/machine.h"
#include "platform/sim/topology.h"
#include "platform/thread.h"

namespace abyss::platform::sim {
namespace {

Topology shipped(const std::string& name) {
  Topology t;
  const std::string err = load_topology(std::string(ABYSS_TEST_TOPOLOGY_DIR) + "/" + name + ".toml", t);
  EXPECT_EQ(err, "");
  return t;
}

TEST(SimTopology, ShippedFilesLoad) {
  for (const char* name : {"mesh", "numa", "host"}) {
    const Topology t = shipped(name);
    EXPECT_EQ(t.name, name);
    EXPECT_FALSE(t.private_levels.empty());
  }
  EXPECT_EQ(shipped("numa").memory_ns, (std::vector<double>{102, 150, 208, 380}));  // Tale Table 2
}

TEST(SimTopology, BadFilesAreNamed) {
  Topology t;
  EXPECT_NE(load_topology("/nonexistent/x.toml", t).find("/nonexistent/x.toml"), std::string::npos);
}

// A directory of topology files, the test's own (tests run side by side):
// a host with known compute costs, and the files a test adds beside it.
class TopologyDir {
 public:
  TopologyDir()
      : dir_(std::filesystem::path(::testing::TempDir()) /
             (std::string("abyss-topologies-") + ::testing::UnitTest::GetInstance()->current_test_info()->name())) {
    std::filesystem::create_directories(dir_);
    write("host",
          "name = \"host\"\nlayout = \"numa\"\n[[private]]\nbytes = 32768\n[numa]\ncores_per_socket = 4\n"
          "memory_ns = [100]\n[compute]\nper_call_cycles = 7\nper_byte_cycles = 0.5\nrmw_cycles = 9\n");
  }
  ~TopologyDir() { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / (name + ".toml")).string();
    std::ofstream(path, std::ios::trunc) << text;
    return path;
  }

 private:
  std::filesystem::path dir_;
};

std::string mesh_with_compute(const std::string& compute) {
  return "name = \"m\"\nlayout = \"mesh\"\n[[private]]\nbytes = 32768\n[mesh]\nhop_cycles = 2\n[compute]\n" + compute;
}

TEST(SimTopology, ComputeLikeHostTakesItsCostsAndKeepsItsOwn) {
  TopologyDir dir;
  Topology t;
  ASSERT_EQ(load_topology(dir.write("m", mesh_with_compute("like = \"host\"\nrmw_cycles = 2\n")), t), "");
  EXPECT_EQ(t.compute.per_call_cycles, 7);
  EXPECT_EQ(t.compute.per_byte_cycles, 0.5);
  EXPECT_EQ(t.compute.rmw_cycles, 2);
  // The shipped numa file takes the shipped host's costs; the mesh has the
  // Abyss tile's own (abyss sim tile), so it names every one.
  EXPECT_EQ(shipped("numa").compute.per_byte_cycles, shipped("host").compute.per_byte_cycles);
  EXPECT_EQ(shipped("numa").compute.per_call_cycles, shipped("host").compute.per_call_cycles);
  EXPECT_GT(shipped("mesh").compute.per_byte_cycles, 0);
  EXPECT_EQ(shipped("mesh").compute.rmw_cycles, 2);
}

TEST(SimTopology, ComputeLikeIsRefusedWhenMissingNestedOrAPath) {
  TopologyDir dir;
  Topology t;
  EXPECT_NE(load_topology(dir.write("m", mesh_with_compute("like = \"nowhere\"\n")), t).find("nowhere.toml"),
            std::string::npos);
  dir.write("chain", mesh_with_compute("like = \"host\"\n"));
  EXPECT_NE(load_topology(dir.write("m", mesh_with_compute("like = \"chain\"\n")), t).find("itself 'like'"),
            std::string::npos);
  EXPECT_NE(load_topology(dir.write("m", mesh_with_compute("like = \"../host\"\n")), t).find("beside this file"),
            std::string::npos);
}

// Each core adds to one shared counter; every add is a read-modify-write of
// one line, so adds serialise and the run takes longer with more cores.
uint64_t counter_run(uint32_t cores, uint32_t adds, std::vector<uint64_t>* order = nullptr) {
  EXPECT_EQ(configure(cores, shipped("mesh")), "");
  alignas(64) Atomic<uint64_t> counter{0};
  std::vector<std::vector<uint64_t>> seen(cores);
  const uint64_t start = now_ps();
  run(cores, [&](uint32_t i) {
    for (uint32_t k = 0; k < adds; k++) seen[i].push_back(counter.fetch_add(1, memory_order_relaxed));
  });
  EXPECT_EQ(counter.load(memory_order_relaxed), uint64_t{cores} * adds);
  if (order != nullptr) {
    order->clear();
    for (const auto& s : seen) order->insert(order->end(), s.begin(), s.end());
  }
  return now_ps() - start;
}

// Every heap block starts on a line (sim/new.cc), so the objects that share
// a line are one allocation's, whatever was allocated before it.
TEST(SimHeap, EveryAllocationStartsOnALine) {
  std::vector<std::unique_ptr<char[]>> blocks;
  for (const std::size_t bytes : {0, 1, 8, 16, 24, 63, 64, 65, 200, 4096}) {
    blocks.push_back(std::make_unique<char[]>(bytes));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(blocks.back().get()) % kCacheLine, 0u) << bytes << " bytes";
  }
  const auto one = std::make_unique<uint64_t>(1);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(one.get()) % kCacheLine, 0u);
}

TEST(SimMachine, ContendedCounterSerialises) {
  const uint64_t one = counter_run(1, 1000);
  const uint64_t many = counter_run(64, 1000);
  // 64x the adds on one line: far more than 64x/64 = the same time.
  EXPECT_GT(many, 10 * one);
}

TEST(SimMachine, SameProgramSameInterleaving) {
  std::vector<uint64_t> a;
  std::vector<uint64_t> b;
  const uint64_t ta = counter_run(16, 200, &a);
  const uint64_t tb = counter_run(16, 200, &b);
  EXPECT_EQ(ta, tb);
  EXPECT_EQ(a, b);
}

// Two cores: one writes `flag` after a millisecond of virtual time, the
// other runs `wait(flag)`. Answers how long the waiter took.
template <class Wait>
uint64_t woken_after_a_write(Wait&& wait) {
  EXPECT_EQ(configure(2, shipped("mesh")), "");
  alignas(64) Atomic<bool> flag{false};
  uint64_t seen_at = 0;
  run(2, [&](uint32_t i) {
    if (i == 0) {
      sleep_ms(1);
      flag.store(true, memory_order_release);
    } else {
      const uint64_t t0 = wall_ns();
      wait(flag);
      seen_at = wall_ns() - t0;
    }
  });
  return seen_at;
}

TEST(SimMachine, WaitParksUntilTheLineIsWritten) {
  const uint64_t seen_at = woken_after_a_write([](Atomic<bool>& flag) {
    SpinWait w;
    while (!flag.load(memory_order_acquire)) w.once();
  });
  // Woken by the write, within a microsecond of it; the condition read one
  // line, so the waiter slept through the millisecond in one park, with no
  // polling step (the sleeper parks once too).
  EXPECT_GE(seen_at, 1'000'000u);
  EXPECT_LT(seen_at, 1'000'000u + 1000);
  EXPECT_LE(stats().parks, 3u);
}

// A wait whose condition takes a latch waits inside a wait (an MCS latch's
// release waiting for its successor to link): the inner wait must not drop
// the line the outer condition read, or the outer one sleeps on the inner
// one's line, which nobody writes again.
TEST(SimMachine, AWaitInsideAWaitKeepsTheOuterConditionsLine) {
  alignas(64) Atomic<bool> inner{true};
  const uint64_t seen_at = woken_after_a_write([&](Atomic<bool>& flag) {
    SpinWait outer;
    while (!flag.load(memory_order_acquire)) {
      {
        SpinWait nested;  // satisfied at once: reads its line, never steps
        while (!inner.load(memory_order_acquire)) nested.once();
      }
      outer.once();
    }
  });
  EXPECT_GE(seen_at, 1'000'000u);
  EXPECT_LT(seen_at, 1'000'000u + 1000);
}

// The queue latch on simulated cores: every acquisition excludes the others
// and hands over in turn, also when the holder takes it inside a wait (as
// the T/O schemes take a row's latch in their retry loop).
TEST(SimMachine, QueueLatchExcludesAndHandsOverInsideWaits) {
  ASSERT_EQ(configure(4, shipped("mesh")), "");
  Latch latch;
  alignas(64) Atomic<uint64_t> turn{0};
  uint64_t inside = 0;
  uint64_t total = 0;
  run(4, [&](uint32_t i) {
    for (uint32_t k = 0; k < 200; k++) {
      SpinWait outer;  // wait for this core's turn, taking the latch to look
      for (;;) {
        {
          Latch::Guard g(latch, LatchKind::Queue);
          EXPECT_EQ(inside++, 0u);
          total++;
          inside--;
          if (turn.load(memory_order_acquire) % 4 == i) {
            turn.fetch_add(1, memory_order_acq_rel);
            break;
          }
        }
        outer.once();
      }
    }
  });
  EXPECT_EQ(turn.load(memory_order_relaxed), 800u);
  EXPECT_GE(total, 800u);
}

// A write that lands after the waiter read its condition but before it
// spins (another core ran while the waiter read its next line) has already
// happened when it spins: it must read the condition again, not sleep until
// a write that was the last. (WOUND_WAIT at 2 cores waited so for a grant
// made between its two reads, and the run ended in a stall.)
TEST(SimMachine, AWriteBetweenTheReadAndTheSpinIsNotMissed) {
  ASSERT_EQ(configure(2, shipped("mesh")), "");
  alignas(64) Atomic<bool> flag{false};
  struct alignas(64) Line {
    Atomic<uint32_t> v{0};
  };
  std::vector<Line> cold(3);  // with the flag, no more lines than a core watches
  bool seen = false;
  uint64_t loads_ns = 0;
  run(2, [&](uint32_t i) {
    if (i == 0) {
      sleep_ns(100);
      flag.store(true, memory_order_release);
      return;  // writes nothing more
    }
    SpinWait w;
    for (;;) {
      const uint64_t t0 = wall_ns();
      if (flag.load(memory_order_acquire)) break;
      for (auto& l : cold) (void)l.v.load(memory_order_acquire);  // misses to memory: the other core writes meanwhile
      if (loads_ns == 0) loads_ns = wall_ns() - t0;
      w.once();
    }
    seen = true;
  });
  EXPECT_TRUE(seen);
  EXPECT_GT(loads_ns, 100u);  // the write did fall between the read and the spin
}

TEST(SimMachine, AWaitWithADeadlineWakesAtItWhenNothingIsWritten) {
  ASSERT_EQ(configure(2, shipped("mesh")), "");
  alignas(64) Atomic<bool> flag{false};
  uint64_t waited = 0;
  run(1, [&](uint32_t /*i*/) {
    const uint64_t t0 = cycles();
    const uint64_t until = t0 + 50'000;  // 50 us at 1 GHz
    SpinWait w;
    w.until(until);
    while (!flag.load(memory_order_acquire) && cycles() < until) w.once();
    waited = cycles() - t0;
  });
  EXPECT_GE(waited, 50'000u);
  EXPECT_LT(waited, 50'100u);
  EXPECT_LE(stats().parks, 2u);
}

TEST(SimMachine, AFailedSwapIsWatchedAndAConditionOfManyLinesPolls) {
  ASSERT_EQ(configure(2, shipped("mesh")), "");
  alignas(64) Atomic<uint32_t> word{1};
  run(2, [&](uint32_t i) {
    if (i == 0) {
      sleep_ms(1);
      word.store(0, memory_order_release);
    } else {
      SpinWait w;
      uint32_t expected = 0;
      while (!word.compare_exchange_strong(expected, 2, memory_order_acq_rel)) {
        expected = 0;
        w.once();
      }
    }
  });
  // The failed swaps read the word: the waiter slept until it was written.
  EXPECT_EQ(word.load(memory_order_relaxed), 2u);
  EXPECT_LE(stats().parks, 3u);

  // A condition that reads more lines than a core watches also polls.
  struct alignas(64) Line {
    Atomic<uint32_t> v{0};
  };
  std::vector<Line> lines(8);
  run(2, [&](uint32_t i) {
    if (i == 0) {
      sleep_ms(1);
      lines[7].v.store(1, memory_order_release);
    } else {
      SpinWait w;
      for (;;) {
        uint32_t sum = 0;
        for (auto& l : lines) sum += l.v.load(memory_order_acquire);
        if (sum != 0) break;
        w.once();
      }
    }
  });
  // 16 steps of 1 us, then steps of 20 us: about 65 in the millisecond.
  EXPECT_GT(stats().parks, 40u);
  EXPECT_LT(stats().parks, 100u);
}

TEST(SimMachine, CoresWaitingForAWriteNoCoreMakesEndTheRunNamingThem) {
  ASSERT_EQ(configure(3, shipped("mesh")), "");
  alignas(64) Atomic<bool> never{false};
  try {
    run(3, [&](uint32_t i) {
      if (i == 0) return;
      SpinWait w;
      while (!never.load(memory_order_acquire)) w.once();
    });
    FAIL() << "the run should have ended with an error";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("core 1 on line"), std::string::npos) << what;
    EXPECT_NE(what.find("core 2 on line"), std::string::npos) << what;
    EXPECT_EQ(what.find("core 0"), std::string::npos) << what;
  }
}

// The cores a stall leaves waiting are never unwound: their clean-up (an
// engine's abort that puts rows back) would run after the run, on objects
// gone by then (a stalled run ended in a segfault at the next run or at
// exit). The process ends with them.
TEST(SimMachine, AStalledRunsCoresAreNeverUnwound) {
  ASSERT_EQ(configure(2, shipped("mesh")), "");
  alignas(64) Atomic<bool> never{false};
  bool unwound = false;
  struct CleanUp {
    bool& ran;
    ~CleanUp() { ran = true; }
  };
  EXPECT_THROW(run(2,
                   [&](uint32_t i) {
                     if (i == 0) return;
                     const CleanUp clean{unwound};
                     SpinWait w;
                     while (!never.load(memory_order_acquire)) w.once();
                   }),
               std::runtime_error);
  run(2, [](uint32_t /*i*/) {});  // a run after it starts afresh
  EXPECT_FALSE(unwound);
}

// Memory taken while a PlaceOnNode lives is homed on its node: a core reads
// its own socket's at the near latency and the other socket's at the far
// one; memory taken with none interleaves its pages over the sockets.
TEST(SimMachine, PlacedMemoryIsHomedOnItsNode) {
  TopologyDir dir;
  Topology t;
  ASSERT_EQ(load_topology(dir.write("two",
                                    "name = \"two\"\nlayout = \"numa\"\n[[private]]\nbytes = 32768\n[shared]\n"
                                    "bytes = 1048576\nways = 16\n[numa]\ncores_per_socket = 1\n"
                                    "memory_ns = [100, 400]\n"),
                          t),
            "");
  ASSERT_EQ(configure(2, t), "");
  EXPECT_EQ(platform::memory_nodes(), 2u);
  constexpr std::size_t kBytes = std::size_t{1} << 16;  // 16 pages
  char* near = nullptr;
  char* far = nullptr;
  {
    const platform::PlaceOnNode on(1);
    near = static_cast<char*>(map_zeroed(kBytes, false));
  }
  {
    const platform::PlaceOnNode on(0);
    far = static_cast<char*>(map_zeroed(kBytes, false));
  }
  auto* unplaced = static_cast<char*>(map_zeroed(kBytes, false));
  ASSERT_TRUE(near != nullptr && far != nullptr && unplaced != nullptr);
  const auto read_ps = [](const char* p) {
    const uint64_t t0 = now_ps();
    access(p, Op::Load);
    return now_ps() - t0;
  };
  uint32_t node = 9;
  uint64_t near_ps = 0;
  uint64_t far_ps = 0;
  uint32_t unplaced_near = 0;
  uint32_t unplaced_far = 0;
  run(2, [&](uint32_t i) {
    if (i != 1) return;
    node = platform::current_node();
    near_ps = read_ps(near);
    far_ps = read_ps(far);
    for (std::size_t at = 0; at < kBytes; at += kCacheLine)
      (read_ps(unplaced + at) < 200'000 ? unplaced_near : unplaced_far)++;
  });
  EXPECT_EQ(node, 1u);
  EXPECT_GE(near_ps, 100'000u);
  EXPECT_LT(near_ps, 200'000u);
  EXPECT_GE(far_ps, 400'000u);
  EXPECT_EQ(unplaced_near, unplaced_far);  // 1,024 lines: 8 pages on each socket
  unmap(near, kBytes, false);
  unmap(far, kBytes, false);
  unmap(unplaced, kBytes, false);
}

TEST(SimMachine, ExceptionsEndTheRunAndAreRethrown) {
  ASSERT_EQ(configure(4, shipped("mesh")), "");
  EXPECT_THROW(run(4,
                   [](uint32_t i) {
                     if (i == 2) throw std::runtime_error("core 2 failed");
                   }),
               std::runtime_error);
}

}  // namespace
}  // namespace abyss::platform::sim
