#pragma once
// Per-worker bump allocator (Abyss §4.1, Tale §5 "thread-local pre-allocating
// allocator"): chunks are taken from the system once and reused, so a worker in
// steady state does not call malloc per transaction.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "common/out_of_memory.h"

namespace abyss {

class Arena final {
 public:
  // `purpose` (a string literal) names the arena in an out-of-memory message.
  explicit Arena(std::size_t chunk_bytes = std::size_t{1} << 20, const char* purpose = "an arena")
      : chunk_bytes_(chunk_bytes), purpose_(purpose) {}
  ~Arena() {
    for (auto& c : chunks_) std::free(c.base);
    for (auto& c : owned_) std::free(c.base);
  }
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;
  Arena(Arena&& o) noexcept
      : chunk_bytes_(o.chunk_bytes_),
        purpose_(o.purpose_),
        chunks_(std::move(o.chunks_)),
        current_(o.current_),
        used_(o.used_),
        system_(o.system_),
        owned_(std::move(o.owned_)) {
    o.chunks_.clear();
    o.owned_.clear();
    o.current_ = 0;
    o.used_ = 0;
  }

  // From now on, each allocation is its own malloc, freed at reset() (the
  // system allocator that Tale §5 replaces with the arena: --alloc malloc).
  // Only before the first allocation.
  void use_system_allocator() { system_ = true; }
  bool uses_system_allocator() const { return system_; }

  // Memory for `bytes` aligned to `align` (a power of two, at most 4096).
  void* allocate(std::size_t bytes, std::size_t align = 16) {
    if (system_) return allocate_from_system(bytes, align);
    for (;;) {
      if (current_ < chunks_.size()) {
        Chunk& c = chunks_[current_];
        const std::size_t start = (used_ + align - 1) & ~(align - 1);
        if (start + bytes <= c.size) {
          used_ = start + bytes;
          return c.base + start;
        }
        current_++;
        used_ = 0;
        continue;
      }
      const std::size_t size = bytes + align > chunk_bytes_ ? bytes + align : chunk_bytes_;
      // 4096-aligned chunks so any requested alignment up to a page holds.
      const std::size_t pages = (size + 4095) & ~std::size_t{4095};
      auto* base = static_cast<char*>(std::aligned_alloc(4096, pages));
      if (base == nullptr) throw OutOfMemory(pages, purpose_);
      chunks_.push_back({base, size});
    }
  }

  char* allocate_zeroed(std::size_t bytes, std::size_t align = 16) {
    auto* p = static_cast<char*>(allocate(bytes, align));
    std::memset(p, 0, bytes);
    return p;
  }

  // Forgets every allocation but keeps the chunks for reuse (frees them, on
  // the system allocator).
  void reset() {
    current_ = 0;
    used_ = 0;
    for (auto& c : owned_) std::free(c.base);
    owned_.clear();
  }

  // Calls fn(base, bytes) for each chunk taken from the system.
  template <class Fn>
  void for_each_chunk(Fn&& fn) const {
    for (const auto& c : chunks_) fn(static_cast<const void*>(c.base), c.size);
    for (const auto& c : owned_) fn(static_cast<const void*>(c.base), c.size);
  }

  std::size_t reserved_bytes() const {
    std::size_t n = 0;
    for (const auto& c : chunks_) n += c.size;
    for (const auto& c : owned_) n += c.size;
    return n;
  }

 private:
  struct Chunk {
    char* base;
    std::size_t size;
  };
  void* allocate_from_system(std::size_t bytes, std::size_t align) {
    const std::size_t size = (bytes + align - 1) & ~(align - 1);  // aligned_alloc wants a multiple
    auto* p = static_cast<char*>(std::aligned_alloc(align, size == 0 ? align : size));
    if (p == nullptr) throw OutOfMemory(size, purpose_);
    owned_.push_back({p, size});
    return p;
  }

  std::size_t chunk_bytes_;
  const char* purpose_;
  std::vector<Chunk> chunks_;
  std::size_t current_ = 0;
  std::size_t used_ = 0;
  bool system_ = false;
  std::vector<Chunk> owned_;  // the system allocator's blocks
};

}  // namespace abyss
