#pragma once
// The simulated machine: virtual cores as fibers on one host thread, virtual
// time from a cache-coherence cost model (docs/many-core.md).
//
// The scheduler always resumes the core with the smallest virtual clock
// (ties by core id), and a core runs on only while its clock stays below
// every other core's. Every shared-memory operation goes through `access` or
// `touch`, which first lets every core that is behind catch up, so
// operations take effect in virtual-time order and a run is a function of
// its inputs alone.
//
// The platform primitives (platform/atomic.h, latch.h, clock.h, thread.h,
// touch.h) call the functions below; outside a simulated run (loading,
// set-up, the report) they cost nothing and never switch.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "platform/sim/topology.h"

namespace abyss::platform::sim {

enum class Op : uint8_t { Load, Store, Rmw };

// The most simulated cores a run may have (a run's workers and its
// coordinator each take one).
inline constexpr uint32_t kMaxCores = 4096;

// The running simulated core's index (0 outside a run).
uint32_t current_core();

// Builds the machine that later runs use: `cores` virtual cores laid out as
// the topology says. Answers an error, empty on success. Until it is
// called, a run uses a default machine (the `host` layout with as many
// cores as the run has workers).
std::string configure(uint32_t cores, const Topology& topology);

// The configured machine's core count, topology name and clock rate.
uint32_t cores();

// The numa topology's sockets in use (one on a mesh), and the socket of the
// core running the caller (0 outside a run; platform/machine.h).
uint32_t memory_nodes();
uint32_t current_node();

// Memory taken from the system while a PlaceOnNode for `node` lives: the
// runs home its lines on that socket until it is released.
void placed(const void* p, std::size_t bytes, uint32_t node);
void released(const void* p);
const Topology& topology();

// Runs fn(i) for i in [0, n) on virtual cores 0..n-1 (an i beyond the
// machine's cores shares the last one's place) and returns once all have
// ended; an exception from one fn is rethrown after all have ended.
void run(uint32_t n, const std::function<void(uint32_t)>& fn);

// True inside a simulated run, on one of its virtual cores.
bool active();

// One atomic word at p (within one cache line).
void access(const void* p, Op op);

// Row data: every line of [p, p + bytes), read or written.
void touch(const void* p, std::size_t bytes, bool write);

// A wait for another core begins (SpinWait): the lines the core loads from
// here on are what its wait condition reads. Waits nest; end_wait() closes
// the innermost, and only the outermost begins a fresh set of lines.
void begin_wait();
void end_wait();

// The value at p was read as part of a wait condition though not by a load
// (a compare-and-swap that failed).
void observe(const void* p);

// A step of a wait (SpinWait::once): parks the core until a line its
// condition read since the (outermost) wait began or last woke is written, or the
// core's clock reaches `deadline_cycles` (~0: none). A condition that read
// more lines than the core can watch also wakes it after a polling step
// that grows with `step`. Never spins the host.
void spin(uint32_t step, uint64_t deadline_cycles = ~uint64_t{0});

// The core waits `ps` picoseconds of virtual time (backoff, naps, sleeps,
// yields).
void wait_ps(uint64_t ps);

// A pause hint: a few cycles of local work.
void pause();

// Virtual time of the running core in picoseconds (outside a run: the end
// of the last run).
uint64_t now_ps();

// The running core's cycle counter. Reading it takes the topology's
// `clock_cycles`, at least one cycle, so two reads never answer the same
// value (the `clock` timestamp method relies on that, as on real cores).
uint64_t now_cycles();

// The Abyss §4.3 hardware timestamp counter: one cycle at the centre of the
// chip, reached over the network (no cache line moves).
uint64_t hardware_counter_next();

// Statistics of the last run, for the report: context switches, the engine
// events the topology's compute costs are charged for (what
// `abyss sim calibrate` fits them to), line accesses and cache behaviour.
struct Stats {
  uint64_t switches = 0;
  uint64_t calls = 0;        // access, touch and hardware-counter calls (per_call_cycles)
  uint64_t bytes = 0;        // bytes of row data touched (per_byte_cycles)
  uint64_t rmws = 0;         // atomic read-modify-writes (rmw_cycles)
  uint64_t pauses = 0;       // spin-wait steps and pause hints (pause_cycles)
  uint64_t clock_reads = 0;  // cycle-counter reads (clock_cycles)
  uint64_t accesses = 0;     // line accesses (a touch of a block is one)
  uint64_t private_hits = 0;
  // What each access was charged, for `abyss sim calibrate`: the first
  // private level's latency (a write to a line held modified too), a later
  // private level's, the shared level's (an upgrade, or a miss the shared
  // level holds); memory_reads are the misses it did not.
  uint64_t l1_hits = 0;
  uint64_t l2_hits = 0;
  uint64_t shared_hits = 0;
  uint64_t remote_transfers = 0;
  uint64_t memory_reads = 0;
  uint64_t parks = 0;
};
Stats stats();

}  // namespace abyss::platform::sim
