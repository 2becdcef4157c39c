#include "bench/probe.h"

#include <cstdint>
#include <vector>

#include "platform/process.h"
#include "storage/footprint.h"

namespace abyss {

std::string probe_host(HostProbe& out) {
  // L1, L2, then steps through the last-level cache's size (the part of it
  // this machine's cores actually get: a virtual machine may share it), and
  // far beyond it.
  const std::vector<uint64_t> sets = {uint64_t{16} << 10, uint64_t{256} << 10, uint64_t{2} << 20,  uint64_t{4} << 20,
                                      uint64_t{6} << 20,  uint64_t{8} << 20,   uint64_t{12} << 20, uint64_t{16} << 20,
                                      uint64_t{24} << 20, uint64_t{32} << 20,  uint64_t{512} << 20};
  return platform::probe_host(sets, out);
}

std::string probe_memory(uint64_t bytes, bool huge_pages, const ChainedShape& shape, MemoryProbe& out) {
  if (auto why = footprint::shortfall(bytes, platform::available_memory_bytes()); !why.empty()) {
    return "the memory bench's region " + why + " (a smaller --size-mib fits)";
  }
  return platform::probe_memory(bytes, huge_pages, shape, out);
}

}  // namespace abyss
