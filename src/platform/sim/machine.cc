#include "platform/sim/machine.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <boost/context/fiber.hpp>
#include <boost/context/protected_fixedsize_stack.hpp>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <exception>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "platform/sim/cache.h"
#include "platform/sim/mapped.h"

namespace abyss::platform::sim {

namespace {

namespace ctx = boost::context;

constexpr uint32_t kIdBits = 12;  // a scheduling key is (clock << kIdBits) | core
static_assert(kMaxCores == 1u << kIdBits, "a scheduling key holds a core index");
constexpr uint64_t kNever = ~uint64_t{0};
constexpr uint32_t kScheduler = ~0u;  // the run's own fiber, in place of a core index
constexpr uint16_t kNoOwner = 0xffff;
constexpr std::size_t kStackBytes = std::size_t{256} * 1024;
constexpr uint32_t kWatchLines = 4;
// A touch of more lines than this is a block (docs/many-core.md).
constexpr uint32_t kLinesPerBlock = 2;
// Keys hold 52 bits of picoseconds (75 minutes of virtual time); one wait is
// at most a minute.
constexpr uint64_t kLongestWaitPs = 60ull * 1000 * 1000 * 1000 * 1000;
constexpr uint64_t kNoDeadline = (uint64_t{1} << (64 - kIdBits)) - 1;
constexpr uint64_t kNoDeadlineCycles = ~uint64_t{0};
// Host seconds a core may run without reaching the platform before the
// watchdog ends the process (a loop with no wait and no shared access).
constexpr int kWatchdogSeconds = 60;

uint64_t key_of(uint64_t clock_ps, uint32_t core) { return (clock_ps << kIdBits) | core; }
uint64_t time_of(uint64_t key) { return key >> kIdBits; }

// A binary min-heap of cores by scheduling key, with each core's position so
// a parked core's key can be lowered when the line it waits on is written.
class CoreHeap final {
 public:
  void reset(uint32_t cores) {
    heap_.clear();
    pos_.assign(cores, kAbsent);
    key_.assign(cores, kNever);
  }
  bool empty() const { return heap_.empty(); }
  uint64_t top_key() const { return heap_.empty() ? kNever : key_[heap_[0]]; }
  uint64_t key(uint32_t c) const { return key_[c]; }
  bool contains(uint32_t c) const { return pos_[c] != kAbsent; }

  void push(uint32_t c, uint64_t k) {
    key_[c] = k;
    pos_[c] = static_cast<uint32_t>(heap_.size());
    heap_.push_back(c);
    up(pos_[c]);
  }
  uint32_t pop() {
    const uint32_t c = heap_[0];
    pos_[c] = kAbsent;
    const uint32_t last = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) {
      heap_[0] = last;
      pos_[last] = 0;
      down(0);
    }
    return c;
  }
  // Pushes c with key k and pops the core with the smallest key: what push
  // then pop answers (c itself if k is the smallest), with one sift instead
  // of two. Keys are unique (they hold the core index), so the order cores
  // leave the heap in does not depend on its arrangement.
  uint32_t push_pop(uint32_t c, uint64_t k) {
    key_[c] = k;
    if (heap_.empty() || k < key_[heap_[0]]) return c;
    const uint32_t top = heap_[0];
    pos_[top] = kAbsent;
    heap_[0] = c;
    pos_[c] = 0;
    down(0);
    return top;
  }
  // Lowers c's key (never raises it).
  void lower(uint32_t c, uint64_t k) {
    if (k >= key_[c]) return;
    key_[c] = k;
    up(pos_[c]);
  }

 private:
  static constexpr uint32_t kAbsent = ~0u;
  void up(uint32_t i) {
    while (i > 0) {
      const uint32_t parent = (i - 1) / 2;
      if (key_[heap_[parent]] <= key_[heap_[i]]) break;
      swap(i, parent);
      i = parent;
    }
  }
  void down(uint32_t i) {
    const auto n = static_cast<uint32_t>(heap_.size());
    for (;;) {
      const uint32_t l = 2 * i + 1;
      if (l >= n) break;
      uint32_t m = l;
      if (l + 1 < n && key_[heap_[l + 1]] < key_[heap_[l]]) m = l + 1;
      if (key_[heap_[i]] <= key_[heap_[m]]) break;
      swap(i, m);
      i = m;
    }
  }
  void swap(uint32_t a, uint32_t b) {
    std::swap(heap_[a], heap_[b]);
    pos_[heap_[a]] = a;
    pos_[heap_[b]] = b;
  }
  std::vector<uint32_t> heap_;
  std::vector<uint32_t> pos_;
  std::vector<uint64_t> key_;
};

// What the machine knows of one cache line: its number, the version of its
// data (a global write count), the core holding it modified, how many
// cores read it since it was last written, its home, and until when a
// transfer keeps it busy. 32 bytes, so a state never straddles two host cache lines.
struct alignas(32) LineState {
  uint32_t line = 0;  // 0: none (the machine numbers lines from 1)
  uint32_t version = 0;
  uint64_t busy_until = 0;
  uint16_t owner = kNoOwner;
  uint16_t sharers = 0;
  uint16_t home = 0;     // the slice (mesh) or socket (numa) whose memory holds it
  bool watched = false;  // a core waits for it to be written (watchers_)
  bool queued = false;   // cores wait for its transfer to end (queues_)
};

// The lines a run has touched: the machine's own number for each host line
// and each line's state (a full-map directory: no line is ever dropped).
// Host addresses differ from process to process (address-space
// randomisation moves the heap by pages and the main stack by less), and
// the caches' sets, the lines' homes and every order that derives from line
// numbers would follow them; numbering lines in the order the run first
// touches them makes those a function of the run alone. (Which objects
// share a host line is the program's layout: every heap block starts on a
// line, sim/new.cc, and data the cores share is allocated on the heap or
// aligned to lines.) Host lines are found as a
// page table finds pages: a root per 2^24 host lines, each a leaf of line
// numbers that the kernel zeroes as its pages are first used; states lie in
// chunks by number. A lookup is two dependent reads, the leaf's word and
// the state.
class LineTable final {
 public:
  LineTable() : roots_(kRoots) {}

