#pragma once
// NO_WAIT: 2PL with non-waiting deadlock prevention (Abyss §2.1). A lock
// request that conflicts aborts the requester at once, so there is no waiting
// and no deadlock. The per-row lock is one word taken with compare-and-swap:
// no lock table and no latch (Abyss §4.2).
#include <cstdint>
#include <string_view>

#include "cc/common/count_word.h"
#include "cc/traits.h"
#include "common/config.h"
#include "common/types.h"
#include "platform/atomic.h"

namespace abyss::cc {

class NoWait final {
 public:
  static constexpr SchemeTraits kTraits{
      .name = "no_wait",
      .summary = "2PL, a conflicting lock request aborts the requester at once",
      .paper = "Abyss §2.1",
      .family = Family::Locking,
      .allocates_timestamps = false,  // nobody waits, so nobody needs an age
      .uses_latch = false,            // the row lock is one word taken with compare-and-swap
      .waits = false,                 // a conflict aborts, it never queues
      .writes_in_place = true,        // a written row is locked exclusively until the end (strict 2PL)
      .causes = abort_causes({AbortCause::LockConflict}),
  };
  static constexpr uint64_t kExclusive = uint64_t{1} << 63;  // else: the count of readers
  using Word = CountWord<kExclusive>;

  struct RowMeta {
    platform::Atomic<uint64_t> word{0};
  };
  enum class Held : uint8_t { None, Shared, Exclusive };
  struct AccessMeta {
    Held held = Held::None;
  };
  struct TxnMeta {};

  NoWait(const Config& /*config*/, uint32_t /*workers*/) {}

  Rc begin(auto& /*t*/, bool /*restart*/) { return Rc::Ok; }

  Rc read(auto& t, auto& a) {
    if (!Word::try_shared(t.row_meta(a.row).word)) return t.abort_for(AbortCause::LockConflict);
    a.cc.held = Held::Shared;
    t.view_in_place(a);
    return Rc::Ok;
  }

  Rc write(auto& t, auto& a) {
    if (!Word::try_exclusive(t.row_meta(a.row).word)) return t.abort_for(AbortCause::LockConflict);
    a.cc.held = Held::Exclusive;
    t.write_in_place(a);
    return Rc::Ok;
  }

  // Read lock to write lock: only when this transaction is the sole reader.
  Rc upgrade(auto& t, auto& a) {
    if (!Word::try_upgrade(t.row_meta(a.row).word)) return t.abort_for(AbortCause::LockConflict);
    a.cc.held = Held::Exclusive;
    return Rc::Ok;
  }

  // An inserted row is invisible until commit indexes it: nothing to lock.
  Rc insert(auto& /*t*/, auto& /*a*/) { return Rc::Ok; }

  Rc commit(auto& t) {
    t.install_all();
    release(t);
    return Rc::Ok;
  }

  void abort(auto& t) { release(t); }

 private:
  void release(auto& t) {
    for (auto& a : t.accesses()) {
      auto& word = t.row_meta(a.row).word;
      if (a.cc.held == Held::Shared) word.fetch_sub(1, platform::memory_order_release);
      if (a.cc.held == Held::Exclusive) word.store(0, platform::memory_order_release);
      a.cc.held = Held::None;
    }
  }
};

}  // namespace abyss::cc
