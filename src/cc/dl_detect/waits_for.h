#pragma once
// The partitioned, lock-free waits-for graph of DL_DETECT (Abyss §4.2). Each
// worker publishes, in its own slot, whom its waiting transaction waits for;
// no worker writes another's edges. A waiting worker searches for a cycle
// through itself by reading other slots without locks (a seqlock gives each
// slot a consistent snapshot); a stale read can delay detection to a later
// pass but cannot invent an edge, because an edge names the transaction
// (worker and timestamp) it waits for and counts only while that same
// transaction is still waiting.
#include <array>
#include <cstdint>
#include <vector>

#include "platform/atomic.h"

namespace abyss::cc {

class WaitsForGraph final {
 public:
  static constexpr uint32_t kMaxEdges = 32;  // more are dropped; the timeout still bounds the wait

  struct Edge {
    uint32_t worker;
    uint64_t ts;
  };

  explicit WaitsForGraph(uint32_t workers) : slots_(workers), scratch_(workers) {
    for (auto& s : scratch_) {
      s.edges.resize(static_cast<std::size_t>(workers) * kMaxEdges + kMaxEdges);
      s.frames.reserve(workers + 1);
      s.visited.assign(workers, 0);
    }
  }

  // Publishes that `worker`'s transaction `ts` waits for `edges`.
  void publish(uint32_t worker, uint64_t ts, const Edge* edges, uint32_t n) {
    Slot& s = slots_[worker];
    const uint64_t seq = s.seq.load(platform::memory_order_relaxed);
    s.seq.store(seq + 1, platform::memory_order_relaxed);
    platform::fence();
    if (n > kMaxEdges) n = kMaxEdges;
    for (uint32_t i = 0; i < n; i++) {
      s.to_worker[i].store(edges[i].worker, platform::memory_order_relaxed);
      s.to_ts[i].store(edges[i].ts, platform::memory_order_relaxed);
    }
    s.n.store(n, platform::memory_order_relaxed);
    s.waiter_ts.store(ts, platform::memory_order_relaxed);
    s.seq.store(seq + 2, platform::memory_order_release);
  }

  void clear(uint32_t worker) {
    Slot& s = slots_[worker];
    const uint64_t seq = s.seq.load(platform::memory_order_relaxed);
    s.seq.store(seq + 1, platform::memory_order_relaxed);
    platform::fence();
    s.waiter_ts.store(0, platform::memory_order_relaxed);
    s.n.store(0, platform::memory_order_relaxed);
    s.seq.store(seq + 2, platform::memory_order_release);
  }

  // Whether a detector chose `worker`'s transaction `ts` as a victim.
  bool abort_requested(uint32_t worker, uint64_t ts) const {
    return slots_[worker].abort_ts.load(platform::memory_order_acquire) == ts;
  }

  // Searches for a cycle through `me` (waiting as transaction `my_ts`). On a
  // cycle, the youngest transaction on it is the victim: returns true when
  // that is `me`, otherwise asks the victim to abort and returns false.
  bool detect(uint32_t me, uint64_t my_ts) {
    Scratch& sc = scratch_[me];
    sc.epoch++;
    sc.frames.clear();
    uint32_t used = 0;
    auto push = [&](uint32_t w, uint64_t ts) -> bool {
      const uint32_t n = snapshot(w, ts, &sc.edges[used]);
      if (n == kStale) return false;
      sc.frames.push_back({w, ts, used, used + n});
      used += n;
      return true;
    };
    if (!push(me, my_ts)) return false;
    sc.visited[me] = sc.epoch;
    while (!sc.frames.empty()) {
      Frame& f = sc.frames.back();
      if (f.next == f.end) {
        used = f.begin_of_edges;  // frames are stacked: pop this one's edges
        sc.frames.pop_back();
        continue;
      }
      const Edge e = sc.edges[f.next++];
      if (e.worker == me && e.ts == my_ts) return resolve(me, my_ts, sc);
      if (sc.visited[e.worker] == sc.epoch) continue;
      sc.visited[e.worker] = sc.epoch;
      push(e.worker, e.ts);
    }
    return false;
  }

 private:
  static constexpr uint32_t kStale = ~0u;

  struct alignas(platform::kCacheLine) Slot {
    platform::Atomic<uint64_t> seq{0};
    platform::Atomic<uint64_t> waiter_ts{0};  // 0: not waiting
    platform::Atomic<uint64_t> abort_ts{0};
    platform::Atomic<uint32_t> n{0};
    std::array<platform::Atomic<uint32_t>, kMaxEdges> to_worker{};
    std::array<platform::Atomic<uint64_t>, kMaxEdges> to_ts{};
  };

  struct Frame {
    uint32_t worker;
    uint64_t ts;
    uint32_t begin_of_edges;
    uint32_t end;
    uint32_t next;
    Frame(uint32_t w, uint64_t t, uint32_t b, uint32_t e) : worker(w), ts(t), begin_of_edges(b), end(e), next(b) {}
  };

  // Per-detecting-worker search state, preallocated.
  struct alignas(platform::kCacheLine) Scratch {
    std::vector<Edge> edges;
    std::vector<Frame> frames;
    std::vector<uint32_t> visited;
    uint32_t epoch = 0;
  };

  // Copies w's edges if w is still waiting as transaction ts; kStale if not.
  uint32_t snapshot(uint32_t w, uint64_t ts, Edge* out) const {
    const Slot& s = slots_[w];
    const uint64_t seq = s.seq.load(platform::memory_order_acquire);
    if ((seq & 1) != 0 || s.waiter_ts.load(platform::memory_order_relaxed) != ts) return kStale;
    uint32_t n = s.n.load(platform::memory_order_relaxed);
    if (n > kMaxEdges) n = kMaxEdges;
    for (uint32_t i = 0; i < n; i++) {
      out[i] = {s.to_worker[i].load(platform::memory_order_relaxed), s.to_ts[i].load(platform::memory_order_relaxed)};
    }
    platform::fence();
    return s.seq.load(platform::memory_order_relaxed) == seq ? n : kStale;
  }

  bool resolve(uint32_t me, uint64_t my_ts, const Scratch& sc) {
    uint32_t victim = me;
    uint64_t victim_ts = my_ts;
    for (const Frame& f : sc.frames) {
      if (f.ts > victim_ts) {
        victim = f.worker;
        victim_ts = f.ts;
      }
    }
    if (victim == me) return true;
    slots_[victim].abort_ts.store(victim_ts, platform::memory_order_release);
    return false;
  }

  std::vector<Slot> slots_;
  std::vector<Scratch> scratch_;
};

}  // namespace abyss::cc