  // Forgets every line (a run starts with none numbered).
  void clear() {
    for (uint64_t r : used_roots_) roots_[r] = Mapped<uint32_t>();
    used_roots_.clear();
    count_ = 0;
  }

  // The machine's number for a host line, numbering it (and making its
  // state, at data version `version`, homed at `home_of(host_line, number)`)
  // the first time.
  template <class HomeOf>
  uint64_t number(uint64_t host_line, uint32_t version, HomeOf&& home_of) {
    const uint64_t r = host_line >> kLeafBits;
    if (r >= kRoots) throw std::logic_error("a host address beyond 47 bits");
    Mapped<uint32_t>& leaf = roots_[r];
    if (leaf.empty()) {
      leaf = Mapped<uint32_t>(kLeafLines, true);
      used_roots_.push_back(r);
    }
    uint32_t& n = leaf[host_line & (kLeafLines - 1)];
    if (n == 0) {
      if (count_ + 1 == uint64_t{1} << 32) throw std::length_error("more than 2^32 simulated lines");
      n = static_cast<uint32_t>(++count_);
      if ((n >> kChunkBits) == chunks_.size()) chunks_.emplace_back(kChunkLines, true);
      LineState& s = state(n);
      s = LineState{};
      s.line = n;
      s.version = version;
      s.home = static_cast<uint16_t>(home_of(host_line, n));
    }
    return n;
  }

  LineState& state(uint64_t line) { return chunks_[line >> kChunkBits][line & (kChunkLines - 1)]; }

 private:
  static constexpr uint32_t kLeafBits = 24;
  static constexpr uint64_t kLeafLines = uint64_t{1} << kLeafBits;
  static constexpr uint64_t kRoots = uint64_t{1} << (47 - 6 - kLeafBits);  // 47-bit user addresses
  static constexpr uint32_t kChunkBits = 16;                               // 2 MiB of states
  static constexpr uint64_t kChunkLines = uint64_t{1} << kChunkBits;

  std::vector<Mapped<uint32_t>> roots_;
  std::vector<uint64_t> used_roots_;
  std::vector<Mapped<LineState>> chunks_;
  uint64_t count_ = 0;
};

// Memory placed on a node (PlaceOnNode), as host lines [first_line, end_line).
struct PlacedRange {
  uint64_t first_line = 0;
  uint64_t end_line = 0;
  uint32_t node = 0;
};

// The placed memory not yet released, by start address. Loaders take and
// release memory on host threads while no run is in progress; a run reads
// the ranges once, as it starts.
class Placements final {
 public:
  void taken(const void* p, std::size_t bytes, uint32_t node) {
    const auto start = reinterpret_cast<uintptr_t>(p);
    const std::lock_guard<std::mutex> hold(mu_);
    by_start_[start] = PlacedRange{start >> 6, (start + bytes + 63) >> 6, node};
    any_.store(true, std::memory_order_relaxed);
  }
  void released(const void* p) {
    if (!any_.load(std::memory_order_relaxed)) return;
    const std::lock_guard<std::mutex> hold(mu_);
    by_start_.erase(reinterpret_cast<uintptr_t>(p));
    any_.store(!by_start_.empty(), std::memory_order_relaxed);
  }
  // By first line: the placements do not overlap.
  std::vector<PlacedRange> ranges() const {
    const std::lock_guard<std::mutex> hold(mu_);
    std::vector<PlacedRange> out;
    out.reserve(by_start_.size());
    for (const auto& [start, r] : by_start_) out.push_back(r);
    return out;
  }

 private:
  mutable std::mutex mu_;
  std::map<uintptr_t, PlacedRange> by_start_;
  std::atomic<bool> any_{false};
};

Placements& placements() {
  static Placements p;
  return p;
}
std::vector<PlacedRange> placed_ranges() { return placements().ranges(); }

struct Core {
  ctx::fiber fiber;  // the core's own context while it is not running
  uint64_t clock = 0;
  uint64_t wake_key = 0;  // while parked: when it resumes at the latest
  uint32_t id = 0;
  uint32_t place = 0;  // tile (mesh) or core slot (numa)
  uint32_t socket = 0;
  bool parked = false;
  bool done = false;
  // The lines loaded since the outermost wait began or last woke: what its
  // wait condition read. More than kWatchLines of them and the set is not
  // the whole condition (watch_lost()), so a wait polls as well.
  uint64_t watch[kWatchLines] = {};
  uint32_t watch_version[kWatchLines] = {};  // each line's data version when last read
  uint32_t watch_next = 0;                   // lines noted, with those that overwrote others
  uint32_t waits = 0;                        // SpinWaits alive on this core, nested
  std::vector<uint64_t> watching;
  std::vector<TagArray> caches;  // private levels, nearest first

