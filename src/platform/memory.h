#pragma once
// Large zeroed regions straight from the operating system: the row blocks of
// tables and the bucket arrays of indexes. With `huge`, the region is aligned
// to and sized in huge pages (2 MiB) and the kernel is asked to back it with
// them (transparent huge pages), so a random probe of a multi-gigabyte table
// misses the TLB far less often. A kernel that declines leaves the region on
// small pages; nothing else changes.
#include <cstddef>

namespace abyss::platform {

inline constexpr std::size_t kHugePage = std::size_t{2} << 20;

// `bytes` rounded up to what map_zeroed() reserves for them.
std::size_t mapped_size(std::size_t bytes, bool huge);

// A zeroed region of mapped_size(bytes, huge) bytes, aligned to a huge page
// when `huge` (to a small page otherwise); nullptr when the system refuses.
// Pages become resident as they are first written.
void* map_zeroed(std::size_t bytes, bool huge);

// Returns a region from map_zeroed(bytes, huge).
void unmap(void* p, std::size_t bytes, bool huge);

// Hints that the line holding `p` will be read soon. Natively a prefetch
// instruction; the simulated build ignores it (its cores do not overlap
// misses). Never faults, whatever `p` is. On x86-64 it is the instruction
// itself, as opaque assembly: GCC 12 at -O3 deletes some __builtin_prefetch
// calls outright (one written in both arms of an if, or behind a test of an
// optional index structure), and a dropped prefetch costs a fifth of
// read-only YCSB's throughput.
inline void prefetch(const void* p) {
#if defined(ABYSS_SIM)
  (void)p;
#elif defined(__x86_64__)
  asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p, 0, 3);
#endif
}

}  // namespace abyss::platform
