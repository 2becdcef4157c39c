// platform/machine.h on the simulated build.
#include <string>

#include "platform/machine.h"
#include "platform/sim/machine.h"
#include "platform/sim/topology.h"

namespace abyss::platform {

namespace {
std::string topology_path(const std::string& name) {
  // A bare name is one of the shipped files; anything else is a path.
  if (name.find('/') == std::string::npos && !name.ends_with(".toml")) {
    return std::string(ABYSS_TOPOLOGY_DIR) + "/" + name + ".toml";
  }
  return name;
}
}  // namespace

std::string use_machine(uint32_t cores, const std::string& topology) {
  if (cores == 0) return "the simulated build needs --sim-cores N (1 to 4095)";
  sim::Topology t;
  if (auto err = sim::load_topology(topology_path(topology), t); !err.empty()) return err;
  return sim::configure(cores, t);
}

bool has_hardware_counter() { return sim::topology().layout == sim::Layout::Mesh; }

uint64_t hardware_counter_next() { return sim::hardware_counter_next(); }

MachineInfo machine_info() {
  const sim::Topology& t = sim::topology();
  return {"sim", t.name, t.source, sim::cores(), t.ghz};
}

uint32_t memory_nodes() { return sim::memory_nodes(); }

uint32_t current_node() { return sim::current_node(); }

namespace {
thread_local int placing_node = -1;
}  // namespace

PlaceOnNode::PlaceOnNode(uint32_t node) : previous_(placing_node) { placing_node = static_cast<int>(node); }

PlaceOnNode::~PlaceOnNode() { placing_node = previous_; }

void memory_taken(const void* p, std::size_t bytes) {
  if (placing_node >= 0) sim::placed(p, bytes, static_cast<uint32_t>(placing_node));
}

void memory_released(const void* p) { sim::released(p); }

std::vector<std::pair<std::string, uint64_t>> machine_counters() {
  const sim::Stats s = sim::stats();
  return {{"switches", s.switches},
          {"calls", s.calls},
          {"bytes", s.bytes},
          {"rmws", s.rmws},
          {"pauses", s.pauses},
          {"clock_reads", s.clock_reads},
          {"accesses", s.accesses},
          {"private_hits", s.private_hits},
          {"l1_hits", s.l1_hits},
          {"l2_hits", s.l2_hits},
          {"shared_hits", s.shared_hits},
          {"remote_transfers", s.remote_transfers},
          {"memory_reads", s.memory_reads},
          {"parks", s.parks}};
}

std::string probe_host(const std::vector<uint64_t>& /*working_sets*/, HostProbe& /*out*/) {
  return "the probe measures this machine: run it with the native build (build/release/apps/abyss probe)";
}

std::string probe_memory(uint64_t /*bytes*/, bool /*huge_pages*/, const ChainedShape& /*shape*/, MemoryProbe& /*out*/) {
  return "the memory bench measures this machine: run it with the native build (build/release/apps/abyss)";
}

}  // namespace abyss::platform
