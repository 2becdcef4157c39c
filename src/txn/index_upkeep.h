#pragma once
// How Txn<CC>'s installs keep a table's indexes in step with its rows: the
// entries of an insert in the secondary indexes, of a removal in the ordered
// ones, and the rules a secondary index puts on updates and on how its
// accesses are named. The members txn/txn.h declares for them (it includes
// this file).
#include <cstdint>
#include <stdexcept>

#include "txn/txn.h"

namespace abyss {

// The install of an insert into a table with secondary indexes.
template <class CC>
void Txn<CC>::index_secondaries(const AccessT& a) {
  for (uint32_t i = 1; i < a.table->index_count(); i++) {
    a.table->index(i).insert(a.table->key_of(i)(a.local), a.row, w_.persistent);
  }
}

// Takes a removed row's entries out of its table's ordered indexes (the
// install of a removal, under the scheme's write of the row and of each
// next key).
template <class CC>
void Txn<CC>::remove_entries(const AccessT& a) {
  Table& t = *a.table;
  const uint64_t t0 = w_.clock();
  for (uint32_t i = 0; i < t.index_count(); i++) {
    if (!t.index(i).is_ordered()) continue;
    const uint64_t key = i == 0 ? a.key : t.key_of(i)(layout_.data(a.row));
    (void)t.index(i).remove(key);
  }
  w_.charge(TimeCat::Index, w_.clock() - t0);
}

// An access made through a secondary index is named by the row's primary
// key, read from what the scheme gave it (the end row has none: it keeps
// the end key).
template <class CC>
inline void Txn<CC>::name_by_primary_key(AccessT& a) const {
  a.key = a.row == a.table->end_row() ? Index::kEndKey : a.table->key_of(0)(a.view != nullptr ? a.view : a.local);
}

// An update may not move a row within a secondary index: its entries there
// stay where the insert or the load put them.
// `before` is the row's data as the transaction found it.
template <class CC>
void Txn<CC>::refuse_key_change(const AccessT& a, const char* before) const {
  const Table& t = *a.table;
  for (uint32_t i = 1; i < t.index_count(); i++) {
    const Table::KeyOf key_of = t.key_of(i);
    if (key_of != nullptr && key_of(a.local) != key_of(before)) {
      throw std::logic_error("an update of " + t.name() + " changed its key in index " + t.index(i).name());
    }
  }
}

}  // namespace abyss
