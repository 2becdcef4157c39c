#include "engine/probe.h"

#include <cstdint>
#include <vector>

namespace abyss {

std::string probe_host(HostProbe& out) {
  // L1, L2, within the last-level cache, about its size, and far beyond it.
  const std::vector<uint64_t> sets = {uint64_t{16} << 10, uint64_t{256} << 10, uint64_t{4} << 20, uint64_t{16} << 20,
                                      uint64_t{512} << 20};
  return platform::probe_host(sets, out);
}

}  // namespace abyss
