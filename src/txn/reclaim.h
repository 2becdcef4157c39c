#pragma once
// What Txn<CC> leaves behind for later, and reclaims once no transaction can
// need it: the slots of removed rows and aborted inserts, freed by epochs
// (txn/epochs.h), and, under a scheme that keeps older versions, the index
// entries of removed rows. The members txn/txn.h declares for them (it
// includes this file).
#include <cstdint>

#include "txn/epochs.h"
#include "txn/txn.h"

namespace abyss {

// Under a scheme that keeps removed rows' entries (!kRemovesEntries), a
// removal from a table with ordered indexes is noted, and its entries go
// once the scheme says no transaction can need them (CC::reclaim): until
// then scans pass over them. Removals are noted in commit order, so the
// oldest are tried first, at later begins, until one must wait.
template <class CC>
void Txn<CC>::note_removed(const AccessT& a) {
  for (uint32_t i = 0; i < a.table->index_count(); i++) {
    if (a.table->index(i).is_ordered()) {
      removed_.push_back({a.table, a.row, a.key});
      return;
    }
  }
}

template <class CC>
void Txn<CC>::reclaim_removed() {
  timed(TimeCat::Index, [&] {
    while (!removed_.empty() && reclaim(removed_.front())) {
      const Removed& r = removed_.front();
      if (w_.epochs != nullptr && r.table->removals_unlink()) retire(r.table, r.row);
      removed_.pop_front();
    }
    return removed_.size();
  });
}

// Announces this attempt's epoch, and frees the retired slots that no
// transaction can hold any more into their tables' cursors; it tries to
// move the epoch on every kAdvanceEvery begins while the oldest must wait.
template <class CC>
inline void Txn<CC>::enter_epoch() {
  Epochs& epochs = *w_.epochs;
  epochs.enter(w_.id.value);
  if (w_.retired.empty()) return;
  timed(TimeCat::Index, [&] {
    uint64_t now = epochs.now();
    if (!Epochs::free_at(w_.retired.front().epoch, now) && ++w_.begins_since_advance >= kAdvanceEvery) {
      w_.begins_since_advance = 0;
      now = epochs.try_advance();
    }
    for (; !w_.retired.empty() && Epochs::free_at(w_.retired.front().epoch, now); w_.retired.pop_front()) {
      const Worker::Retired& r = w_.retired.front();
      w_.cursors[r.table->id()].free.push_back(r.row);
    }
    return 0;
  });
}

// A slot no transaction can reach any more, freed once none holds it.
template <class CC>
inline void Txn<CC>::retire(Table* table, Row* row) {
  w_.retired.push_back({table, row, w_.epochs->now()});
}

// Takes a removed row's entries out of its ordered indexes, where the
// scheme lets it; false if one must stay for now.
template <class CC>
inline bool Txn<CC>::reclaim(const Removed& r) {
  const char* data = layout_.data(r.row);
  for (uint32_t i = 0; i < r.table->index_count(); i++) {
    Index& index = r.table->index(i);
    if (!index.is_ordered()) continue;
    const uint64_t key = i == 0 ? r.key : r.table->key_of(i)(data);
    if (index.find(key) != r.row) continue;  // gone already, or a later row's entry under the same key
    const OrderedIndex& ordered = *index.ordered();
    const bool done = cc_.reclaim(
        *this, r.row, [&] { return entry_at_or_above(ordered, key + 1).row; }, [&] { (void)index.remove(key); });
    if (!done) return false;
  }
  return true;
}

}  // namespace abyss
