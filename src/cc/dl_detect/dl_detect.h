#pragma once
// DL_DETECT: 2PL with deadlock detection (Abyss §2.1, §4.2). A conflicting
// request queues; while it waits, its worker publishes whom it waits for in
// the partitioned waits-for graph and searches for a cycle through itself,
// aborting the youngest transaction on a cycle it finds. A request that has
// waited longer than --dl-timeout aborts (Abyss §4.2 "Waiting vs. Aborting";
// 0 never waits, which is NO_WAIT's behaviour). With --dl-detect off only the
// timeout breaks deadlocks (Abyss Fig. 4 ran so, with keys in sorted order).
// A waiter searches when its wait begins (the cycle a new wait closes is
// found at once) and then every --dl-detect-every-ns of its wait (default
// 1000, DBx1000's DL_LOOP_DETECT), and publishes at most --dl-max-edges
// (default 1024: every owner and waiter ahead of it, as DBx1000 lists
// them) of whom it waits for.
// A transaction is named by an id its worker makes alone (DBx1000's txn id:
// no shared counter), and the victim on a cycle is the transaction holding
// the fewest locks, the one that has done the least work (DBx1000's choice;
// ties go to the later id).
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cc/common/queued_locking.h"
#include "cc/common/wait.h"
#include "cc/dl_detect/waits_for.h"
#include "cc/lock/row_lock.h"
#include "cc/traits.h"
#include "common/config.h"
#include "common/knob.h"
#include "common/types.h"
#include "platform/clock.h"
#include "platform/latch.h"
#include "stats/stats.h"

namespace abyss::cc {

// DL_DETECT's settings, one knob row each (DlDetect::knobs); a run's are
// Config::settings<DlDetectConfig>().
struct DlDetectConfig {
  uint32_t timeout_us = 100;  // Abyss §4.2
  bool detect = true;
  uint32_t detect_every_ns = 1000;  // a waiter's time between cycle searches (DBx1000's DL_LOOP_DETECT)
  uint32_t max_edges = 1024;        // waits-for edges a waiter publishes; more are dropped
};

class DlDetect final : public QueuedLocking<DlDetect> {
 public:
  static constexpr SchemeTraits kTraits{
      .name = "dl_detect",
      .summary = "2PL, waits queue and a waits-for graph search breaks deadlocks",
      .paper = "Abyss §2.1, §4.2",
      .family = Family::Locking,
      .uses_latch = true,       // the row's lock queue sits behind a latch
      .waits = true,            // every conflicting request queues, up to --dl-timeout
      .writes_in_place = true,  // a written row is locked exclusively until the end (strict 2PL)
      .causes = abort_causes({AbortCause::Deadlock, AbortCause::Timeout, AbortCause::LockConflict}),
  };

  static std::vector<Knob> knobs() {
    constexpr auto unless_searching = +[](const SchemeTraits& /*s*/, const Config& c) -> std::string {
      return c.settings<DlDetectConfig>().detect ? "" : "--dl-detect off searches no cycles";
    };
    std::vector<Knob> t;
    t.push_back(integer<uint32_t>(
        "dl-timeout", "dl_timeout_us", 0, 10'000'000,
        +[](Config& c) -> uint32_t& { return c.settings<DlDetectConfig>().timeout_us; },
        "DL_DETECT: abort a lock wait after this many microseconds (0: never wait)"));
    t.push_back(on_off(
        "dl-detect", "dl_detect", +[](Config& c) -> bool& { return c.settings<DlDetectConfig>().detect; },
        "DL_DETECT: search the waits-for graph for cycles: on | off"));
    t.push_back(integer<uint32_t>(
        "dl-detect-every-ns", "dl_detect_every_ns", 1, 1'000'000'000,
        +[](Config& c) -> uint32_t& { return c.settings<DlDetectConfig>().detect_every_ns; },
        "DL_DETECT: nanoseconds of a lock wait between two searches of the waits-for graph, the first as the wait "
        "begins (DBx1000: 1000; Abyss §4.2)"));
    t.back().ignored_because = unless_searching;
    t.push_back(integer<uint32_t>(
        "dl-max-edges", "dl_max_edges", 1, 1024,
        +[](Config& c) -> uint32_t& { return c.settings<DlDetectConfig>().max_edges; },
        "DL_DETECT: waits-for edges a waiter publishes (the default keeps every owner and waiter ahead of it up to "
        "1024, as DBx1000 lists them); more are dropped, and a cycle through a dropped one is broken by the timeout "
        "(Abyss §4.2)"));
    t.back().ignored_because = unless_searching;
    return t;
  }

