#pragma once
// Worker threads. Engine code hands a function per worker; the platform runs
// them (one OS thread each here; fibers on virtual cores in the simulated build).
#include <cstdint>
#include <functional>

namespace abyss::platform {

// Runs fn(i) for i in [0, n) on n threads and waits for all of them. With pin,
// worker i is bound to core i % cores.
void run_threads(uint32_t n, bool pin, const std::function<void(uint32_t)>& fn);

uint32_t hardware_cores();

}  // namespace abyss::platform