  bool watch_lost() const { return watch_next > kWatchLines; }
};

class Machine final {
 public:
  Machine(uint32_t cores, Topology topo) : cores_(cores), topo_(std::move(topo)) {
    ps_per_cycle_ = 1000.0 / topo_.ghz;
    clock_read_ps_ = cycles(std::max(1.0, topo_.compute.clock_cycles));
    line_transfer_ps_ = cycles(topo_.line_transfer_cycles);
    if (topo_.layout == Layout::Mesh) {
      width_ = std::max<uint32_t>(1, static_cast<uint32_t>(std::floor(std::sqrt(static_cast<double>(cores_)))));
      slices_ = cores_;
      mean_hops_.resize(cores_);
      far_hops_.resize(cores_);
      for (uint32_t a = 0; a < cores_; a++) {
        uint64_t sum = 0;
        uint32_t far = 0;
        for (uint32_t b = 0; b < cores_; b++) {
          sum += hops(a, b);
          far = std::max(far, hops(a, b));
        }
        mean_hops_[a] = static_cast<double>(sum) / cores_;
        far_hops_[a] = far;
      }
      centre_ = (width_ / 2) * width_ + width_ / 2;
      if (centre_ >= cores_) centre_ = cores_ - 1;
      controllers_ = topo_.tiles_per_controller == 0 ? cores_ : std::max(1u, cores_ / topo_.tiles_per_controller);
    } else {
      const uint32_t per = std::max(1u, topo_.cores_per_socket);
      slices_ = (cores_ + per - 1) / per;  // the fewest sockets that hold the cores (Tale §2)
      controllers_ = slices_;
      centre_ = 0;
      for (uint32_t a = 0; a < slices_; a++) {
        uint32_t far = 0;
        for (uint32_t b = 0; b < slices_; b++) far = std::max(far, numa_distance(a, b));
        numa_invalidation_ps_.push_back(cycles(topo_.shared.latency_cycles) +
                                        static_cast<uint64_t>((memory_ns(far) - memory_ns(0)) * 1000));
      }
    }
  }

  uint32_t cores() const { return cores_; }
  const Topology& topology() const { return topo_; }
  uint32_t memory_nodes() const { return topo_.layout == Layout::Numa ? slices_ : 1; }
  uint32_t current_node() const { return cur_ != nullptr && topo_.layout == Layout::Numa ? cur_->socket : 0; }
  bool running() const { return cur_ != nullptr; }
  uint32_t current_id() const { return cur_->id; }
  uint64_t now() const { return cur_ != nullptr ? cur_->clock : base_; }

  void run(uint32_t n, const std::function<void(uint32_t)>& fn) {
    if (cur_ != nullptr) throw std::logic_error("a simulated run cannot start another");
    if (n > kMaxCores) throw std::invalid_argument("at most 4096 simulated cores");
    stats_ = Stats{};
    cold_caches();
    heap_.reset(n);
    run_cores_.clear();
    run_cores_.resize(n);
    std::exception_ptr first;
    for (uint32_t i = 0; i < n; i++) {
      Core& c = run_cores_[i];
      c.id = i;
      c.clock = base_;
      place(c, i < cores_ ? i : cores_ - 1);
      c.fiber = ctx::fiber(std::allocator_arg, ctx::protected_fixedsize_stack(kStackBytes),
                           [this, i, &fn, &first](ctx::fiber&& from) {
                             slot(hand_) = std::move(from);
                             Core& me = run_cores_[i];
                             try {
                               fn(i);
                             } catch (const ctx::detail::forced_unwind&) {
                               throw;
                             } catch (...) {
                               if (!first) first = std::current_exception();
                             }
                             me.done = true;
                             // The scheduler counts it; the fiber ends.
                             return std::move(scheduler_);
                           });
      heap_.push(i, key_of(c.clock, i));
    }
    Watchdog dog(progress_);
    uint32_t ended = 0;
    // The cores pass control among themselves (yield); the scheduler is back
    // only when a core ends, or when no core can run.
    while (ended < n) {
      Core* c = next_core();
      if (c == nullptr) {
        cur_ = nullptr;
        const std::string error = stalled();
        abandon_cores();
        throw std::runtime_error(error);
      }
      switch_to(c->fiber, kScheduler);
      Core& last = *cur_;
      cur_ = nullptr;
      if (last.done) {
        ended++;
        base_ = std::max(base_, last.clock);
      }
    }
    watchers_.clear();
    queues_.clear();
    run_cores_.clear();
    if (first) std::rethrow_exception(first);
  }

  // ---- called on a virtual core ----

  void access(const void* p, Op op) {
    Core& c = *cur_;
    tick();
    stats_.calls++;
    if (op == Op::Rmw) stats_.rmws++;
    charge(c, topo_.compute.per_call_cycles);
    const uint64_t line = translate(reinterpret_cast<uintptr_t>(p) >> 6);
    LineState* s = settle(c, line);
    const uint64_t lat = op == Op::Load ? read_line(c, *s, 1) : write_line(c, *s, op == Op::Rmw, 1);
    if (op == Op::Load) remember(c, *s);
    c.clock += lat;
    if (s->queued) pass_on(c, *s);
  }

  void touch(const void* p, std::size_t bytes, bool write) {
    if (bytes == 0) return;
    Core& c = *cur_;
    tick();
    stats_.calls++;
    stats_.bytes += bytes;
    charge(c, topo_.compute.per_call_cycles + topo_.compute.per_byte_cycles * static_cast<double>(bytes));
    const auto addr = reinterpret_cast<uintptr_t>(p);
    const uint64_t first = addr >> 6;
    const uint64_t last = (addr + bytes - 1) >> 6;
    const auto lines = static_cast<uint32_t>(last - first + 1);
    if (lines <= kLinesPerBlock) {
      // A header or an index node: each line on its own; their misses
      // overlap, so the touch costs its slowest line.
      uint64_t slowest = 0;
      for (uint64_t host_line = first; host_line <= last; host_line++) {
        LineState* s = settle(c, translate(host_line));
        slowest = std::max(slowest, write ? write_line(c, *s, false, 1) : read_line(c, *s, 1));
        if (s->queued) pass_on(c, *s);
      }
      c.clock += slowest;
      return;
    }
    // A row's data: its lines are read and written together, so the machine
    // keeps them as one block under the entry of its last line. (Not the
    // first: a row's first line also holds its header and the scheme's lock
    // words, which are touched and cached on their own; a block under that
    // entry would count as held whenever the header line is, and the row's
    // other lines would never cost a miss.) One line costs what a line does;
    // the others stream behind it.
    LineState* s = settle(c, translate(last));
    c.clock += write ? write_line(c, *s, false, lines) : read_line(c, *s, lines);
    if (s->queued) pass_on(c, *s);
  }

