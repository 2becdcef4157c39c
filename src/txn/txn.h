#pragma once
// The transaction API that workloads are written against, once, for every
// scheme (docs/architecture.md, "The scheme seam"): read / update / insert / remove by primary
// key. Txn<CC> is instantiated per scheme, so every hook call is direct.
//
// Writes go to a private copy (taken when the scheme grants the write) and are
// installed by the scheme's commit through install_all(); a scheme decides
// whether reads see the row in place (2PL, under a lock) or a copy.
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <vector>

#include "common/types.h"
#include "platform/atomic.h"
#include "platform/clock.h"
#include "platform/machine.h"
#include "platform/memory.h"
#include "platform/shared_copy.h"
#include "platform/touch.h"
#include "stats/stats.h"
#include "storage/row.h"
#include "storage/table.h"
#include "txn/access.h"
#include "txn/worker.h"

namespace abyss {

template <class CC>
class Txn final {
 public:
  using AccessT = Access<CC>;
  static constexpr std::size_t kMaxAccesses = 1024;

  Txn(CC& cc, Worker& w, RowLayout layout) : cc_(cc), w_(w), layout_(layout) {
    // Reserved once: lock requests embedded in entries are linked into row
    // queues, so the vector must never move them.
    accesses_.reserve(kMaxAccesses);
  }

  // ---- the workload-facing API -------------------------------------------

  // The row's current contents, valid until the transaction ends. A row of a
  // read-only table is read in place, outside the access set and the history
  // (unless --read-only-tables cc puts those reads under the scheme too).
  Rc read(Table& t, uint64_t key, const char*& out) {
    Row* row = lookup(t, key);
    if (row == nullptr) return Rc::NotFound;
    if (t.read_only() && w_.bypass_read_only) {
      out = layout_.data(row);
      platform::touch(out, t.schema().size(), platform::Access::Read);
      return Rc::Ok;
    }
    if (AccessT* a = find(row)) {
      if (!a->found) return Rc::NotFound;
      out = a->view;
      return Rc::Ok;
    }
    AccessT& a = add(t, key, row, AccessType::Read);
    if (Rc rc = timed(TimeCat::CcManager, [&] { return cc_.read(*this, a); }); rc != Rc::Ok) return rc;
    if (!check_live(a)) return Rc::NotFound;
    out = a.view;
    return Rc::Ok;
  }

  // A private copy of the row to modify; it is installed at commit.
  Rc update(Table& t, uint64_t key, char*& out) {
    refuse_read_only(t);
    Row* row = lookup(t, key);
    if (row == nullptr) return Rc::NotFound;
    if (AccessT* a = find(row)) {
      if (!a->found) return Rc::NotFound;
      if (a->type == AccessType::Read) {
        if (Rc rc = timed(TimeCat::CcManager, [&] { return cc_.upgrade(*this, *a); }); rc != Rc::Ok) return rc;
        a->type = AccessType::Write;
        a->read_first = true;
        if (a->local == nullptr) snapshot(*a);  // it was read in place
      }
      if (a->type != AccessType::Write && a->type != AccessType::Insert) return Rc::NotFound;  // removed
      out = a->local;
      return Rc::Ok;
    }
    AccessT& a = add(t, key, row, AccessType::Write);
    if (Rc rc = timed(TimeCat::CcManager, [&] { return cc_.write(*this, a); }); rc != Rc::Ok) return rc;
    if (!check_live(a)) return Rc::NotFound;
    out = a.local;
    return Rc::Ok;
  }

  // A zeroed row to fill in. The key must be new: workloads draw inserted keys
  // from a counter they update in the same transaction (TPC-C's D_NEXT_O_ID),
  // so two transactions never insert one key.
  Rc insert(Table& t, uint64_t key, char*& out) {
    refuse_read_only(t);
    Row* row = t.allocate(w_.cursors[t.id()]);
    new (layout_.meta(row)) typename CC::RowMeta();
    AccessT& a = add(t, key, row, AccessType::Insert);
    a.local = layout_.data(row);
    a.view = a.local;
    if (Rc rc = timed(TimeCat::CcManager, [&] { return cc_.insert(*this, a); }); rc != Rc::Ok) return rc;
    out = a.local;
    return Rc::Ok;
  }

