#pragma once
// A simulated machine's description, read from a TOML file
// (src/platform/sim/topologies/*.toml; docs/many-core.md explains each key).
// Every number is a property of a real machine: what a paper states about its
// hardware, what a vendor documents for the parts it names, or what
// `abyss sim calibrate` measured on this one. None is fitted to a throughput
// curve.
#include <cstdint>
#include <string>
#include <vector>

namespace abyss::platform::sim {

// One level of cache: private to a core, or shared (a slice per tile on the
// mesh, one per socket on numa).
struct CacheLevel {
  uint64_t bytes = 0;
  uint32_t ways = 8;
  double latency_cycles = 0;  // load-to-use on a hit
};

enum class Layout : uint8_t {
  Mesh,  // tiles on a 2D mesh; a line's home tile holds it in its shared slice (NUCA)
  Numa,  // sockets whose cores share a cache; memory interleaved over sockets by page
};

// Local work between platform calls, in core cycles, charged per engine event
// and never read from host time, so a run's result depends only on its inputs.
struct Compute {
  double per_call_cycles = 0;  // each platform call: the engine code around it
  double per_byte_cycles = 0;  // each byte of row data read or written
  double rmw_cycles = 0;       // an atomic read-modify-write on a line the core holds
  double pause_cycles = 0;     // one spin-wait hint
  double yield_ns = 0;         // giving the core up (a system call)
  double clock_cycles = 1;     // reading the cycle counter (at least 1, so it always moves)
};

struct Topology {
  std::string name;
  std::string source;  // the file it was read from
  Layout layout = Layout::Mesh;
  double ghz = 1.0;
  std::vector<CacheLevel> private_levels;  // nearest first
  CacheLevel shared;                       // bytes 0: none
  // Each further line of a block (a row) after the first: the interconnect
  // delivers one line per this many cycles.
  double line_transfer_cycles = 1;

  // Mesh (Abyss §3.1): tiles on a square grid, `hop_cycles` per hop;
  // memory controllers spread over the tiles, one per `tiles_per_controller`.
  double hop_cycles = 0;
  uint32_t tiles_per_controller = 0;
  double dram_ns = 0;

  // Numa (Tale §2, Table 2): `cores_per_socket` hardware threads per socket,
  // `sockets_per_board` sockets in a ring on one board, boards fully
  // connected. `memory_ns[d]` and `memory_gbps[d]` are the latency and
  // bandwidth to memory at distance d: 0 local, 1 and 2 ring hops on the
  // board, 3 another board.
  uint32_t cores_per_socket = 0;
  uint32_t sockets_per_board = 0;
  std::vector<double> memory_ns;
  std::vector<double> memory_gbps;

  // Mesh: bandwidth of one memory controller, GB/s; 0 = not modelled.
  double controller_gbps = 0;

  Compute compute;
};

// Reads a topology file; answers an error naming the file and what was
// wrong, empty on success.
std::string load_topology(const std::string& path, Topology& out);

}  // namespace abyss::platform::sim
