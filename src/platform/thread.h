#pragma once
// Worker threads. Engine code hands a function per worker; the platform runs
// them (one OS thread each here; fibers on virtual cores in the simulated build).
#include <cstdint>
#include <functional>

namespace abyss::platform {

// Runs fn(i) for i in [0, n) on n threads and waits for all of them. With pin,
// worker i is bound to core i % cores. If any fn(i) throws, the others still
// run to their end; once all are joined, the first exception thrown is
// rethrown here (so a std::bad_alloc in a loader ends the run with a message,
// not std::terminate). If a thread cannot be created, none of the fn runs and
// that error is thrown.
void run_threads(uint32_t n, bool pin, const std::function<void(uint32_t)>& fn);

uint32_t hardware_cores();

}  // namespace abyss::platform
