#include "platform/memory.h"

#include <sys/mman.h>

#include <cstdint>

#include "platform/machine.h"

namespace abyss::platform {

namespace {

constexpr std::size_t kSmallPage = 4096;

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

}  // namespace

// Larger requests saturate here, and map_zeroed refuses them: no machine
// holds half the address space.
constexpr std::size_t kTooLarge = ~std::size_t{0} >> 1;

std::size_t mapped_size(std::size_t bytes, bool huge) {
  if (bytes >= kTooLarge) return kTooLarge;
  return round_up(bytes == 0 ? 1 : bytes, huge ? kHugePage : kSmallPage);
}

namespace {

void* map_zeroed_unplaced(std::size_t size, bool huge) {
  if (!huge) {
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? nullptr : p;
  }
  // Over-map by one huge page and trim both ends to an aligned region.
  const std::size_t span = size + kHugePage;
  void* raw = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  char* start = static_cast<char*>(raw);
  const std::size_t misalignment = reinterpret_cast<std::uintptr_t>(start) % kHugePage;
  const std::size_t head = misalignment == 0 ? 0 : kHugePage - misalignment;
  char* p = start + head;
  if (head > 0) munmap(start, head);
  if (span > head + size) munmap(p + size, span - head - size);
  madvise(p, size, MADV_HUGEPAGE);  // advice: a kernel without THP keeps small pages
  return p;
}

}  // namespace

void* map_zeroed(std::size_t bytes, bool huge) {
  const std::size_t size = mapped_size(bytes, huge);
  if (size >= kTooLarge) return nullptr;
  void* p = map_zeroed_unplaced(size, huge);
  if (p != nullptr) memory_taken(p, size);
  return p;
}

void unmap(void* p, std::size_t bytes, bool huge) {
  if (p == nullptr) return;
  memory_released(p);
  munmap(p, mapped_size(bytes, huge));
}

}  // namespace abyss::platform
