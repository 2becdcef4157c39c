#pragma once
// The attempt loop every driver of transactions shares (the run's workers,
// the server's, the embedding Store's sessions): begin, the body, commit;
// after a CC abort, roll back, wait out the backoff and restart with the
// same inputs, until the transaction commits, rolls itself back, misses a
// key, or the caller stops it.
//
// The caller's part comes in through `hooks`, a type with these members
// (AttemptHooks has a do-nothing one of each to derive from):
//   void prepare()                      before each attempt (the run: its window, --time-sample)
//   void declare(Txn<CC>&)              the partitions a scheme that needs them locks
//   Rc body(Txn<CC>&)                   the transaction's accesses
//   void aborted(uint64_t start, uint64_t rolled_back)  a CC abort, rolled back (cycles)
//   bool park(uint64_t penalty_ns, uint64_t rolled_back, uint32_t aborts)
//                                       true: the caller keeps the transaction for later
//                                       (--abort-buffer) and the loop ends without waiting
//   void backed_off(uint64_t rolled_back)   the backoff is over
//   bool stop()                         checked after a backoff: true ends the loop
// On a simulated core every clock read and shared access takes virtual
// time, so the loop reads the clock and calls the hooks in one fixed order.
#include <cstdint>

#include "common/config.h"
#include "common/types.h"
#include "platform/backoff.h"
#include "platform/clock.h"
#include "txn/txn.h"
#include "txn/worker.h"

namespace abyss {

struct AttemptHooks {
  void prepare() {}
  template <class T>
  void declare(T& /*txn*/) {}
  void aborted(uint64_t /*start*/, uint64_t /*rolled_back*/) {}
  bool park(uint64_t /*penalty_ns*/, uint64_t /*rolled_back*/, uint32_t /*aborts*/) { return false; }
  void backed_off(uint64_t /*rolled_back*/) {}
  bool stop() { return false; }
};

// How the attempts ended. `rc`: Ok (committed), LogicalAbort (the body
// rolled it back), NotFound (the body missed a key; rolled back) or Abort
// (a CC abort, then parked or stopped). `aborts`: the CC aborts before the
// end, counting from the `first_aborts` given. `start`, `end`: cycles at the
// last attempt's start and end (Ok and LogicalAbort only).
struct Attempts {
  Rc rc = Rc::Ok;
  uint32_t aborts = 0;
  uint64_t start = 0;
  uint64_t end = 0;
};

// `yield_after_abort`: more runnable threads than cores, so the transaction
// this one conflicted with may be preempted while holding what it waits for;
// giving up the core after an abort lets it run (docs/schemes.md, "Liveness").
// An exception from the body, begin or commit rolls the transaction back and
// goes on to the caller.
template <class CC, class Hooks>
Attempts run_attempts(Txn<CC>& txn, Worker& w, const Config& cfg, bool yield_after_abort, uint32_t first_aborts,
                      Hooks& hooks) {
  // A transaction begins afresh (a new timestamp where its scheme keeps one
  // across restarts) the first time the loop runs it, a parked one
  // included; one retried in place after its backoff is a restart.
  bool restart = false;
  for (uint32_t aborts = first_aborts;; aborts++) {
    hooks.prepare();
    w.reset_attempt();
    const uint64_t start = platform::cycles();
    hooks.declare(txn);
    Rc rc = Rc::Ok;
    try {
      rc = txn.begin(restart);
      if (rc == Rc::Ok) rc = hooks.body(txn);
      if (rc == Rc::Ok) {
        rc = txn.commit();
      } else if (rc == Rc::LogicalAbort) {
        txn.abort();
      }
    } catch (...) {
      // Other workers must not wait forever for what this one holds.
      txn.abort();
      throw;
    }
    if (rc == Rc::NotFound) {
      txn.abort();  // releases what other workers may be waiting for
      return {rc, aborts, start, start};
    }
    const uint64_t end = platform::cycles();
    if (rc == Rc::Ok || rc == Rc::LogicalAbort) return {rc, aborts, start, end};
    // A CC abort: the whole attempt, and its roll-back, is wasted work.
    txn.abort();
    const uint64_t rolled_back = platform::cycles();
    hooks.aborted(start, rolled_back);
    // Tale §5: a random wait below a bound that doubles per abort (exp);
    // DBx1000: below a fixed bound (penalty).
    const uint64_t penalty_ns = cfg.backoff == BackoffKind::None ? 0 : w.rng.uniform(cfg.backoff_bound_ns(aborts) + 1);
    if (hooks.park(penalty_ns, rolled_back, aborts)) {
      if (yield_after_abort) platform::yield_thread();
      return {Rc::Abort, aborts + 1, start, rolled_back};
    }
    if (penalty_ns > 0) platform::pause_for_ns(penalty_ns);
    restart = true;
    if (yield_after_abort) platform::yield_thread();
    hooks.backed_off(rolled_back);
    if (hooks.stop()) return {Rc::Abort, aborts + 1, start, rolled_back};
  }
}

}  // namespace abyss