  Rc remove(Table& t, uint64_t key) {
    refuse_read_only(t);
    Row* row = lookup(t, key);
    if (row == nullptr) return Rc::NotFound;
    if (AccessT* a = find(row)) {
      if (!a->found || a->type == AccessType::Remove) return Rc::NotFound;
      if (a->type == AccessType::Read) {
        if (Rc rc = timed(TimeCat::CcManager, [&] { return cc_.upgrade(*this, *a); }); rc != Rc::Ok) return rc;
        a->read_first = true;
      }
      a->type = AccessType::Remove;
      return Rc::Ok;
    }
    AccessT& a = add(t, key, row, AccessType::Remove);
    if (Rc rc = timed(TimeCat::CcManager, [&] { return cc_.write(*this, a); }); rc != Rc::Ok) return rc;
    if (!check_live(a)) return Rc::NotFound;
    return Rc::Ok;
  }

  // Hints that the transaction will access these keys of `t` next (--prefetch):
  // every key's index bucket is fetched, then every row the index finds, so
  // their misses overlap instead of following one another. Reads nothing a
  // scheme orders: the accesses themselves still do that. The simulated build
  // skips it: its cores do not overlap misses, so it would only probe twice.
  void prefetch(const Table& t, std::span<const uint64_t> keys) {
    if (platform::kSimulated || !w_.prefetch) return;
    const uint64_t t0 = w_.clock();
    const Index& index = t.index();
    for (const uint64_t key : keys) index.prefetch(key);
    for (const uint64_t key : keys) {
      if (const Row* row = index.find(key)) {
        // Every line the row spans (a packed row may start mid-line).
        const auto* start = reinterpret_cast<const char*>(row);
        const char* end = start + t.stride();
        for (const char* line = start - reinterpret_cast<std::uintptr_t>(start) % platform::kCacheLine; line < end;
             line += platform::kCacheLine) {
          platform::prefetch(line);
        }
      }
    }
    w_.charge(TimeCat::Index, w_.clock() - t0);
  }

  // ---- the runner's side ---------------------------------------------------

  Rc begin(bool restart) {
    accesses_.clear();
    w_.scratch.reset();
    return timed(TimeCat::CcManager, [&] { return cc_.begin(*this, restart); });
  }

  Rc commit() {
    const Rc rc = timed(TimeCat::Commit, [&] { return cc_.commit(*this); });
    if (rc == Rc::Ok && w_.history) record_history();
    return rc;
  }

  // Rolls back a CC abort or a logical abort: nothing was installed, so this
  // releases the scheme's state.
  void abort() { cc_.abort(*this); }

  // ---- the scheme's side ---------------------------------------------------

  Worker& worker() { return w_; }
  const RowLayout& layout() const { return layout_; }
  std::vector<AccessT>& accesses() { return accesses_; }
  typename CC::TxnMeta& meta() { return meta_; }
  typename CC::RowMeta& row_meta(Row* r) const { return *static_cast<typename CC::RowMeta*>(layout_.meta(r)); }
  TxnId commit_id() const { return commit_id_; }
  // The partitions the transaction declared before it began (H-STORE), sorted.
  std::vector<uint32_t>& partitions() { return partitions_; }

  // The access reads the row in place (the scheme holds it stable).
  void view_in_place(AccessT& a) {
    touch_row(a, platform::Access::Read);
    a.seen = RowLayout::header(a.row).writer;
    a.view = layout_.data(a.row);
  }

  // Copies the row into the access's private buffer. The scheme holds the
  // row stable, or validates the copy afterwards: an optimistic scheme copies
  // while a committer may be installing (a seqlock), so the copy reads the
  // way install_all() writes (platform/shared_copy.h).
  void snapshot(AccessT& a) {
    const uint32_t size = a.table->schema().size();
    if (a.local == nullptr) a.local = static_cast<char*>(w_.scratch.allocate(size, 64));
    touch_row(a, platform::Access::Read);
    a.seen = TxnId{platform::load_shared_word(RowLayout::header(a.row).writer.value)};
    platform::load_shared(a.local, layout_.data(a.row), size);
    a.view = a.local;
  }

  // Copies an older version of the row (MVCC), written by `writer`.
  void snapshot_version(AccessT& a, const char* data, TxnId writer) {
    const uint32_t size = a.table->schema().size();
    if (a.local == nullptr) a.local = static_cast<char*>(w_.scratch.allocate(size, 64));
    a.seen = writer;
    platform::touch(data, size, platform::Access::Read);
    std::memcpy(a.local, data, size);
    a.view = a.local;
    a.older_version = true;
  }