  // Waits nest (a latch taken inside a wait's condition waits too): only
  // the outermost starts a fresh set, so an inner wait never drops the
  // lines the outer condition read. The union is watched meanwhile, which
  // can only wake a core early, never leave it asleep.
  void begin_wait() {
    Core& c = *cur_;
    if (c.waits++ == 0) forget(c);
  }
  void end_wait() {
    Core& c = *cur_;
    if (c.waits > 0) c.waits--;
  }

  void observe(const void* p) {
    Core& c = *cur_;
    remember(c, lines_.state(translate(reinterpret_cast<uintptr_t>(p) >> 6)));
  }

  void spin(uint32_t step, uint64_t deadline_cycles) {
    Core& c = *cur_;
    tick();
    stats_.pauses++;
    charge(c, topo_.compute.pause_cycles);
    // A core whose condition read only watched lines sleeps until one of
    // them is written or its deadline passes. One that read more than it
    // can watch (or nothing) polls as well, with steps that grow like the
    // native wait's pause, yield, nap.
    uint64_t until = kNoDeadline;
    if (deadline_cycles != kNoDeadlineCycles) {
      until = std::min<uint64_t>(kNoDeadline - 1, cycles(static_cast<double>(deadline_cycles)));
    }
    if (c.watch_lost() || c.watch[0] == 0) {
      const uint64_t quantum_ns = step < 16 ? 1000 : 20'000;
      until = std::min(until, c.clock + quantum_ns * 1000);
    }
    // What it waits for may already have happened: it reads its condition again.
    if (watched_line_changed(c)) return;
    park(c, std::max(until, c.clock), true);
  }

  void wait_ps(uint64_t ps) {
    Core& c = *cur_;
    tick();
    park(c, c.clock + std::min(ps, kLongestWaitPs), false);
  }

  void pause() {
    Core& c = *cur_;
    stats_.pauses++;
    charge(c, topo_.compute.pause_cycles);
  }

  uint64_t read_cycles() {
    Core& c = *cur_;
    stats_.clock_reads++;
    c.clock += std::max(clock_read_ps_, uint64_t{1});
    // The cycle count at a picosecond clock; ps_per_cycle_ is exact for the
    // topologies' rates (1000/ghz), and the division rounds down the same way
    // every time.
    return static_cast<uint64_t>(static_cast<double>(c.clock) / ps_per_cycle_);
  }

  uint64_t hardware_counter_next() {
    Core& c = *cur_;
    tick();
    stats_.calls++;
    charge(c, topo_.compute.per_call_cycles);
    sync(c);
    const uint64_t one_way = topo_.layout == Layout::Mesh ? cycles(hops(c.place, centre_) * topo_.hop_cycles) : 0;
    const uint64_t arrive = c.clock + one_way;
    const uint64_t start = std::max(arrive, counter_busy_);
    counter_busy_ = start + cycles(1);
    c.clock = counter_busy_ + one_way;
    return ++counter_;
  }

  Stats stats() const { return stats_; }

 private:
  // The machine's own number for a host line (LineTable).
  uint64_t translate(uint64_t host_line) {
    return lines_.number(host_line, static_cast<uint32_t>(versions_),
                         [this](uint64_t host, uint64_t line) { return home_for(host, line); });
  }

  // Every run starts with empty caches and an idle memory system, so a run
  // does not depend on the ones before it in the process.
  void cold_caches() {
    shared_.clear();
    for (uint32_t s = 0; s < slices_; s++) shared_.emplace_back(topo_.shared.bytes / 64, topo_.shared.ways);
    memory_busy_.assign(controllers_, 0);
    counter_busy_ = base_;
    lines_.clear();
    placed_ = topo_.layout == Layout::Numa ? placed_ranges() : std::vector<PlacedRange>{};
  }

  // After a stall the cores that have not ended can never go on. Destroying
  // a fiber unwinds its stack, which would run the engine's clean-up (an
  // abort that puts rows back) on the simulated machine after the run, with
  // the objects it cleans up gone by then: the run's cores are moved to a
  // heap block that is never freed, their fibers never resumed nor
  // destroyed, and the process ends with them.
  void abandon_cores() {
    abandoned_.push_back(std::make_unique<std::vector<Core>>(std::move(run_cores_)).release());
    run_cores_.clear();
    watchers_.clear();
    queues_.clear();
  }

  // Every core that has not ended waits for a write no core will make: which
  // cores, and the lines (numbered in first-touch order) each waits on.
  std::string stalled() const {
    std::string out =
        "every simulated core waits for a write that no core will make (a wait whose condition "
        "the simulator cannot see):";
    uint32_t named = 0, waiting = 0;
    for (const Core& c : run_cores_) {
      if (c.done) continue;
      waiting++;
      if (named == 8) continue;
      named++;
      out += " core " + std::to_string(c.id);
      if (c.watching.empty()) {
        out += queued_on(c.id) ? " (queued for a line)" : " (no line)";
      } else {
        out += " on line";
        for (uint64_t line : c.watching) out += " " + std::to_string(line);
      }
      out += ";";
    }
    if (waiting > named) out += " and " + std::to_string(waiting - named) + " more";
    return out;
  }
  bool queued_on(uint32_t id) const {
    for (const auto& [line, q] : queues_) {
      if (std::find(q.begin(), q.end(), id) != q.end()) return true;
    }
    return false;
  }

