#pragma once
// What the workloads with a transaction mix share: drawing a type by its
// share, and the per-worker ledger a workload's consistency check sums
// (SmallBank's money moved, TATP's rows inserted less deleted).
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/zipf.h"

namespace abyss {

// A transaction type drawn by its share of `percent`, whose entries sum to
// 100 (a type with share 0 is never drawn).
template <std::size_t N>
uint8_t draw_type(Rng& rng, const std::array<uint32_t, N>& percent) {
  auto pick = static_cast<uint32_t>(rng.uniform(100));
  uint8_t type = 0;
  while (pick >= percent[type]) pick -= percent[type++];
  return type;
}

// What each worker's transactions moved, on its own cache line: the running
// attempt's amount, which the transaction sets, and the sum of the committed
// attempts', which committed() adds to. Only worker w touches entry w.
class CommitLedger final {
 public:
  explicit CommitLedger(uint32_t workers) : entries_(workers) {}

  // Worker `w`'s running attempt's amount, set afresh by each attempt.
  int64_t& attempt(uint32_t w) { return entries_[w].attempt; }
  // Worker `w`'s last attempt committed.
  void committed(uint32_t w) { entries_[w].committed += entries_[w].attempt; }
  // Every worker's committed sum, once the workers have stopped.
  int64_t committed_total() const {
    int64_t sum = 0;
    for (const Entry& e : entries_) sum += e.committed;
    return sum;
  }

 private:
  struct alignas(64) Entry {
    int64_t attempt = 0;
    int64_t committed = 0;
  };
  std::vector<Entry> entries_;
};

}  // namespace abyss
