#pragma once
// The partitioned, lock-free waits-for graph of DL_DETECT (Abyss §4.2). Each
// worker publishes, in its own slot, whom its waiting transaction waits for;
// no worker writes another's edges. A waiting worker searches for a cycle
// through itself by reading other slots without locks (a seqlock gives each
// slot a consistent snapshot); a stale read can delay detection to a later
// pass but cannot invent an edge, because an edge names the transaction
// (worker and id) it waits for and counts only while that same transaction
// is still waiting. A waiter also publishes how many locks it holds: the
// victim on a cycle is the one holding the fewest.
//
// A waiter publishes at most --dl-max-edges (default 32) edges; more are
// dropped, and the lock-wait timeout still bounds the wait. Every buffer is
// sized for that cap when the graph is built, so publishing and searching
// allocate nothing.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <vector>

#include "cc/common/atomic_timestamp.h"
#include "common/types.h"
#include "platform/atomic.h"

namespace abyss::cc {

class WaitsForGraph final {
 public:
  struct Edge {
    WorkerId worker;
    Timestamp ts;
  };

  // `max_edges`: the most edges a waiter publishes. A transaction holds or
  // queues one request per row, so a waiter waits for at most one transaction
  // of each other worker: a cap above `workers` keeps no more.
  WaitsForGraph(uint32_t workers, uint32_t max_edges)
      : max_edges_(std::clamp(max_edges, 1u, std::max(workers, 1u))),
        published_stride_(whole_lines<PublishedEdge>(max_edges_)),
        out_stride_(whole_lines<Edge>(max_edges_)),
        slots_(workers),
        published_(allocate_lines<PublishedEdge>(std::size_t{workers} * published_stride_)),
        out_(allocate_lines<Edge>(std::size_t{workers} * out_stride_)),
        scratch_(workers) {
    for (uint32_t w = 0; w < workers; w++) slots_[w].edges = &published_[std::size_t{w} * published_stride_];
    for (auto& s : scratch_) {
      // A search stacks a frame's edges per worker on its path; it grows
      // the buffer when a path is long (workers * max_edges at most).
      s.edges.resize(std::size_t{4} * max_edges_);
      s.frames.reserve(workers + 1);
      s.visited.assign(workers, 0);
    }
  }

  uint32_t max_edges() const { return max_edges_; }

  // `worker`'s buffer of max_edges() edges to gather whom it waits for
  // before publish(); only that worker uses it.
  Edge* outgoing(WorkerId worker) { return &out_[std::size_t{worker.value} * out_stride_]; }

  // Publishes that `worker`'s transaction `ts`, holding `locks` locks,
  // waits for `edges`.
  void publish(WorkerId worker, Timestamp ts, uint32_t locks, const Edge* edges, uint32_t n) {
    Slot& s = slots_[worker.value];
    const uint64_t seq = s.seq.load(platform::memory_order_relaxed);
    s.seq.store(seq + 1, platform::memory_order_relaxed);
    platform::fence();
    if (n > max_edges_) n = max_edges_;
    for (uint32_t i = 0; i < n; i++) {
      s.edges[i].worker.store(edges[i].worker.value, platform::memory_order_relaxed);
      s.edges[i].ts.store(edges[i].ts, platform::memory_order_relaxed);
    }
    s.n.store(n, platform::memory_order_relaxed);
    s.locks.store(locks, platform::memory_order_relaxed);
    s.waiter_ts.store(ts, platform::memory_order_relaxed);
    s.seq.store(seq + 2, platform::memory_order_release);
  }

  void clear(WorkerId worker) {
    Slot& s = slots_[worker.value];
    const uint64_t seq = s.seq.load(platform::memory_order_relaxed);
    s.seq.store(seq + 1, platform::memory_order_relaxed);
    platform::fence();
    s.waiter_ts.store(kNoTimestamp, platform::memory_order_relaxed);
    s.n.store(0, platform::memory_order_relaxed);
    s.seq.store(seq + 2, platform::memory_order_release);
  }

  // Whether a detector chose `worker`'s transaction `ts` as a victim.
  bool abort_requested(WorkerId worker, Timestamp ts) const {
    return slots_[worker.value].abort_ts.load(platform::memory_order_acquire) == ts;
  }

  // Searches for a cycle through `me` (waiting as transaction `my_ts`). On a
  // cycle, the transaction on it holding the fewest locks is the victim (the
  // later id among equals): returns true when that is `me`, otherwise asks
  // the victim to abort and returns false.
  bool detect(WorkerId me, Timestamp my_ts) {
    Scratch& sc = scratch_[me.value];
    sc.epoch++;
    sc.frames.clear();
    uint32_t used = 0;
    auto push = [&](WorkerId w, Timestamp ts) -> bool {
      if (sc.edges.size() < std::size_t{used} + max_edges_) sc.edges.resize(2 * (std::size_t{used} + max_edges_));
      uint32_t locks = 0;
      const uint32_t n = snapshot(w, ts, &sc.edges[used], locks);
      if (n == kStale) return false;
      sc.frames.push_back({w, ts, locks, used, used + n});
      used += n;
      return true;
    };
    if (!push(me, my_ts)) return false;
    sc.visited[me.value] = sc.epoch;
    while (!sc.frames.empty()) {
      Frame& f = sc.frames.back();
      if (f.next == f.end) {
        used = f.begin_of_edges;  // frames are stacked: pop this one's edges
        sc.frames.pop_back();
        continue;
      }
      const Edge e = sc.edges[f.next++];
      if (e.worker == me && e.ts == my_ts) return resolve(me, my_ts, sc);
      if (sc.visited[e.worker.value] == sc.epoch) continue;
      sc.visited[e.worker.value] = sc.epoch;
      push(e.worker, e.ts);
    }
    return false;
  }

