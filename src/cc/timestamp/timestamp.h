#pragma once
// TIMESTAMP: basic timestamp ordering (Abyss §2.2, Bernstein & Goodman) with a
// decentralised scheduler: all state lives in the row.
//
// Every transaction takes a timestamp when it starts and a new one when it
// restarts. A row keeps the timestamp of its installed version (`wts`), the
// largest timestamp that read it (`rts`), and at most one pending pre-write.
//   - A read older than `wts` arrives too late and aborts. A read younger than
//     the pending pre-write waits for it to commit or abort (the `wait` of T/O);
//     otherwise it copies the row, so later reads repeat without locks.
//   - A write (every write here reads the row first) waits for an older
//     pending pre-write like a read, then aborts if a younger transaction has
//     read or written the row, or if a younger pre-write is pending; otherwise
//     it registers its pre-write and works on a private copy.
//   - Commit installs the pre-writes, which sets `wts`; abort drops them.
// Installs therefore happen in timestamp order per row, a pre-write never
// waits for anything younger, and every conflict edge points from an older to
// a younger timestamp: the schedule is serializable in timestamp order.
#include <cstdint>
#include <string_view>

#include "cc/common/to_row.h"
#include "cc/traits.h"
#include "common/config.h"
#include "common/types.h"
#include "platform/latch.h"

namespace abyss::cc {

// Not named Timestamp: that is the type of an allocated timestamp (common/types.h).
class BasicTimestampOrdering final {
 public:
  static constexpr SchemeTraits kTraits{
      .name = "timestamp",
      .summary = "basic timestamp ordering: late accesses abort, accesses wait for an older pending write",
      .paper = "Abyss §2.2",
      .family = Family::TimestampOrdering,
      .allocates_timestamps = true,  // every attempt takes a new timestamp that orders it
      .uses_latch = true,            // a row's timestamps and pending pre-write sit behind a latch
      .waits = true,                 // an access waits for an older pending pre-write
      .causes = abort_causes({AbortCause::TimestampOrder, AbortCause::LockConflict}),
  };

  using RowMeta = ToRowMeta;
  using AccessMeta = ToAccessMeta;
  using TxnMeta = ToTxnMeta;

  BasicTimestampOrdering(const Config& config, uint32_t /*workers*/) : latch_(config.latch) {}

  Rc begin(auto& t, bool /*restart*/) {
    t.meta().ts = t.worker().allocate_ts();
    return Rc::Ok;
  }

  // Only the newest version exists: a read older than it arrives too late.
  Rc read(auto& t, auto& a) {
    auto& m = t.row_meta(a.row);
    return after_older_writes(t, m, latch_, [&] {
      if (t.meta().ts < m.wts) return t.abort_for(AbortCause::TimestampOrder);
      read_newest(t, a, m);
      return Rc::Ok;
    });
  }

  Rc write(auto& t, auto& a) {
    return write_after_older_writes(t, a, latch_, [](RowMeta& /*m*/) {});
  }

  // The row was read (and copied) at this timestamp. Any install since then
  // would have a younger `wts`; a pending pre-write would be younger too.
  Rc upgrade(auto& t, auto& a) { return upgrade_to_prewrite(t, a, latch_); }

  Rc insert(auto& t, auto& a) {
    stamp_insert(t, a);
    return Rc::Ok;
  }

  // The replaced version is gone: nothing to keep, and its `rts` stays.
  Rc commit(auto& t) {
    install_prewrites(
        t, latch_, [](auto& /*a*/, RowMeta& /*m*/) {}, [](RowMeta& /*m*/) {});
    return Rc::Ok;
  }

  void abort(auto& t) { drop_prewrites(t, latch_); }

 private:
  platform::LatchKind latch_;
};

}  // namespace abyss::cc