  // Wakes the watchdog's view of progress.
  void tick() { progress_.store(progress_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed); }

  // Costs are never negative: to the nearest picosecond, without a libm call
  // on the hot path.
  uint64_t cycles(double n) const {
    const double ps = n * ps_per_cycle_;
    const auto whole = static_cast<uint64_t>(ps);
    return whole + (ps - static_cast<double>(whole) >= 0.5 ? 1 : 0);
  }
  void charge(Core& c, double n) { c.clock += cycles(n); }

  // Lets every core behind this one catch up, so what this core does next
  // happens after everything that precedes it in virtual time.
  void sync(Core& c) {
    if (key_of(c.clock, c.id) > threshold_) yield(c);
  }
  // The running core gives way: it goes back into the heap, and the core
  // with the smallest key runs next - itself, if a parked core's deadline
  // comes first. Control passes straight from one core's fiber to the
  // next; the scheduler's fiber is resumed only when no core can run.
  void yield(Core& c) {
    const uint64_t k = c.parked ? c.wake_key : key_of(c.clock, c.id);
    const uint64_t first = std::min(k, heap_.top_key());
    if (time_of(first) == kNoDeadline) {
      heap_.push(c.id, k);
      switch_to(scheduler_, c.id);  // no core can run: the scheduler reports it
      return;
    }
    Core& next = make_current(heap_.push_pop(c.id, k), first);
    if (&next != &c) switch_to(next.fiber, c.id);
  }

  // Takes the core to run next off the heap and makes it the running one
  // (every resume of a core, itself included, counts as a switch); nullptr
  // if every core waits without a deadline.
  Core* next_core() {
    const uint64_t k = heap_.top_key();
    if (time_of(k) == kNoDeadline) return nullptr;
    return &make_current(heap_.pop(), k);
  }
  // Core `id`, just taken off the heap with key k, becomes the running one.
  Core& make_current(uint32_t id, uint64_t k) {
    Core& c = run_cores_[id];
    if (c.parked) wake(c, time_of(k));
    cur_ = &c;
    threshold_ = heap_.top_key();
    stats_.switches++;
    return c;
  }

  // Suspends the running fiber (core `me`, or the scheduler) and resumes
  // `to`. Whichever fiber resumes this one later hands over its own context,
  // kept in the slot of its owner (hand_); a fiber that ended hands over an
  // empty one.
  void switch_to(ctx::fiber& to, uint32_t me) {
    hand_ = me;
    ctx::fiber from = std::move(to).resume();
    if (from) slot(hand_) = std::move(from);
  }
  ctx::fiber& slot(uint32_t owner) { return owner == kScheduler ? scheduler_ : run_cores_[owner].fiber; }

  // Waits until the line is free of a transfer in flight, then answers it.
  // Cores that find it busy queue for it in arrival order; each access to a
  // line with a queue wakes the next one for when the line is free again,
  // so a hot line costs one switch per access, not one per waiting core.
  LineState* settle(Core& c, uint64_t line) {
    for (;;) {
      sync(c);
      LineState& s = lines_.state(line);
      if (s.busy_until <= c.clock) return &s;
      s.queued = true;
      auto& q = queues_[line];
      if (q.empty() || q.front() == c.id) {
        // First in line: it waits for the transfer in flight to end.
        if (q.empty()) q.push_back(c.id);
        park(c, s.busy_until, false);
      } else {
        q.push_back(c.id);  // woken by the access of the one before it
        park(c, kNoDeadline, false);
      }
    }
  }

  // After an access to a line others queue for: the first of them goes next,
  // when the line is free.
  void pass_on(const Core& c, LineState& s) {
    auto it = queues_.find(s.line);
    if (it == queues_.end()) {
      s.queued = false;
      return;
    }
    auto& q = it->second;
    while (!q.empty() && q.front() == c.id) q.pop_front();
    if (q.empty()) {
      queues_.erase(it);
      s.queued = false;
      return;
    }
    const uint32_t next = q.front();
    const uint64_t at = std::max(s.busy_until, c.clock);
    if (heap_.contains(next)) {
      heap_.lower(next, key_of(std::max(at, run_cores_[next].clock), next));
      threshold_ = std::min(threshold_, heap_.key(next));
    }
  }

  void place(Core& c, uint32_t slot) {
    c.place = slot;
    c.socket = topo_.layout == Layout::Numa ? slot / std::max(1u, topo_.cores_per_socket) : slot;
    if (c.caches.size() != topo_.private_levels.size()) {
      c.caches.clear();
      for (const auto& l : topo_.private_levels) c.caches.emplace_back(l.bytes / 64, l.ways);
    }
  }

  double private_latency(std::size_t level) const {
    return level < topo_.private_levels.size() ? topo_.private_levels[level].latency_cycles : 0;
  }

  // The nearest private level holding the line at its current version, or -1.
  int private_hit(Core& c, const LineState& s) {
    for (std::size_t l = 0; l < c.caches.size(); l++) {
      if (c.caches[l].hit(s.line, s.version)) return static_cast<int>(l);
    }
    return -1;
  }
  void fill_private(Core& c, const LineState& s, uint32_t lines) {
    for (auto& cache : c.caches) cache.fill(s.line, s.version, lines);
  }
  // The lines of a block after its first, streaming in behind it.
  uint64_t stream(uint32_t lines) const { return (lines - 1) * line_transfer_ps_; }

