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

#include "cc/common/wait.h"
#include "cc/traits.h"
#include "common/config.h"
#include "common/types.h"
#include "platform/latch.h"

namespace abyss::cc {

class Timestamp final {
 public:
  static constexpr SchemeTraits kTraits{
      .name = "timestamp",
      .summary = "basic timestamp ordering: late accesses abort, accesses wait for an older pending write",
      .paper = "Abyss §2.2",
      .family = Family::TimestampOrdering,
      .allocates_timestamps = true,  // every attempt takes a new timestamp that orders it
      .uses_latch = true,            // a row's timestamps and pending pre-write sit behind a latch
      .waits = true,                 // an access waits for an older pending pre-write
  };

  struct RowMeta {
    platform::Latch latch;
    uint64_t wts = 0;      // timestamp of the installed version
    uint64_t rts = 0;      // largest timestamp that read it
    uint64_t pending = 0;  // timestamp of the pending pre-write; 0: none
  };
  struct AccessMeta {
    bool prewrite = false;  // this access registered the row's pending pre-write
    platform::McsLatch::Node node;
  };
  struct TxnMeta {
    uint64_t ts = 0;
  };

  Timestamp(const Config& config, uint32_t /*workers*/) : latch_(config.latch) {}

  Rc begin(auto& t, bool /*restart*/) {
    t.meta().ts = t.worker().allocate_ts();
    return Rc::Ok;
  }

  Rc read(auto& t, auto& a) {
    const uint64_t ts = t.meta().ts;
    auto& m = t.row_meta(a.row);
    Rc rc = Rc::Ok;
    retry_until_done(t.worker(), [&] {
      platform::Latch::Guard g(m.latch, latch_);
      if (m.pending != 0 && m.pending < ts) return Attempt::Retry;
      if (ts < m.wts) {
        rc = Rc::Abort;
      } else {
        if (m.rts < ts) m.rts = ts;
        t.snapshot(a);
      }
      return Attempt::Done;
    });
    return rc;
  }

  Rc write(auto& t, auto& a) {
    const uint64_t ts = t.meta().ts;
    auto& m = t.row_meta(a.row);
    Rc rc = Rc::Ok;
    retry_until_done(t.worker(), [&] {
      platform::Latch::Guard g(m.latch, latch_);
      if (m.pending != 0 && m.pending < ts) return Attempt::Retry;
      if (ts < m.rts || ts < m.wts || m.pending != 0) {
        rc = Rc::Abort;
      } else {
        m.pending = ts;
        a.cc.prewrite = true;
        t.snapshot(a);
      }
      return Attempt::Done;
    });
    return rc;
  }

  // The row was read (and copied) at this timestamp. Any install since then
  // would have a younger `wts`; a pending pre-write would be younger too.
  Rc upgrade(auto& t, auto& a) {
    const uint64_t ts = t.meta().ts;
    auto& m = t.row_meta(a.row);
    platform::Latch::Guard g(m.latch, latch_);
    if (ts < m.rts || ts < m.wts || m.pending != 0) return Rc::Abort;
    m.pending = ts;
    a.cc.prewrite = true;
    return Rc::Ok;
  }

  // An inserted row is invisible until commit indexes it; it carries its
  // inserter's timestamp, so an older transaction that finds it afterwards
  // arrives too late for it.
  Rc insert(auto& t, auto& a) {
    auto& m = t.row_meta(a.row);
    m.wts = t.meta().ts;
    m.rts = t.meta().ts;
    return Rc::Ok;
  }

  // Latches every pre-written row so no read copies a half-installed row.
  // Only the pre-write's owner latches a row for longer than one check, so
  // holding several latches at once cannot deadlock.
  Rc commit(auto& t) {
    for (auto& a : t.accesses()) {
      if (a.cc.prewrite) t.row_meta(a.row).latch.lock(latch_, a.cc.node);
    }
    t.install_all();
    for (auto& a : t.accesses()) {
      if (!a.cc.prewrite) continue;
      auto& m = t.row_meta(a.row);
      m.wts = t.meta().ts;
      m.pending = 0;
      a.cc.prewrite = false;
      m.latch.unlock(latch_, a.cc.node);
    }
    return Rc::Ok;
  }

  void abort(auto& t) {
    for (auto& a : t.accesses()) {
      if (!a.cc.prewrite) continue;
      auto& m = t.row_meta(a.row);
      platform::Latch::Guard g(m.latch, latch_);
      m.pending = 0;
      a.cc.prewrite = false;
    }
  }

 private:
  platform::LatchKind latch_;
};

}  // namespace abyss::cc
