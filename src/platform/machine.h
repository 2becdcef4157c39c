#pragma once
// Which machine a run executes on. The native build runs on this machine's
// cores; the simulated build (ABYSS_PLATFORM=sim, docs/many-core.md) runs on
// a machine of `--sim-cores` virtual cores laid out as a topology file says.
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace abyss::platform {

#if defined(ABYSS_SIM)
inline constexpr bool kSimulated = true;
#else
inline constexpr bool kSimulated = false;
#endif

// Sets up the machine the next runs use: `cores` simulated cores of the
// named topology (a file in src/platform/sim/topologies/, or a path to one).
// Answers an error naming what is wrong, empty on success; the native build
// accepts only cores == 0 (this machine).
std::string use_machine(uint32_t cores, const std::string& topology);

// The next value of the simulated chip's hardware timestamp counter (Abyss
// §4.3: one cycle at the centre tile, reached over the mesh). Only the mesh
// topology has one: use_machine's caller checks `has_hardware_counter()`.
bool has_hardware_counter();
uint64_t hardware_counter_next();

struct MachineInfo {
  std::string platform;  // "native" or "sim"
  std::string topology;  // sim: the topology's name
  std::string topology_file;
  uint32_t cores = 0;  // sim: the virtual cores; native: the hardware threads
  double ghz = 0;      // sim: the virtual cores' clock
};
MachineInfo machine_info();

// Memory by NUMA node (Tale §4.3 replicates the read-only ITEM table on
// each node). memory_nodes(): the nodes a run's cores sit on: natively this
// machine's (from /sys), simulated the numa topology's sockets in use (the
// fewest that hold --sim-cores), one on a mesh. current_node(): the node of
// the core the caller runs on (0 outside a simulated run).
uint32_t memory_nodes();
uint32_t current_node();

// While one lives, the memory this thread takes from the system for tables
// (map_zeroed, and what it reports to memory_taken) lies on node `node`:
// natively the thread's memory policy prefers the node, so pages land there
// as they are first touched (nothing to do on a one-node machine);
// simulated, the machine homes those lines on the node's memory until the
// memory is released, where it would otherwise interleave pages over the
// sockets in use.
class PlaceOnNode final {
 public:
  explicit PlaceOnNode(uint32_t node);
  ~PlaceOnNode();
  PlaceOnNode(const PlaceOnNode&) = delete;
  PlaceOnNode& operator=(const PlaceOnNode&) = delete;

 private:
  int previous_;
};

// What takes memory for tables from the system, and gives it back, says so
// (map_zeroed and unmap; a loader for the arenas its index nodes came from),
// so a PlaceOnNode alive on the thread places it.
void memory_taken(const void* p, std::size_t bytes);
void memory_released(const void* p);

// What the simulated machine counted during the last run (switches between
// cores, the engine events its compute costs are charged for, line accesses,
// private-cache hits, transfers between cores, memory reads, parks), by name;
// empty natively.
std::vector<std::pair<std::string, uint64_t>> machine_counters();

// This machine's speed, measured (the numbers `abyss sim calibrate` writes
// into the `host` topology): the core clock, the cost of reading the cycle
// counter and of an uncontended atomic read-modify-write, the load-to-use
// latency of a
// random dependent read within working sets of growing size, the time per
// read of random independent reads of the largest set (the overlap an
// out-of-order core gets), and one core's read bandwidth streaming a buffer
// far larger than its caches.
struct HostProbe {
  double core_ghz = 0;
  double clock_read_ns = 0;                             // one read of the cycle counter
  double rmw_ns = 0;                                    // one atomic read-modify-write of a line held
  std::vector<std::pair<uint64_t, double>> latency_ns;  // (working-set bytes, ns per read), dependent reads
  // (working-set bytes, ns per read) of random reads that wait on none
  // before them, so the core overlaps as many as it can: latency_ns's sets
  std::vector<std::pair<uint64_t, double>> independent_by_set;
  double independent_ns = 0;  // independent_by_set's for the largest set
  double stream_gbps = 0;
};
// Native only: the simulated build answers an error, empty on success.
std::string probe_host(const std::vector<uint64_t>& working_sets, HostProbe& out);

// One core's random reads of whole lines of a region far larger than its
// caches, mapped as tables are (platform/memory.h): dependent reads (a chase
// through the lines in one random cycle: each waits for the one before) and
// independent reads (random lines the core may fetch in parallel). The two
// bound what an engine probing that memory can do per core.
//
// With a shape, it also runs transactions that read the region as an
// indexed read-only transaction does, and nothing else: `accesses` accesses,
// each a random line (its bucket) whose first word locates `row_lines`
// consecutive lines (its row), fetched as `run --prefetch on` fetches them:
// every bucket prefetched, then each row's lines as its bucket arrives, then
// every line read: what the accesses' own misses allow a core. A bucket
// must arrive before its row is fetched, but a row's lines are neighbours,
// which random lines are not, so this can land on either side of the
// independent reads' bound. They are also run as a pipeline (each access
// prefetches the bucket two transactions ahead and the row one ahead), and
// with `work_ns` of register-only work after each access, an engine's work
// in place of the engine: whether a schedule overlaps work with misses.
struct ChainedShape {
  uint32_t accesses = 0;   // per transaction
  uint32_t row_lines = 0;  // per access, after its bucket's; 0 measures no transactions
  double work_ns = 0;      // after each access
};
struct MemoryProbe {
  uint64_t bytes = 0;
  bool huge_pages = false;
  double dependent_ns = 0;         // per read
  double independent_ns = 0;       // per read
  double chained_ns = 0;           // per transaction of the shape, a burst each; 0 without a shape
  double chained_pipeline_ns = 0;  // per transaction of the shape, pipelined; 0 without a shape
};
// Native only, like probe_host; an error also when the region cannot be
// mapped.
std::string probe_memory(uint64_t bytes, bool huge_pages, const ChainedShape& shape, MemoryProbe& out);

}  // namespace abyss::platform
