#pragma once
// `abyss probe`: this machine's clock, memory latencies and bandwidth, the
// measurements `abyss sim calibrate` writes into the simulator's host
// topology (docs/many-core.md, "Calibration").
#include <cstdint>
#include <string>

#include "platform/machine.h"

namespace abyss {

using HostProbe = platform::HostProbe;

// Measures within the private caches, the last-level cache and far beyond it.
// Answers an error (the simulated build has no host to measure), empty on
// success.
std::string probe_host(HostProbe& out);

// `abyss bench memory`: random line reads of `bytes` on small or huge pages
// (platform/machine.h), or an error (the simulated build, a size the machine
// cannot map).
using MemoryProbe = platform::MemoryProbe;
using ChainedShape = platform::ChainedShape;
std::string probe_memory(uint64_t bytes, bool huge_pages, const ChainedShape& shape, MemoryProbe& out);

}  // namespace abyss
