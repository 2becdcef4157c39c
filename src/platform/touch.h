#pragma once
// Data traffic: the engine names the shared memory it reads and writes with
// plain loads and stores (row data, index entries, a row's lock queue), so a
// backend that models caches sees that traffic and not only the atomics and
// latches. Natively the hardware does the work and touch() is free.
#include <cstddef>
#include <cstdint>

#if defined(ABYSS_SIM)
#include "platform/sim/machine.h"
#endif

namespace abyss::platform {

enum class Access : uint8_t { Read, Write };

// The caller reads (Access::Read) or writes (Access::Write) the bytes
// [p, p + bytes), memory another worker may also touch. A simulated backend
// charges the coherence cost of the cache lines they span; natively it does
// nothing, and its arguments are computed only if they have side effects.
// Not a waiting point.
#if defined(ABYSS_SIM)
inline void touch(const void* p, std::size_t bytes, Access a) { sim::touch(p, bytes, a == Access::Write); }
#else
inline void touch(const void* /*p*/, std::size_t /*bytes*/, Access /*a*/) {}
#endif

}  // namespace abyss::platform