  uint32_t hops(uint32_t a, uint32_t b) const {
    const auto ax = static_cast<int64_t>(a % width_), ay = static_cast<int64_t>(a / width_);
    const auto bx = static_cast<int64_t>(b % width_), by = static_cast<int64_t>(b / width_);
    return static_cast<uint32_t>(std::abs(ax - bx) + std::abs(ay - by));
  }
  uint32_t home_of(const LineState& s) const { return s.home; }
  // A line's home, when the run first touches it. Mesh: lines interleaved
  // over the tiles' slices (Graphite's static NUCA home). Numa: the socket
  // its memory was placed on (PlaceOnNode), else 4 KB pages (64 lines in
  // first-touch order) interleaved over the sockets in use.
  uint32_t home_for(uint64_t host_line, uint64_t line) const {
    if (topo_.layout == Layout::Mesh) return static_cast<uint32_t>(line % slices_);
    if (!placed_.empty()) {
      auto it = std::upper_bound(placed_.begin(), placed_.end(), host_line,
                                 [](uint64_t h, const PlacedRange& r) { return h < r.first_line; });
      if (it != placed_.begin() && host_line < (--it)->end_line && it->node < slices_) return it->node;
    }
    return static_cast<uint32_t>((line >> 6) % slices_);
  }
  uint32_t numa_distance(uint32_t a, uint32_t b) const {
    if (a == b) return 0;
    const uint32_t per = std::max(1u, topo_.sockets_per_board);
    if (a / per != b / per) return 3;
    const uint32_t d = a > b ? a - b : b - a;
    return std::min(d, per - d) >= 2 ? 2 : 1;
  }
  double memory_ns(uint32_t d) const {
    if (topo_.memory_ns.empty()) return topo_.dram_ns;
    return topo_.memory_ns[std::min<std::size_t>(d, topo_.memory_ns.size() - 1)];
  }
  double memory_gbps(uint32_t d) const {
    if (topo_.layout == Layout::Mesh) return topo_.controller_gbps;
    if (topo_.memory_gbps.empty()) return 0;
    return topo_.memory_gbps[std::min<std::size_t>(d, topo_.memory_gbps.size() - 1)];
  }

  // A line from memory node `node`, requested at `at`: its latency plus the
  // queueing behind earlier transfers at the node's bandwidth.
  uint64_t from_memory(uint32_t node, uint64_t at, double latency_ns, double gbps, uint32_t lines) {
    stats_.memory_reads++;
    const uint64_t latency = static_cast<uint64_t>(latency_ns * 1000);
    if (gbps <= 0) return latency;
    const auto transfer = static_cast<uint64_t>(64.0 * lines / gbps * 1000);
    const uint64_t start = std::max(at, memory_busy_[node]);
    memory_busy_[node] = start + transfer;
    return (start - at) + latency;
  }

  // A miss served by the shared level or memory (no core holds it modified).
  uint64_t from_shared(Core& c, const LineState& s, uint32_t lines) {
    const uint32_t home = home_of(s);
    if (topo_.layout == Layout::Mesh) {
      const uint64_t round = 2 * cycles(hops(c.place, home) * topo_.hop_cycles) + cycles(topo_.shared.latency_cycles);
      if (shared_[home].holds(s.line)) {
        stats_.shared_hits++;
        return round + stream(lines);
      }
      shared_[home].fill(s.line, 0, lines);
      const uint32_t mc = home % controllers_;
      return round + from_memory(mc, c.clock + round, topo_.dram_ns, topo_.controller_gbps, lines) + stream(lines);
    }
    const uint64_t l3 = cycles(topo_.shared.latency_cycles);
    if (shared_[c.socket].holds(s.line)) {
      stats_.shared_hits++;
      return l3 + stream(lines);
    }
    shared_[c.socket].fill(s.line, 0, lines);
    const uint32_t d = numa_distance(c.socket, home);
    return from_memory(home, c.clock, memory_ns(d), memory_gbps(d), lines) + stream(lines);
  }

  // A miss served by the core holding the line modified.
  uint64_t from_owner(Core& c, const LineState& s, uint32_t lines) { return transfer_from_owner(c, s) + stream(lines); }
  uint64_t transfer_from_owner(Core& c, const LineState& s) {
    stats_.remote_transfers++;
    const Core& o = run_cores_[s.owner];
    if (topo_.layout == Layout::Mesh) {
      const uint32_t home = home_of(s);
      const double h = hops(c.place, home) + hops(home, o.place) + hops(o.place, c.place);
      return cycles(h * topo_.hop_cycles + topo_.shared.latency_cycles + private_latency(0));
    }
    // Within a socket the line moves through the shared cache (a snoop and a
    // fill: twice its latency); across sockets it costs what memory at that
    // distance does.
    if (o.socket == c.socket) return cycles(2 * topo_.shared.latency_cycles);
    return static_cast<uint64_t>(memory_ns(numa_distance(c.socket, o.socket)) * 1000);
  }

  // Invalidating `n` other cores' copies before a write.
  uint64_t invalidation(Core& c, const LineState& s, uint32_t n) {
    if (n == 0) return 0;
    if (topo_.layout == Layout::Mesh) {
      // The home sends one message per sharer and collects the
      // acknowledgements: a round trip to the farthest tile when there are
      // many, to an average one when there is one.
      const uint32_t home = home_of(s);
      const double reach = n == 1 ? mean_hops_[home] : far_hops_[home];
      return cycles(2 * hops(c.place, home) * topo_.hop_cycles + 2 * reach * topo_.hop_cycles + n);
    }
    // Sharers may sit on any socket in use: a round trip over the farthest link.
    return numa_invalidation_ps_[c.socket];
  }