  DlDetect(const Config& config, uint32_t workers)
      : QueuedLocking(config),
        timeout_cycles_(
            static_cast<uint64_t>(config.settings<DlDetectConfig>().timeout_us * 1000.0 * platform::cycles_per_ns())),
        never_wait_(config.settings<DlDetectConfig>().timeout_us == 0),
        detect_(config.settings<DlDetectConfig>().detect),
        search_cycles_(
            static_cast<uint64_t>(config.settings<DlDetectConfig>().detect_every_ns * platform::cycles_per_ns())),
        graph_(workers, config.settings<DlDetectConfig>().max_edges),
        workers_(workers),
        ids_(workers) {}

  // Every attempt takes a new id from its worker's own count: ids are
  // distinct across workers (worker w's are w + 1 modulo the workers) and
  // rise within one.
  Rc begin(auto& t, bool /*restart*/) {
    const uint32_t w = t.worker().id.value;
    t.meta().ts = Timestamp{ids_[w].next++ * workers_ + w + 1};
    return Rc::Ok;
  }

 private:
  friend class QueuedLocking<DlDetect>;

  Rc acquire(auto& t, auto& a, LockMode mode) {
    const WorkerId me = t.worker().id;
    WaitsForGraph::Edge* edges = graph_.outgoing(me);
    const uint32_t max_edges = graph_.max_edges();
    uint32_t n = 0;
    return request(
        t, a, mode, AbortCause::Timeout,  // refused only with --dl-timeout 0
        [&](const LockRequest& /*r*/, const RowLock& l) {
          if (never_wait_) return false;
          // Everyone ahead: the owners and the queue before this request.
          l.for_each_request([&](const LockRequest& o) {
            if (o.worker != me && n < max_edges) edges[n++] = {o.worker, o.ts};
          });
          return true;
        },
        [&](const LockRequest& r) { return wait_detecting(t, r, edges, n); });
  }

  // Waits with its waits-for edges published, searching for a cycle as it
  // begins and every search interval after: Ok once granted, else an abort
  // for a deadlock (this transaction's search found a cycle, or another's
  // chose it as the victim) or the timeout. Giving up leaves the request
  // queued or, if granted meanwhile, owned; abort() releases it either way.
  // The wait names its deadline (the next search or the timeout), so a
  // simulated core sleeps until then unless what it waits on changes.
  Rc wait_detecting(auto& t, const LockRequest& r, WaitsForGraph::Edge* edges, uint32_t n) {
    const WorkerId me = r.worker;
    graph_.publish(me, r.ts, static_cast<uint32_t>(t.accesses().size()), edges, n);
    uint64_t next_search = 0;  // a search as the wait begins
    AbortCause cause = AbortCause::Timeout;
    const bool granted = wait_for_grant(t.worker(), r, [&](uint64_t t0, platform::SpinWait& spin) {
      if (graph_.abort_requested(me, r.ts)) {
        cause = AbortCause::Deadlock;
        return true;
      }
      uint64_t now = platform::cycles();
      if (now - t0 > timeout_cycles_) return true;
      if (detect_ && now >= next_search) {
        if (graph_.detect(me, r.ts)) {
          cause = AbortCause::Deadlock;
          return true;
        }
        now = platform::cycles();
        next_search = now + search_cycles_;
      }
      const uint64_t timeout_at = t0 + timeout_cycles_ + 1;
      spin.until(detect_ ? std::min(timeout_at, next_search) : timeout_at);
      return false;
    });
    graph_.clear(me);
    return granted ? Rc::Ok : t.abort_for(cause);
  }

  uint64_t timeout_cycles_;
  bool never_wait_;
  bool detect_;
  uint64_t search_cycles_;
  WaitsForGraph graph_;
  uint64_t workers_;
  // Each worker's count of attempts, on a line of its own (no other worker
  // reads it).
  struct alignas(platform::kCacheLine) LocalIds {
    uint64_t next = 0;
  };
  std::vector<LocalIds> ids_;
};

}  // namespace abyss::cc