 private:
  static constexpr uint32_t kStale = ~0u;

  struct PublishedEdge {
    platform::Atomic<uint32_t> worker{0};
    AtomicTimestamp ts;
  };

  struct alignas(platform::kCacheLine) Slot {
    platform::Atomic<uint64_t> seq{0};
    AtomicTimestamp waiter_ts;  // kNoTimestamp: not waiting
    AtomicTimestamp abort_ts;
    platform::Atomic<uint32_t> n{0};
    platform::Atomic<uint32_t> locks{0};  // the waiter holds
    PublishedEdge* edges = nullptr;       // max_edges_ of them, on cache lines of this slot's own
  };

  // Per-worker arrays of T start on a cache line of their own: `n` rounded
  // up to whole lines.
  template <class T>
  static uint32_t whole_lines(uint32_t n) {
    static_assert(platform::kCacheLine % sizeof(T) == 0);
    constexpr uint32_t kPerLine = platform::kCacheLine / sizeof(T);
    return (n + kPerLine - 1) / kPerLine * kPerLine;
  }
  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  template <class T>
  using Lines = std::unique_ptr<T[], Free>;
  // `n` value-initialised T (n in whole lines), cache-line aligned.
  template <class T>
  static Lines<T> allocate_lines(std::size_t n) {
    void* p = std::aligned_alloc(platform::kCacheLine, std::max<std::size_t>(n * sizeof(T), platform::kCacheLine));
    if (p == nullptr) throw std::bad_alloc();
    auto* items = static_cast<T*>(p);
    for (std::size_t i = 0; i < n; i++) new (&items[i]) T{};
    return Lines<T>(items);
  }

  struct Frame {
    WorkerId worker;
    Timestamp ts;
    uint32_t locks;
    uint32_t begin_of_edges;
    uint32_t end;
    uint32_t next;
    Frame(WorkerId w, Timestamp t, uint32_t l, uint32_t b, uint32_t e)
        : worker(w), ts(t), locks(l), begin_of_edges(b), end(e), next(b) {}
  };

  // Per-detecting-worker search state, preallocated.
  struct alignas(platform::kCacheLine) Scratch {
    std::vector<Edge> edges;
    std::vector<Frame> frames;
    std::vector<uint32_t> visited;
    uint32_t epoch = 0;
  };

  // Copies w's edges and lock count if w is still waiting as transaction
  // ts; kStale if not.
  uint32_t snapshot(WorkerId w, Timestamp ts, Edge* out, uint32_t& locks) const {
    const Slot& s = slots_[w.value];
    const uint64_t seq = s.seq.load(platform::memory_order_acquire);
    if ((seq & 1) != 0 || s.waiter_ts.load(platform::memory_order_relaxed) != ts) return kStale;
    uint32_t n = s.n.load(platform::memory_order_relaxed);
    locks = s.locks.load(platform::memory_order_relaxed);
    if (n > max_edges_) n = max_edges_;
    for (uint32_t i = 0; i < n; i++) {
      out[i] = {WorkerId{s.edges[i].worker.load(platform::memory_order_relaxed)},
                s.edges[i].ts.load(platform::memory_order_relaxed)};
    }
    platform::fence();
    return s.seq.load(platform::memory_order_relaxed) == seq ? n : kStale;
  }

  bool resolve(WorkerId me, Timestamp my_ts, const Scratch& sc) {
    WorkerId victim = me;
    Timestamp victim_ts = my_ts;
    uint32_t victim_locks = ~0u;
    for (const Frame& f : sc.frames) {
      if (f.locks < victim_locks || (f.locks == victim_locks && f.ts > victim_ts)) {
        victim = f.worker;
        victim_ts = f.ts;
        victim_locks = f.locks;
      }
    }
    if (victim == me) return true;
    slots_[victim.value].abort_ts.store(victim_ts, platform::memory_order_release);
    return false;
  }

  uint32_t max_edges_;
  uint32_t published_stride_;  // published edges of each slot
  uint32_t out_stride_;        // edges of each worker's outgoing() buffer
  std::vector<Slot> slots_;
  Lines<PublishedEdge> published_;  // every slot's published edges
  Lines<Edge> out_;                 // every worker's outgoing() buffer
  std::vector<Scratch> scratch_;
};

}  // namespace abyss::cc