  uint64_t read_line(Core& c, LineState& s, uint32_t lines) {
    stats_.accesses++;
    const int level = private_hit(c, s);
    if (level >= 0) {
      stats_.private_hits++;
      (level == 0 ? stats_.l1_hits : stats_.l2_hits)++;
      return cycles(private_latency(static_cast<std::size_t>(level)));
    }
    uint64_t lat = 0;
    if (s.owner != kNoOwner && s.owner != c.id) {
      lat = from_owner(c, s, lines);
      s.owner = kNoOwner;  // the owner keeps a shared copy
      s.sharers = 1;
    } else {
      lat = from_shared(c, s, lines);
    }
    if (s.sharers < 0xffff) s.sharers++;
    fill_private(c, s, lines);
    return lat;
  }

  uint64_t write_line(Core& c, LineState& s, bool rmw, uint32_t lines) {
    stats_.accesses++;
    const int level = private_hit(c, s);
    uint64_t lat = 0;
    if (level >= 0 && s.owner == c.id) {
      stats_.private_hits++;
      if (!rmw) stats_.l1_hits++;
      lat = cycles(rmw ? topo_.compute.rmw_cycles : private_latency(0));
    } else {
      if (level >= 0) {
        stats_.shared_hits++;
        lat = topo_.layout == Layout::Mesh
                  ? cycles(2 * hops(c.place, home_of(s)) * topo_.hop_cycles + topo_.shared.latency_cycles)
                  : cycles(topo_.shared.latency_cycles);  // an upgrade: ask the directory
      } else if (s.owner != kNoOwner && s.owner != c.id) {
        lat = from_owner(c, s, lines);
      } else {
        lat = from_shared(c, s, lines);
      }
      const uint32_t others = s.sharers > (level >= 0 ? 1 : 0) ? s.sharers - (level >= 0 ? 1 : 0) : 0;
      lat += invalidation(c, s, s.owner != kNoOwner && s.owner != c.id ? 0 : others);
      if (rmw) lat += cycles(topo_.compute.rmw_cycles);
    }
    s.owner = static_cast<uint16_t>(c.id);
    s.sharers = 0;
    s.version = static_cast<uint32_t>(++versions_);
    // A transfer holds the line: the next core to want it waits until this
    // one has it (a contended counter serialises).
    if (lat > cycles(private_latency(0))) s.busy_until = c.clock + lat;
    fill_private(c, s, lines);
    if (s.watched) wake_watchers(s.line, c.clock + lat);
    return lat;
  }

  // Notes a line the core read and the version it read (again: the later).
  void remember(Core& c, const LineState& s) {
    for (uint32_t k = 0; k < kWatchLines; k++) {
      if (c.watch[k] == s.line) {
        c.watch_version[k] = s.version;
        return;
      }
    }
    const uint32_t k = c.watch_next++ % kWatchLines;
    c.watch[k] = s.line;
    c.watch_version[k] = s.version;
  }
  // Whether a line the core's condition read was written since it read it:
  // by a core that ran between the read and the spin (cores yield at every
  // access). Parking then would wait for a write that has already happened.
  bool watched_line_changed(const Core& c) {
    for (uint32_t k = 0; k < kWatchLines; k++) {
      if (c.watch[k] != 0 && lines_.state(c.watch[k]).version != c.watch_version[k]) return true;
    }
    return false;
  }
  void forget(Core& c) {
    for (uint64_t& w : c.watch) w = 0;
    c.watch_next = 0;
  }

  void park(Core& c, uint64_t deadline_ps, bool watch) {
    stats_.parks++;
    c.parked = true;
    c.wake_key = key_of(deadline_ps, c.id);
    if (watch) {
      for (uint64_t line : c.watch) {
        if (line == 0) continue;
        watchers_[line].push_back(c.id);
        c.watching.push_back(line);
        lines_.state(line).watched = true;
      }
    }
    yield(c);
  }

  // Called by the scheduler on a parked core it is about to resume.
  // A core resumes. From a wait's park it stops watching; the lines it
  // noted are dropped only when the outermost wait woke, which reads its
  // whole condition again. A park for a busy line, or an inner wait's, keeps
  // them: the condition being read (the outer one's) still depends on lines
  // loaded before it.
  void wake(Core& c, uint64_t at) {
    c.parked = false;
    c.clock = std::max(c.clock, at);
    if (c.watching.empty()) return;
    for (uint64_t line : c.watching) {
      auto it = watchers_.find(line);
      if (it == watchers_.end()) continue;
      auto& ids = it->second;
      ids.erase(std::remove(ids.begin(), ids.end(), c.id), ids.end());
      if (ids.empty()) {
        watchers_.erase(it);
        lines_.state(line).watched = false;
      }
    }
    c.watching.clear();
    if (c.waits <= 1) forget(c);
  }

  void wake_watchers(uint64_t line, uint64_t at) {
    auto it = watchers_.find(line);
    if (it == watchers_.end()) return;
    for (uint32_t id : it->second) {
      if (!heap_.contains(id)) continue;
      heap_.lower(id, key_of(std::max(at, run_cores_[id].clock), id));
      threshold_ = std::min(threshold_, heap_.key(id));
    }
  }

