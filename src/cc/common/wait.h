#pragma once
// Waiting for another transaction, charged to the Wait category: for a queued
// request to be granted (the queued 2PL schemes, H-STORE's partitions), and
// for a conflict to clear (a pending write in TIMESTAMP and MVCC, a locked row
// in the optimistic schemes).
#include <cstdint>
#include <type_traits>

#include "platform/clock.h"
#include "platform/latch.h"
#include "stats/stats.h"

namespace abyss::cc {

// Spins until the request is granted or `give_up(t0)` says to stop; returns
// whether it was granted. A request granted while giving up counts as granted
// only if the caller then checks `granted` again, so callers that give up
// release the request either way. `Request` has a platform::Atomic<bool>
// `granted`, set with a release store by whoever grants it. The wait sleeps
// until what it read changes, so a `give_up` that depends on the clock takes
// the wait too, `give_up(t0, spin)`, and names its deadline with
// `spin.until(cycles)` each time it declines.
template <class Request, class GiveUp>
bool wait_for_grant(auto& worker, const Request& r, GiveUp&& give_up) {
  platform::SpinWait spin;
  if (r.granted.load(platform::memory_order_acquire)) return true;  // no wait, no clock read
  const uint64_t t0 = platform::cycles();
  bool granted = true;
  while (!r.granted.load(platform::memory_order_acquire)) {
    bool stop = false;
    if constexpr (std::is_invocable_v<GiveUp&, uint64_t, platform::SpinWait&>) {
      stop = give_up(t0, spin);
    } else {
      stop = give_up(t0);
    }
    if (stop) {
      granted = false;
      break;
    }
    spin.once();
  }
  worker.charge(TimeCat::Wait, platform::cycles() - t0);
  return granted;
}

// What an attempt found: it is done; another transaction holds what it needs,
// so it waits until what it read changes (Retry); or another transaction
// changed what it read and is already done with it, so it tries again at
// once (Again): a copy raced by an install, a CAS that lost to one. Waiting
// then would wait for a write that may never come (on a simulated core, a
// wait that parks until what it read is written again).
enum class Attempt : uint8_t { Done, Retry, Again };

// Calls `attempt()` until it returns Done, spinning before each retry it
// asks to wait for, and charges the time spent retrying to Wait.
template <class Fn>
void retry_until_done(auto& worker, Fn&& attempt) {
  platform::SpinWait spin;
  auto settle = [&] {
    Attempt r;
    while ((r = attempt()) == Attempt::Again) {
    }
    return r;
  };
  if (settle() == Attempt::Done) return;
  const uint64_t t0 = platform::cycles();
  do {
    spin.once();
  } while (settle() == Attempt::Retry);
  worker.charge(TimeCat::Wait, platform::cycles() - t0);
}

}  // namespace abyss::cc
