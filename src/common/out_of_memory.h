#pragma once
// An allocation failure that says what it was for. main prints what() of the
// exception that ends a run, and std::bad_alloc's is only "std::bad_alloc";
// this one reads "out of memory allocating 272.0 MiB for table ycsb (a block
// of 16384 rows)". It is still a std::bad_alloc, so handlers of running out of
// memory catch it. The message lives in a fixed buffer: building it must not
// allocate, since memory is what just ran out.
#include <cstddef>
#include <cstdio>
#include <new>

namespace abyss {

class OutOfMemory final : public std::bad_alloc {
 public:
  // The purpose is the concatenation of the parts (so a table name needs no
  // std::string to be built).
  OutOfMemory(std::size_t bytes, const char* part1, const char* part2 = "", const char* part3 = "") noexcept {
    std::snprintf(message_, sizeof(message_), "out of memory allocating %.1f MiB for %s%s%s",
                  static_cast<double>(bytes) / (1 << 20), part1, part2, part3);
  }
  const char* what() const noexcept override { return message_; }

 private:
  char message_[256];
};

}  // namespace abyss