  // Installs every write under a fresh commit id: copies back private data,
  // marks removals, makes inserts live and indexes them. The scheme calls this
  // while it holds whatever makes the install safe.
  void install_all() {
    commit_id_ = w_.next_commit_id();
    for (AccessT& a : accesses_) {
      RowHeader& h = RowLayout::header(a.row);
      switch (a.type) {
        case AccessType::Read:
          break;
        case AccessType::Write:
          touch_row(a, platform::Access::Write);
          platform::store_shared(layout_.data(a.row), a.local, a.table->schema().size());
          platform::store_shared_word(h.writer.value, commit_id_.value);
          break;
        case AccessType::Remove:
          platform::touch(&h, sizeof(RowHeader), platform::Access::Write);
          platform::store_shared_u32(h.flags, h.flags | RowHeader::kDeleted);
          platform::store_shared_word(h.writer.value, commit_id_.value);
          break;
        case AccessType::Insert: {
          touch_row(a, platform::Access::Write);  // its data was filled in place, unshared until now
          h.writer = commit_id_;
          h.flags = RowHeader::kLive;
          const uint64_t t0 = w_.clock();
          a.table->index().insert(a.key, a.row, w_.persistent);
          w_.charge(TimeCat::Index, w_.clock() - t0);
          break;
        }
      }
    }
  }

  // Charges `fn`'s time to `cat`, less whatever nested sections charged to
  // other categories meanwhile (waits inside a lock request, say).
  template <class Fn>
  auto timed(TimeCat cat, Fn&& fn) {
    const uint64_t charged0 = w_.charged;
    const uint64_t t0 = w_.clock();
    auto result = fn();
    const uint64_t dt = w_.clock() - t0;
    const uint64_t nested = w_.charged - charged0;
    w_.charge(cat, dt > nested ? dt - nested : 0);
    return result;
  }

 private:
  static void refuse_read_only(const Table& t) {
    if (t.read_only()) throw std::logic_error("a transaction wrote to read-only table " + t.name());
  }

  // The row's header and data, read or written with plain loads and stores
  // while the scheme makes that safe: the data traffic of a row access
  // (src/platform/README.md, "Data traffic").
  void touch_row(const AccessT& a, platform::Access how) const {
    platform::touch(&RowLayout::header(a.row), sizeof(RowHeader), how);
    platform::touch(layout_.data(a.row), a.table->schema().size(), how);
  }

  Row* lookup(Table& t, uint64_t key) {
    const uint64_t t0 = w_.clock();
    Row* r = t.index().find(key);
    w_.charge(TimeCat::Index, w_.clock() - t0);
    return r;
  }

  AccessT* find(Row* row) {
    for (AccessT& a : accesses_) {
      if (a.row == row) return &a;
    }
    return nullptr;
  }

  AccessT& add(Table& t, uint64_t key, Row* row, AccessType type) {
    if (accesses_.size() == kMaxAccesses) {
      throw std::runtime_error("a transaction touched more than " + std::to_string(kMaxAccesses) + " rows");
    }
    AccessT& a = accesses_.emplace_back();
    a.table = &t;
    a.key = key;
    a.row = row;
    a.type = type;
    return a;
  }

  // A row removed by a committed transaction reads as absent (unless the
  // scheme picked a version from before the remove); the access stays
  // so the scheme releases what it took.
  bool check_live(AccessT& a) {
    if (a.older_version || (platform::load_shared_u32(RowLayout::header(a.row).flags) & RowHeader::kDeleted) == 0) {
      return true;
    }
    a.found = false;
    return false;
  }

  void record_history() {
    HistoryWriter& h = *w_.history;
    h.begin(commit_id_);
    for (const AccessT& a : accesses_) {
      if (!a.found) continue;
      if (a.type == AccessType::Read || a.read_first) h.read(a.table->name(), a.key, a.seen);
    }
    for (const AccessT& a : accesses_) {
      if (!a.found) continue;
      if (a.type == AccessType::Write) h.write(a.table->name(), a.key, a.seen);
      if (a.type == AccessType::Remove) h.write(a.table->name(), a.key, a.seen, HistoryWriter::WriteKind::Delete);
      if (a.type == AccessType::Insert) h.write(a.table->name(), a.key, kLoadTxn, HistoryWriter::WriteKind::Insert);
    }
    h.end();
  }

  CC& cc_;
  Worker& w_;
  RowLayout layout_;
  std::vector<AccessT> accesses_;
  std::vector<uint32_t> partitions_;
  typename CC::TxnMeta meta_{};
  TxnId commit_id_{};
};

}  // namespace abyss
