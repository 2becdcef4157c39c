#pragma once
// An array of T in zeroed pages straight from the OS (platform/memory.h),
// for the simulated machine's own large state: its tag arrays and its line
// table. Kept off the heap, the simulator's state never moves the engine's
// heap objects (and so which of them share a cache line), and zeroed pages
// cost nothing until they are first written.
#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

#include "platform/memory.h"

namespace abyss::platform::sim {

template <typename T>
class Mapped final {
  static_assert(std::is_trivially_copyable_v<T>, "zeroed pages hold the elements");

 public:
  Mapped() = default;
  // `n` zeroed elements; with `huge`, on huge pages where the kernel gives them.
  Mapped(std::size_t n, bool huge) : n_(n), huge_(huge) {
    if (n == 0) return;
    p_ = static_cast<T*>(map_zeroed(n * sizeof(T), huge));
    if (p_ == nullptr) throw std::bad_alloc();
  }
  ~Mapped() { unmap(p_, n_ * sizeof(T), huge_); }
  Mapped(Mapped&& o) noexcept { swap(o); }
  Mapped& operator=(Mapped&& o) noexcept {
    Mapped(std::move(o)).swap(*this);
    return *this;
  }
  Mapped(const Mapped&) = delete;
  Mapped& operator=(const Mapped&) = delete;

  T* data() const { return p_; }
  std::size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  T& operator[](std::size_t i) const { return p_[i]; }

 private:
  void swap(Mapped& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
    std::swap(huge_, o.huge_);
  }
  T* p_ = nullptr;
  std::size_t n_ = 0;
  bool huge_ = false;
};

}  // namespace abyss::platform::sim
