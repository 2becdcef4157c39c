#pragma once
// Txn<CC>'s scans of an ordered index, and the next-key writes that make them
// serializable under every scheme (docs/schemes.md, "Scans and phantoms"):
// the members txn/txn.h declares for them (it includes this file).
//
// A scan reads, under the scheme's own row hooks, every entry of its range
// and the entry after the range, and an insert into an ordered index writes,
// at commit, the entry after its key. An insert into a range that a
// concurrent scan read thus writes a row that the scan read (the next key is
// in the range, or is the one after it), and the scheme orders the two as it
// orders any read and write of one row: 2PL by the row's lock (next-key
// locking), timestamp ordering by the row's read timestamp, the optimistic
// schemes by the row's version at validation. H-STORE's partition locks
// already exclude every other transaction from the partitions a range lies
// in, so it reads and writes no next keys (kNextKeys).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <utility>

#include "txn/txn.h"

namespace abyss {

// Txn::scan's contract is at its declaration (txn/txn.h).
template <class CC>
template <class Visit>
inline Rc Txn<CC>::scan(Table& t, uint32_t index_id, uint64_t lo, uint64_t hi, std::size_t limit, ScanOrder order,
                        Visit&& visit) {
  const OrderedIndex* index = t.index(index_id).ordered();
  if (index == nullptr) {
    throw std::logic_error("a scan of table " + t.name() + "'s index " + t.index(index_id).name() + ", a hash index");
  }
  if (index_id > 0 && t.key_of(index_id) == nullptr) {
    throw std::logic_error("a scan of table " + t.name() + "'s index " + t.index(index_id).name() +
                           ", which has no key function");
  }
  hi = std::min(hi, Index::kEndKey - 1);
  if (lo > hi || limit == 0) return Rc::Ok;
  scanned_ = true;
  const bool next_keys = kNextKeys && w_.phantom_protection;
  collect_own_inserts(t, index_id, lo, hi, order);
  ScanRecord* record = nullptr;
  // The history's scans are ranges of the scanned index's keys
  // (docs/formats.md); a secondary index's rows are also logged as the
  // reads they are, under their primary keys.
  if (w_.history) {
    record = &scan_records_.emplace_back();
    record->table = &t;
    record->index = index_id;
    record->lo = lo;
    record->hi = hi;
    record->first = static_cast<uint32_t>(scan_seen_.size());
  }
  std::size_t own = 0;  // own_[own] is the next of the transaction's inserts to visit
  std::size_t visited = 0;
  bool more = true;  // the visitor asks for more, and the limit is not reached
  uint64_t last = 0;
  auto emit = [&](uint64_t key, const char* data, TxnId seen, bool others) {
    if (record != nullptr && others) scan_seen_.push_back({key, seen});
    last = key;
    more = visit(key, data) && ++visited < limit;
  };
  if (order == ScanOrder::Ascending) {
    uint64_t from = lo;  // the rows below it are visited
    while (more) {
      const Entry e = entry_at_or_above(*index, from);
      const char* data = nullptr;
      bool live = false;
      TxnId seen{};
      if (next_keys || e.key <= hi) {
        if (Rc rc = scan_read(t, index_id, e, data, live, seen); rc != Rc::Ok) return rc;
        // The read holds, or will validate, the row: a key inserted below
        // it from now on writes it. One inserted since the entry was found
        // is read first.
        if (next_keys && entry_at_or_above(*index, from).row != e.row) continue;
      }
      for (; more && own < own_.size() && own_[own].key < e.key; own++) emit(own_[own].key, own_[own].data, {}, false);
      if (!more || e.key > hi) break;
      if (live) emit(e.key, data, seen, true);
      if (e.key == hi) break;
      from = e.key + 1;
    }
  } else {
    if (next_keys) {
      // The entry above the range, read before any below it is looked up:
      // an insert into the range's top gap writes it. If it left the index
      // before the read (CC::reclaim), the one now above is read too.
      for (Entry above = entry_at_or_above(*index, hi + 1);;) {
        const char* data = nullptr;
        bool live = false;
        TxnId seen{};
        if (Rc rc = scan_read(t, index_id, above, data, live, seen); rc != Rc::Ok) return rc;
        const Entry now = entry_at_or_above(*index, hi + 1);
        if (now.row == above.row) break;
        above = now;
      }
    }
    uint64_t to = hi;  // the rows above it are visited
    while (more) {
      Entry e{};
      // Each entry is looked up after the one above it was read, so an
      // insert into the gap between them either is found or writes a row
      // this scan read.
      const bool any = entry_at_or_below(*index, to, e) && e.key >= lo;
      for (; more && own < own_.size() && (!any || own_[own].key > e.key); own++) {
        emit(own_[own].key, own_[own].data, {}, false);
      }
      if (!more || !any) break;
      const char* data = nullptr;
      bool live = false;
      TxnId seen{};
      if (Rc rc = scan_read(t, index_id, e, data, live, seen); rc != Rc::Ok) return rc;
      if (live) emit(e.key, data, seen, true);
      if (e.key == lo) break;
      to = e.key - 1;
    }
  }
  if (record != nullptr) {
    // A scan cut short by its limit or its visitor observed its range up
    // to the last key it visited.
    if (!more) (order == ScanOrder::Ascending ? record->hi : record->lo) = last;
    record->count = static_cast<uint32_t>(scan_seen_.size()) - record->first;
  }
  return Rc::Ok;
}

// A scan of the primary index.
template <class CC>
template <class Visit>
inline Rc Txn<CC>::scan(Table& t, uint64_t lo, uint64_t hi, std::size_t limit, ScanOrder order, Visit&& visit) {
  return scan(t, 0, lo, hi, limit, order, std::forward<Visit>(visit));
}

// The first entry at or above `from`: there is one, the end entry at the
// latest (Table::end_row).
template <class CC>
inline auto Txn<CC>::entry_at_or_above(const OrderedIndex& index, uint64_t from) -> Entry {
  const uint64_t t0 = w_.clock();
  Entry e;
  index.scan(from, Index::kEndKey, 1, [&](uint64_t key, Row* row) {
    e = {key, row};
    return false;
  });
  w_.charge(TimeCat::Index, w_.clock() - t0);
  if (e.row == nullptr) throw std::logic_error("an ordered index without its end entry");
  return e;
}

// The last entry at or below `to`, if there is one.
template <class CC>
inline bool Txn<CC>::entry_at_or_below(const OrderedIndex& index, uint64_t to, Entry& e) {
  const uint64_t t0 = w_.clock();
  bool found = false;
  index.scan_reverse(0, to, 1, [&](uint64_t key, Row* row) {
    e = {key, row};
    found = true;
    return false;
  });
  w_.charge(TimeCat::Index, w_.clock() - t0);
  return found;
}

// Reads a row a scan of index `index_id` reached, as read() does: `live`
// is false when the row is absent to this transaction (deleted, removed by
// it, or the end row), else `data` is its contents and `seen` the
// version's writer.
template <class CC>
inline Rc Txn<CC>::scan_read(Table& t, uint32_t index_id, const Entry& e, const char*& data, bool& live, TxnId& seen) {
  if (t.read_only() && w_.bypass_read_only) {
    data = layout_.data(e.row);
    platform::touch(data, t.schema().size(), platform::Access::Read);
    live = (RowLayout::header(e.row).flags & RowHeader::kDeleted) == 0;
    return Rc::Ok;
  }
  if (AccessT* a = find(e.row)) {
    if (Rc rc = complete(*a); rc != Rc::Ok) return rc;
    live = a->found && a->type != AccessType::Remove;
    data = a->view;
    seen = a->seen;
    return Rc::Ok;
  }
  AccessT* a = nullptr;
  if (Rc rc = first_read(t, e.key, e.row, a); rc != Rc::Ok) return rc;
  if (index_id > 0) name_by_primary_key(*a);
  live = check_live(*a);
  data = a->view;
  seen = a->seen;
  return Rc::Ok;
}

// The transaction's inserts into `t` whose keys in index `index_id` lie in
// [lo, hi], in `order`.
template <class CC>
inline void Txn<CC>::collect_own_inserts(const Table& t, uint32_t index_id, uint64_t lo, uint64_t hi, ScanOrder order) {
  own_.clear();
  if (!next_key_writes_) return;
  for (const AccessT& a : accesses_) {
    if (a.type != AccessType::Insert || a.table != &t) continue;
    const uint64_t key = index_id == 0 ? a.key : t.key_of(index_id)(a.local);
    if (key >= lo && key <= hi) own_.push_back({key, a.local});
  }
  std::sort(own_.begin(), own_.end(), [&](const OwnInsert& x, const OwnInsert& y) {
    return order == ScanOrder::Ascending ? x.key < y.key : x.key > y.key;
  });
}

// Each insert into an ordered index writes the entry after its key there:
// the row that a scan of the key's range reads, whichever way it goes (see
// the top of this file). Taken at commit, not at the insert: the install
// puts the key in the index while the scheme still holds, or is about to
// validate, this write, so no key can have come in between unseen.
//
// A removal that takes its row's entries out of the ordered indexes
// (kRemovesEntries) writes the entry after each as well: the gap it leaves
// joins the next one, so scans of either must meet the removal there.
template <class CC>
inline Rc Txn<CC>::write_next_keys() {
  const std::size_t n = accesses_.size();  // the writes added below are neither
  for (std::size_t i = 0; i < n; i++) {
    const AccessType type = accesses_[i].type;
    const bool removal = type == AccessType::Remove && kRemovesEntries && accesses_[i].found;
    if (type != AccessType::Insert && !removal) continue;
    Table& t = *accesses_[i].table;
    // What the row holds: the insert's data, or the copy or view of a removed row.
    const char* data = accesses_[i].local != nullptr ? accesses_[i].local : accesses_[i].view;
    for (uint32_t ix = 0; ix < t.index_count(); ix++) {
      const OrderedIndex* index = t.index(ix).ordered();
      if (index == nullptr) continue;
      // A removed row's entry is still in the index: the next key is above it.
      const uint64_t key = (ix == 0 ? accesses_[i].key : t.key_of(ix)(data)) + (removal ? 1 : 0);
      // Another insert may have come in below the next key while this
      // write waited for it; then the new next key is written too. Once
      // the one written is still the next, no insert can come in below it
      // unordered with this one.
      for (Entry next = entry_at_or_above(*index, key);;) {
        if (Rc rc = write_next_key(t, ix, next); rc != Rc::Ok) return rc;
        const Entry now = entry_at_or_above(*index, key);
        if (now.row == next.row) break;
        next = now;
      }
    }
  }
  return Rc::Ok;
}

template <class CC>
inline Rc Txn<CC>::write_next_key(Table& t, uint32_t index_id, const Entry& next) {
  if (AccessT* a = find(next.row)) {
    // Written already; a scheme that showed the write to others takes it
    // back, as for any write of it again.
    if (a->type == AccessType::Write) return rewrite(*a);
    if (a->type != AccessType::Read) return Rc::Ok;
    a->next_key_only = true;
    return upgrade_to_write(*a);
  }
  AccessT& a = add(t, next.key, next.row, AccessType::Write);
  a.next_key_only = true;
  if (Rc rc = timed(TimeCat::CcManager, [&] { return cc_.write(*this, a); }); rc != Rc::Ok) return rc;
  if (index_id > 0) name_by_primary_key(a);
  check_live(a);  // a deleted next key still orders the insert; it is no write in the history
  return Rc::Ok;
}

// An insert into a table with an ordered index writes next keys at commit;
// one into a table with secondary indexes needs their key functions.
template <class CC>
void Txn<CC>::note_insert(const Table& t, uint64_t key) {
  if (t.index().is_ordered() && key == Index::kEndKey) {
    throw std::logic_error("an insert into " + t.name() + " of its index's end key");
  }
  for (uint32_t i = 0; i < t.index_count(); i++) {
    if (i > 0 && t.key_of(i) == nullptr) {
      throw std::logic_error("an insert into " + t.name() + ", whose index " + t.index(i).name() +
                             " has no key function");
    }
    next_key_writes_ |= t.index(i).is_ordered();
  }
}

// A removal from a table with an ordered index writes next keys at commit.
template <class CC>
inline void Txn<CC>::note_removal(const Table& t) {
  if (!kRemovesEntries) return;
  for (uint32_t i = 0; i < t.index_count(); i++) next_key_writes_ |= t.index(i).is_ordered();
}

}  // namespace abyss
