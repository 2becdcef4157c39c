// The simulated build's operator new: every allocation starts on a cache line.
//
// The machine numbers lines in the order a run touches them (machine.cc), so
// a run does not follow the host's addresses, except in one way: which
// objects share a line. The heap aligns blocks to 16 bytes, so two small
// objects allocated one after the other share a line or not depending on
// every allocation made before them, down to the length of a path string in
// the run's configuration (a mutex's queue nodes at 4 cores: 39 K, 51 K,
// 52 K or 60 K commits as the --json path grew by 8 characters). Starting
// every block on a line makes the bytes that share a line those of one
// object, laid out by the program, whatever was allocated before.
//
// libstdc++'s array and nothrow forms call these; its over-aligned forms
// allocate with aligned_alloc and free with free, as these do. A sanitizer's
// runtime keeps its own.
#include <cstdlib>
#include <new>

#include "platform/atomic.h"

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)

namespace {

void* line_aligned(std::size_t bytes) {
  constexpr std::size_t kLine = abyss::platform::kCacheLine;
  // aligned_alloc wants a multiple of the alignment; zero bytes is one byte.
  const std::size_t size = bytes == 0 ? kLine : (bytes + kLine - 1) / kLine * kLine;
  if (size < bytes) throw std::bad_alloc();
  for (;;) {
    if (void* p = std::aligned_alloc(kLine, size)) return p;
    std::new_handler h = std::get_new_handler();
    if (h == nullptr) throw std::bad_alloc();
    h();
  }
}

}  // namespace

void* operator new(std::size_t bytes) { return line_aligned(bytes); }
void* operator new[](std::size_t bytes) { return line_aligned(bytes); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t /*bytes*/) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t /*bytes*/) noexcept { std::free(p); }

#endif