  // Ends the process if no core reaches the platform for a minute of host
  // time: a loop without a wait or a shared access would otherwise hang.
  class Watchdog final {
   public:
    explicit Watchdog(const std::atomic<uint64_t>& progress) : thread_([this, &progress] { watch(progress); }) {}
    ~Watchdog() {
      {
        std::lock_guard<std::mutex> g(m_);
        stop_ = true;
      }
      cv_.notify_all();
      thread_.join();
    }
    Watchdog(const Watchdog&) = delete;
    Watchdog& operator=(const Watchdog&) = delete;

   private:
    void watch(const std::atomic<uint64_t>& progress) {
      std::unique_lock<std::mutex> g(m_);
      uint64_t seen = progress.load(std::memory_order_relaxed);
      while (!cv_.wait_for(g, std::chrono::seconds(kWatchdogSeconds), [this] { return stop_; })) {
        const uint64_t now = progress.load(std::memory_order_relaxed);
        if (now == seen) {
          std::fprintf(stderr,
                       "abyss: a simulated core ran %d s of host time without a wait or a shared access "
                       "(a loop the simulator cannot see); ending the run\n",
                       kWatchdogSeconds);
          std::_Exit(1);
        }
        seen = now;
      }
    }
    std::mutex m_;
    std::condition_variable cv_;
    bool stop_ = false;
    std::thread thread_;
  };

  uint32_t cores_;
  uint32_t hand_ = kScheduler;  // the fiber that switched away last: a core, or kScheduler
  Topology topo_;
  double ps_per_cycle_ = 1;
  uint64_t clock_read_ps_ = 1;
  uint64_t line_transfer_ps_ = 0;
  uint32_t width_ = 1;
  uint32_t slices_ = 1;
  uint32_t controllers_ = 1;
  uint32_t centre_ = 0;
  std::vector<double> mean_hops_;
  std::vector<uint32_t> far_hops_;
  std::vector<uint64_t> numa_invalidation_ps_;  // per socket: invalidating sharers anywhere in use
  std::vector<TagArray> shared_;
  std::vector<uint64_t> memory_busy_;
  uint64_t versions_ = 1;
  LineTable lines_;
  std::unordered_map<uint64_t, std::vector<uint32_t>> watchers_;
  std::unordered_map<uint64_t, std::deque<uint32_t>> queues_;
  std::vector<Core> run_cores_;
  std::vector<std::vector<Core>*> abandoned_;  // stalled runs' cores, never freed (abandon_cores)
  CoreHeap heap_;
  Core* cur_ = nullptr;
  // The run's own context while the cores run.
  ctx::fiber scheduler_;
  uint64_t threshold_ = kNever;
  uint64_t base_ = 0;
  uint64_t counter_ = 0;
  uint64_t counter_busy_ = 0;
  std::vector<PlacedRange> placed_;  // the placements when the run began, by first line
  Stats stats_;
  std::atomic<uint64_t> progress_{0};
};

// The simulated hardware, like the real one, is one per process.
std::unique_ptr<Machine> the_machine;
std::unique_ptr<Machine>& machine_slot() { return the_machine; }

Machine& machine_for(uint32_t n) {
  auto& m = machine_slot();
  if (!m) m = std::make_unique<Machine>(std::max(1u, n), Topology{});
  return *m;
}

}  // namespace

std::string configure(uint32_t cores, const Topology& topology) {
  if (cores == 0 || cores >= kMaxCores)
    return "the simulated machine has 1 to 4095 cores (a run also needs one for its coordinator)";
  if (machine_slot() && machine_slot()->running()) return "a simulated run is in progress";
  machine_slot() = std::make_unique<Machine>(cores, topology);
  return {};
}

uint32_t cores() { return machine_slot() ? machine_slot()->cores() : 1; }

uint32_t memory_nodes() { return machine_slot() ? machine_slot()->memory_nodes() : 1; }

uint32_t current_node() { return active() ? machine_slot()->current_node() : 0; }

void placed(const void* p, std::size_t bytes, uint32_t node) { placements().taken(p, bytes, node); }

void released(const void* p) { placements().released(p); }

const Topology& topology() {
  static const Topology none{};
  return machine_slot() ? machine_slot()->topology() : none;
}

void run(uint32_t n, const std::function<void(uint32_t)>& fn) { machine_for(n).run(n, fn); }

bool active() { return machine_slot() && machine_slot()->running(); }

uint32_t current_core() { return active() ? machine_slot()->current_id() : 0; }

void access(const void* p, Op op) {
  if (active()) machine_slot()->access(p, op);
}

void touch(const void* p, std::size_t bytes, bool write) {
  if (active()) machine_slot()->touch(p, bytes, write);
}

void begin_wait() {
  if (active()) machine_slot()->begin_wait();
}

void end_wait() {
  if (active()) machine_slot()->end_wait();
}

void observe(const void* p) {
  if (active()) machine_slot()->observe(p);
}

void spin(uint32_t step, uint64_t deadline_cycles) {
  if (active()) machine_slot()->spin(step, deadline_cycles);
}

void wait_ps(uint64_t ps) {
  if (active()) machine_slot()->wait_ps(ps);
}

void pause() {
  if (active()) machine_slot()->pause();
}

uint64_t now_ps() { return machine_slot() ? machine_slot()->now() : 0; }

uint64_t now_cycles() {
  if (!active()) return static_cast<uint64_t>(static_cast<double>(now_ps()) * topology().ghz / 1000);
  return machine_slot()->read_cycles();
}

uint64_t hardware_counter_next() {
  if (!active()) throw std::logic_error("the hardware timestamp counter exists only on a simulated core");
  return machine_slot()->hardware_counter_next();
}

Stats stats() { return machine_slot() ? machine_slot()->stats() : Stats{}; }

}  // namespace abyss::platform::sim
