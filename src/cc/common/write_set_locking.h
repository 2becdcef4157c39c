#pragma once
// The commit steps that the optimistic schemes (OCC, SILO, TICTOC) share: lock
// the write set in one global order, install and publish each written row,
// which unlocks it, or unlock it untouched when validation fails. How a row is
// locked (a latch word, a lock bit), whether a locked row is waited for or
// aborts the committer, and what is published stay in the scheme, passed in
// as callables taking the row's RowMeta.
//
// The scheme's AccessMeta has `bool locked`: this transaction holds the row.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "txn/access.h"

namespace abyss::cc {

// Whether a commit locks its inserts along with its updates and removals.
enum class LockInserts : bool { No, Yes };

// Silo §4.4 phase 1: locks the write set, its rows in address order, the one
// global order in which every committer locks, so committers never wait for
// each other in a cycle. `order` receives the write set's indexes into the
// access set. `lock(m)` answers whether it got the row (a scheme that waits
// answers true once it has); at the first refusal this answers false, with
// the rows locked so far marked so that unlock_write_set() releases them.
template <LockInserts kInserts, class Lock>
bool lock_write_set(auto& t, std::vector<uint32_t>& order, Lock&& lock) {
  auto& accesses = t.accesses();
  order.clear();
  if (t.changes() == 0) return true;  // a read-only transaction
  for (uint32_t i = 0; i < accesses.size(); i++) {
    const AccessType type = accesses[i].type;
    if (type == AccessType::Read) continue;
    if (kInserts == LockInserts::No && type == AccessType::Insert) continue;
    order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) { return accesses[x].row < accesses[y].row; });
  for (uint32_t i : order) {
    auto& a = accesses[i];
    if (!lock(t.row_meta(a.row))) return false;
    a.cc.locked = true;
  }
  return true;
}

// Silo §4.4 phase 3: installs the writes while their rows are locked, then
// `publish(m)` stores each written or inserted row's new version word with
// release order, so a reader that sees the word sees the data, and the store
// unlocks the row. The install's stores are release stores after the lock
// RMWs: an optimistic reader whose copy saw any of them then sees the row
// locked, or its new version, when it re-reads the word
// (platform/shared_copy.h).
template <class Publish>
void install_and_publish(auto& t, Publish&& publish) {
  t.install_all();
  if (t.changes() == 0) return;
  for (auto& a : t.accesses()) {
    if (a.type != AccessType::Insert && !a.cc.locked) continue;
    publish(t.row_meta(a.row));
    a.cc.locked = false;
  }
}

// After a failed validation: `unlock(m)` releases each row this transaction
// locked, which keeps the version it has, since nothing was installed.
template <class Unlock>
void unlock_write_set(auto& t, Unlock&& unlock) {
  for (auto& a : t.accesses()) {
    if (!a.cc.locked) continue;
    unlock(t.row_meta(a.row));
    a.cc.locked = false;
  }
}

}  // namespace abyss::cc
