#pragma once
// The transaction API that workloads are written against, once, for every
// scheme (docs/architecture.md, "The scheme seam"): read / update / insert /
// remove by primary key, and scans of a key range of an ordered index.
// Txn<CC> is instantiated per scheme, so every hook call is direct.
//
// Writes go to a private copy (taken when the scheme grants the write) and are
// installed by the scheme's commit through install_all(); a scheme decides
// whether reads see the row in place (2PL, under a lock) or a copy.
//
// This file holds the class, the API and the access set. The members of each
// other concern are defined in a file of their own, included at the end:
//   txn/scan.h           scans, and the next-key writes that protect them
//                        from phantoms under every scheme
//   txn/index_upkeep.h   installs into a table's secondary and ordered indexes
//   txn/reclaim.h        slots and index entries freed once unreachable (epochs)
//   txn/commit_record.h  the commit's log record and its history line
// A definition there is declared `inline`, as one inside the class is
// implicitly, so the compiler weighs inlining it the same; those the class
// marks noinline are not.
#include <cstdint>
#include <cstring>
#include <deque>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "common/types.h"
#include "platform/atomic.h"
#include "platform/machine.h"
#include "platform/memory.h"
#include "platform/shared_copy.h"
#include "platform/touch.h"
#include "stats/stats.h"
#include "storage/row.h"
#include "storage/table.h"
#include "txn/access.h"
#include "txn/access_index.h"
#include "txn/scheme_traits.h"
#include "txn/worker.h"

namespace abyss {

namespace log {
class RecordBuilder;
}  // namespace log

// A row as Txn::read_with() shows it: under an optimistic scheme the live
// row, which a committer may be installing meanwhile, so its bytes are read
// through the platform's shared loads (platform/shared_copy.h).
class SharedRow {
 public:
  explicit SharedRow(const char* data) : data_(data) {}
  unsigned char byte(uint32_t offset) const { return platform::load_shared_byte(data_ + offset); }
  // An 8-byte column at an 8-byte aligned offset (rows' data is aligned).
  int64_t int64(const Column& c) const { return static_cast<int64_t>(platform::load_shared_u64(data_ + c.offset)); }

 private:
  const char* data_;
};

template <class CC>
class Txn final {
 public:
  using AccessT = Access<CC>;
  // `capacity`: the most accesses a transaction may make.
  Txn(CC& cc, Worker& w, RowLayout layout, std::size_t capacity = kDefaultAccessCapacity)
      : cc_(cc), w_(w), layout_(layout), capacity_(capacity) {
    // Reserved once: lock requests embedded in entries are linked into row
    // queues, so the vector must never move them.
    accesses_.reserve(capacity_);
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
      if (Rc rc = complete(*a); rc != Rc::Ok) return rc;
      out = a->view;
      return Rc::Ok;
    }
    AccessT* a = nullptr;
    if (Rc rc = first_read(t, key, row, a); rc != Rc::Ok) return rc;
    if (!check_live(*a)) return Rc::NotFound;
    out = a->view;
    return Rc::Ok;
  }

  // Reads the row by passing it to `fn(const SharedRow&)`, without a copy
  // where the scheme allows: an optimistic scheme copies a row between two
  // reads of its version word (a seqlock) only to read it, so here it runs
  // `fn` on the row in place between the two instead, and again if a
  // committer installed meanwhile. `fn` must only compute from the row into
  // state it overwrites (its last run counts), and what it computed counts
  // only if this returns Ok. Other schemes, and optimistic ones with
  // --read-copy on, read as read() does, then call `fn` once. A later read(), update(), remove() or scan of the row
  // takes the copy then, and aborts if the row changed since (complete()).
  template <class Fn>
  Rc read_with(Table& t, uint64_t key, Fn&& fn) {
    Row* row = lookup(t, key);
    if (row == nullptr) return Rc::NotFound;
    if (t.read_only() && w_.bypass_read_only) {
      const char* data = layout_.data(row);
      platform::touch(data, t.schema().size(), platform::Access::Read);
      fn(SharedRow(data));
      return Rc::Ok;
    }
    AccessT* a = find(row);
    if (a != nullptr) {
      if (!a->found) return Rc::NotFound;
      if (Rc rc = complete(*a); rc != Rc::Ok) return rc;
    } else {
      a = &add(t, key, row, AccessType::Read);
      if constexpr (kVisits) {
        if (!w_.read_copy) {
          Visiting<std::remove_reference_t<Fn>> visiting(*this, fn);
          if (Rc rc = timed(TimeCat::CcManager, [&] { return cc_.read(visiting, *a); }); rc != Rc::Ok) return rc;
        } else if (Rc rc = timed(TimeCat::CcManager, [&] { return cc_.read(*this, *a); }); rc != Rc::Ok) {
          return rc;
        }
      } else {
        if (Rc rc = timed(TimeCat::CcManager, [&] { return cc_.read(*this, *a); }); rc != Rc::Ok) return rc;
      }
      if (!check_live(*a)) return Rc::NotFound;
      if (a->visited) return Rc::Ok;
    }
    fn(SharedRow(a->view));
    return Rc::Ok;
  }

  // Every column: what an update may change unless it says otherwise.
  static constexpr uint64_t kAnyColumn = ~uint64_t{0};
#if !defined(NDEBUG) || defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  // A checked build's commit compares the columns an update did not name
  // too, and refuses a change to one (std::logic_error); not under `none`,
  // whose rows change under a committer.
  static constexpr bool kCheckUndeclared = CC::kTraits.name != "none";
#else
  static constexpr bool kCheckUndeclared = false;
#endif

  // A private copy of the row to modify; it is installed at commit.
  // `columns` (bit i: column i of the table's schema) are the only ones the
  // transaction may change in it: with a log, the commit compares those
  // alone with the row it replaces (Txn::log_update), and the checked
  // builds find any other that changed. The copy is written before the
  // transaction's next call: a scheme may show it to others from then on
  // (BAMBOO retires the write), and a later change goes through update()
  // again.
  Rc update(Table& t, uint64_t key, char*& out, uint64_t columns = kAnyColumn) {
    refuse_read_only(t);
    Row* row = lookup(t, key);
    if (row == nullptr) return Rc::NotFound;
    if (AccessT* a = find(row)) {
      if (!a->found) return Rc::NotFound;
      if (Rc rc = complete(*a); rc != Rc::Ok) return rc;
      if (a->type == AccessType::Read) {
        if (Rc rc = upgrade_to_write(*a); rc != Rc::Ok) return rc;
      } else if (a->type == AccessType::Write) {
        if (Rc rc = rewrite(*a); rc != Rc::Ok) return rc;
      }
      if (a->type != AccessType::Write && a->type != AccessType::Insert) return Rc::NotFound;  // removed
      a->columns |= columns;
      out = a->local;
      return Rc::Ok;
    }
    AccessT& a = add(t, key, row, AccessType::Write);
    a.columns = columns;
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
    if (t.index().is_ordered() || t.index_count() > 1) note_insert(t, key);
    if constexpr (!kRemovesEntries) {
      // A removed row's ordered entry stays until no transaction can need it
      // (txn/reclaim.h), and one committed after this transaction's
      // timestamp is not visible to it: inserting the key now would hide
      // that row from older readers, so the insert waits for the entry to go.
      if (t.index().is_ordered() && t.index().find(key) != nullptr) return abort_for(AbortCause::Phantom);
    }
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
      if (Rc rc = complete(*a); rc != Rc::Ok) return rc;
      if (a->type == AccessType::Read) {
        if (Rc rc = timed(TimeCat::CcManager, [&] { return cc_.upgrade(*this, *a); }); rc != Rc::Ok) return rc;
        a->read_first = true;
        changes_++;
      } else if (a->type == AccessType::Write) {
        if (Rc rc = rewrite(*a); rc != Rc::Ok) return rc;
      }
      a->type = AccessType::Remove;
      note_removal(t);
      return Rc::Ok;
    }
    AccessT& a = add(t, key, row, AccessType::Remove);
    if (Rc rc = timed(TimeCat::CcManager, [&] { return cc_.write(*this, a); }); rc != Rc::Ok) return rc;
    if (!check_live(a)) return Rc::NotFound;
    note_removal(t);
    return Rc::Ok;
  }

  // Visits the live rows of `t` whose key in its index `index_id` (0: the
  // primary; Table::add_index) lies in [lo, hi], in ascending key order (or
  // descending), at most `limit` of them, until visit(key, data) answers
  // false. Each row is read as read() reads it, under the scheme; the
  // transaction's own inserts in the range are visited with the rest, its
  // own removals are not, its own updates are visited as updated. The index
  // must be ordered, and a secondary one must compute its keys. Answers Abort
  // when reading a row did; whatever was visited before then must be thrown
  // away. Defined in txn/scan.h.
  template <class Visit>
  Rc scan(Table& t, uint32_t index_id, uint64_t lo, uint64_t hi, std::size_t limit, ScanOrder order, Visit&& visit);
  // A scan of the primary index.
  template <class Visit>
  Rc scan(Table& t, uint64_t lo, uint64_t hi, std::size_t limit, ScanOrder order, Visit&& visit);

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

  // Why the attempt aborted: the last cause named since begin(), Unnamed if none.
  AbortCause abort_cause() const { return abort_cause_; }

  Rc begin(bool restart) {
    accesses_.clear();
    by_row_.clear();
    abort_cause_ = AbortCause::Unnamed;
    changes_ = 0;
    scan_records_.clear();
    scan_seen_.clear();
    next_key_writes_ = false;
    in_commit_ = false;
    scanned_ = false;
    commit_epoch_ = 0;
    commit_id_ = TxnId{};
    logged_ = false;
    w_.scratch.reset();
    if (w_.epochs != nullptr) enter_epoch();
    const Rc rc = timed(TimeCat::CcManager, [&] { return cc_.begin(*this, restart); });
    if constexpr (!kRemovesEntries) {
      if (rc == Rc::Ok && !removed_.empty()) reclaim_removed();
    }
    return rc;
  }

  Rc commit() {
    in_commit_ = true;
    if (kNextKeys && next_key_writes_ && w_.phantom_protection) {
      if (Rc rc = write_next_keys(); rc != Rc::Ok) return rc;
    }
    const Rc rc = timed(TimeCat::Commit, [&] { return cc_.commit(*this); });
    if (rc == Rc::Ok && w_.history) record_history();
    if (rc == Rc::Ok && w_.log != nullptr) [[unlikely]] {
      log_commit();
    }
    return rc;
  }

  // With a log: the epoch the committed transaction joined (log/logger.h),
  // and whether it wrote a record (it changed a row).
  // With a log: the epoch the commit waits for. A transaction that wrote
  // nothing waits only for the versions it read (read_epoch()).
  uint64_t commit_epoch() const { return commit_epoch_; }
  bool logged() const { return logged_; }

  // Rolls back a CC abort or a logical abort: nothing was installed, so this
  // puts back what was written in place and releases the scheme's state.
  // Rows it inserted were never indexed: their slots are retired.
  void abort() {
    if constexpr (CC::kTraits.writes_in_place) put_back();
    cc_.abort(*this);
    if (w_.epochs == nullptr) return;
    for (const AccessT& a : accesses_) {
      if (a.type == AccessType::Insert) retire(a.table, a.row);
    }
  }

  // ---- the scheme's side ---------------------------------------------------

  // Answers Abort, naming why: the scheme's hooks (and Txn's own checks)
  // abort through this, and the run counts the cause (AbortCause).
  Rc abort_for(AbortCause cause) {
    abort_cause_ = cause;
    return Rc::Abort;
  }
  Worker& worker() { return w_; }
  const RowLayout& layout() const { return layout_; }
  std::vector<AccessT>& accesses() { return accesses_; }
  // How many of the accesses change their row: writes, removals and
  // inserts (a read that became one counts once). At zero, a commit has
  // nothing to lock, install or publish.
  uint32_t changes() const { return changes_; }
  typename CC::TxnMeta& meta() { return meta_; }
  typename CC::RowMeta& row_meta(Row* r) const { return *static_cast<typename CC::RowMeta*>(layout_.meta(r)); }
  TxnId commit_id() const { return commit_id_; }
  // Whether the commit has begun: a write from here is one of its next-key
  // writes (txn/scan.h), made before the scheme's commit hook.
  bool in_commit() const { return in_commit_; }
  // The row `key` of `t` names in the primary index now, or null: a scheme
  // that declares rows before the attempt reaches them (VLL's restart).
  static Row* indexed_row(Table& t, uint64_t key) { return t.index().find(key); }
  // The partitions the transaction declared before it began (H-STORE), sorted.
  std::vector<uint32_t>& partitions() { return partitions_; }

  // The access reads the row in place (the scheme holds it stable).
  // The row's memory time is charged as useful work, as in DBx1000's
  // breakdown, where a scheme that reads in place hands the row over and
  // the transaction's logic reads it (a copy, by contrast, is the scheme's;
  // a lock word on the header's line was the scheme's when it took it).
  void view_in_place(AccessT& a) {
    const uint64_t t0 = w_.clock();
    touch_row(a, platform::Access::Read);
    w_.charge(TimeCat::Useful, w_.clock() - t0);
    a.seen = RowLayout::header(a.row).writer;
    a.view = layout_.data(a.row);
  }

  // Copies the row into the access's private buffer. The scheme holds the
  // row stable, or validates the copy afterwards: an optimistic scheme copies
  // while a committer may be installing (a seqlock), so the copy reads the
  // way install_all() writes (platform/shared_copy.h).
  //
  // Inside read_with() the scheme calls Visiting::snapshot() instead.
  void snapshot(AccessT& a) {
    const uint32_t size = a.table->schema().size();
    if (a.local == nullptr) a.local = static_cast<char*>(w_.scratch.allocate(size, 64));
    touch_row(a, platform::Access::Read);
    a.seen = TxnId{platform::load_shared_word(RowLayout::header(a.row).writer.value)};
    platform::load_shared(a.local, layout_.data(a.row), size);
    a.view = a.local;
  }

  // The access writes the row in place: `local` is the row's own data, and
  // what it held before is kept privately, to put back if the transaction
  // rolls back. For a scheme that holds the row exclusively from here to
  // its commit or abort (a 2PL exclusive lock, an H-STORE partition), which
  // says so in kTraits.writes_in_place: the write is the row access the
  // papers' protocols make (DBx1000 too writes in place, keeping a
  // before-image), with no copy to install. A run with a log copies instead
  // (snapshot()): its fuzzy checkpoint reads rows while transactions run and
  // must never see data that is not committed.
  //
  // A scheme with dirty_writes (none) holds nothing: the row names this
  // transaction as its writer from here, under the commit id it takes at its
  // first such write, so whoever reads the data before it commits (or after
  // it rolled back) names it.
  void write_in_place(AccessT& a) {
    static_assert(CC::kTraits.writes_in_place, "abort() puts back in-place writes only for such schemes");
    if (w_.log != nullptr) return snapshot(a);
    const uint32_t size = a.table->schema().size();
    if (a.undo == nullptr) a.undo = static_cast<char*>(w_.scratch.allocate(size, 64));
    touch_row(a, platform::Access::Write);
    RowHeader& h = RowLayout::header(a.row);
    a.seen = TxnId{platform::load_shared_word(h.writer.value)};
    std::memcpy(a.undo, layout_.data(a.row), size);
    a.local = layout_.data(a.row);
    a.view = a.local;
    if constexpr (CC::kTraits.dirty_writes) {
      if (commit_id_.value == 0) commit_id_ = w_.next_commit_id();
      platform::store_shared_word(h.writer.value, commit_id_.value);
    }
  }

  // Copies an older version of the row (MVCC), written by `writer`.
  void snapshot_version(AccessT& a, const char* data, TxnId writer) {
    copy_pending(a, data, writer);
    a.older_version = true;
  }

  // Copies a write not yet committed that its writer shows to others
  // (BAMBOO's retired writes), named by the id its writer took for it
  // (writer_id()). The scheme keeps `data` stable meanwhile.
  void copy_pending(AccessT& a, const char* data, TxnId writer) {
    const uint32_t size = a.table->schema().size();
    if (a.local == nullptr) a.local = static_cast<char*>(w_.scratch.allocate(size, 64));
    a.seen = writer;
    platform::touch(data, size, platform::Access::Read);
    std::memcpy(a.local, data, size);
    a.view = a.local;
  }

  // The id this transaction's writes will carry, taken now, for a scheme
  // with dirty_writes that shows a write before its commit: whoever copies
  // the write names this writer. install_all() keeps it (without a log;
  // with one, the commit takes an id in the log's order, and --history is
  // refused for such a scheme).
  TxnId writer_id() {
    static_assert(CC::kTraits.dirty_writes, "only a scheme with dirty writes names its writer before its commit");
    if (commit_id_.value == 0) commit_id_ = w_.next_commit_id();
    return commit_id_;
  }

  // Installs every write under a fresh commit id: copies back private data,
  // marks removals, makes inserts live and indexes them. The scheme calls this
  // while it holds whatever makes the install safe.
  void install_all() {
    if (w_.log == nullptr) [[likely]] {
      // A transaction with dirty writes named itself in rows already.
      if (!CC::kTraits.dirty_writes || commit_id_.value == 0) commit_id_ = w_.next_commit_id();
    } else {
      commit_id_ = ordered_commit_id();
      build_record();
    }
    if (changes_ == 0) return;
    for (AccessT& a : accesses_) {
      RowHeader& h = RowLayout::header(a.row);
      switch (a.type) {
        case AccessType::Read:
          break;
        case AccessType::Write:
          if (a.undo != nullptr) {  // written in place: only the header changes now
            if (a.table->index_count() > 1) refuse_key_change(a, a.undo);
            if (CC::kTraits.dirty_writes) break;  // it names its writer since the write
            platform::touch(&h, sizeof(RowHeader), platform::Access::Write);
          } else {
            touch_row(a, platform::Access::Write);
            if (a.table->index_count() > 1) refuse_key_change(a, layout_.data(a.row));
            platform::store_shared(layout_.data(a.row), a.local, a.table->schema().size());
          }
          stamp_epoch(h);
          platform::store_shared_word(h.writer.value, commit_id_.value);
          break;
        case AccessType::Remove:
          platform::touch(&h, sizeof(RowHeader), platform::Access::Write);
          platform::store_shared_u32(h.flags, h.flags | RowHeader::kDeleted);
          stamp_epoch(h);
          platform::store_shared_word(h.writer.value, commit_id_.value);
          if (w_.deleted_keys != nullptr && a.found) w_.deleted_keys->deleted(a.table->id(), a.key, commit_id_);
          if (kRemovesEntries && a.found) {
            remove_entries(a);
            if (kRetiresRemovals && w_.epochs != nullptr && a.table->removals_unlink()) retire(a.table, a.row);
          }
          if (!kRemovesEntries && a.found) note_removed(a);
          break;
        case AccessType::Insert: {
          touch_row(a, platform::Access::Write);  // its data was filled in place, unshared until now
          stamp_epoch(h);
          h.writer = commit_id_;
          h.flags = RowHeader::kLive;
          if (w_.deleted_keys != nullptr) a.seen = w_.deleted_keys->last(a.table->id(), a.key);
          const uint64_t t0 = w_.clock();
          a.table->index().insert(a.key, a.row, w_.persistent);
          if (a.table->index_count() > 1) index_secondaries(a);
          w_.charge(TimeCat::Index, w_.clock() - t0);
          break;
        }
      }
    }
  }

  // With a log, a version's epoch goes in its row's header with it, before
  // its writer's id publishes it.
  void stamp_epoch(RowHeader& h) {
    if (w_.log == nullptr) return;
    const uint64_t e = std::min<uint64_t>(commit_epoch_, RowHeader::kEpochUnknown);
    platform::store_shared_u32(h.epoch, static_cast<uint32_t>(e));
  }

  // With a log, for a transaction that wrote nothing: the newest epoch among
  // the rows it read, as their headers say at its commit. A row's epochs
  // only grow, so that bounds the epochs of the versions it read: once the
  // durable epoch reaches it, every version the transaction saw is durable
  // and its answer may leave. A scan reads rows it keeps no access for: a
  // transaction that scanned waits for the current epoch, as one that
  // writes does.
  uint64_t read_epoch() const {
    if (scanned_) return w_.log->current_epoch();
    uint64_t newest = 0;
    for (const AccessT& a : accesses_) {
      if (!a.found) continue;
      const uint32_t e = platform::load_shared_u32(RowLayout::header(a.row).epoch);
      if (e == RowHeader::kEpochUnknown) return w_.log->current_epoch();
      newest = std::max<uint64_t>(newest, e);
    }
    return newest;
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
  // Schemes whose reads copy under a seqlock: read_with() reads their rows
  // in place (the others read in place already, or copy under a lock),
  // unless --read-copy on asks for the copy.
  static constexpr bool kVisits = CC::kTraits.family == cc::Family::Optimistic;
  // The transaction as an optimistic scheme's read() sees it inside
  // read_with(): what the scheme's seqlock calls to copy the row passes it,
  // in place, to read_with()'s function, and the seqlock then validates what
  // the function read. The scheme's read() takes its transaction as `auto&`,
  // so the function is called directly, with nothing in between to stop the
  // compiler from inlining it into the seqlock.
  template <class Fn>
  class Visiting {
   public:
    Visiting(Txn& t, Fn& fn) : t_(t), fn_(fn) {}
    Worker& worker() { return t_.worker(); }
    typename CC::RowMeta& row_meta(Row* r) const { return t_.row_meta(r); }
    typename CC::TxnMeta& meta() { return t_.meta(); }
    Rc abort_for(AbortCause cause) { return t_.abort_for(cause); }
    void snapshot(AccessT& a) {
      t_.touch_row(a, platform::Access::Read);
      a.seen = TxnId{platform::load_shared_word(RowLayout::header(a.row).writer.value)};
      fn_(SharedRow(t_.layout_.data(a.row)));
      a.visited = true;
    }

   private:
    Txn& t_;
    Fn& fn_;
  };

  // A row read_with() read in place is copied, under the scheme, when the
  // transaction next reads, scans or writes it. The copy is the version
  // read_with() saw if the version's writer is the same (every install
  // writes a new one); otherwise a committer installed since, and the
  // transaction aborts, as its validation would.
  Rc complete(AccessT& a) {
    if constexpr (kVisits) {
      if (!a.visited) return Rc::Ok;
      AccessT copy = a;
      copy.visited = false;
      if (Rc rc = timed(TimeCat::CcManager, [&] { return cc_.read(*this, copy); }); rc != Rc::Ok) return rc;
      if (copy.seen != a.seen) return abort_for(AbortCause::ReadValidation);
      a.visited = false;
      a.cc = copy.cc;  // the scheme's record of the copy (of the same version, seen later)
      a.local = copy.local;
      a.view = copy.view;
    }
    return Rc::Ok;
  }

  // Partition locks (H-STORE) already cover every key of the partitions a
  // transaction declared; the next key may lie in another partition.
  static constexpr bool kNextKeys = !CC::kTraits.declares_partitions;
  // A committed removal takes the row's entries out of the ordered indexes,
  // unless the scheme keeps older versions that older transactions may still
  // read through them (MVCC): there the entries stay, as removed rows, and
  // keep serving as next keys.
  static constexpr bool kRemovesEntries = !CC::kTraits.keeps_versions;
  // A removed row's slot is used again once unreachable (txn/epochs.h), but
  // not under `none`: with no concurrency control two transactions may both
  // commit the removal of one row, which would free its slot twice.
  static constexpr bool kRetiresRemovals = CC::kTraits.family != cc::Family::None;

  // A row's first access by this transaction, a read, put to the scheme.
  Rc first_read(Table& t, uint64_t key, Row* row, AccessT*& a) {
    a = &add(t, key, row, AccessType::Read);
    return timed(TimeCat::CcManager, [&] { return cc_.read(*this, *a); });
  }
  // A row this transaction read becomes one it writes.
  Rc upgrade_to_write(AccessT& a) {
    if (Rc rc = complete(a); rc != Rc::Ok) return rc;
    if (Rc rc = timed(TimeCat::CcManager, [&] { return cc_.upgrade(*this, a); }); rc != Rc::Ok) return rc;
    a.type = AccessType::Write;
    a.read_first = true;
    changes_++;
    if (a.local == nullptr) {  // it was read in place
      if constexpr (CC::kTraits.writes_in_place) {
        write_in_place(a);
      } else {
        snapshot(a);
      }
    }
    return Rc::Ok;
  }

  // A row this transaction wrote is written again: a scheme that shows a
  // write to others before its commit (BAMBOO's retired writes) takes it
  // back first, with its optional hook `Rc rewrite(auto& txn, auto& access)`.
  Rc rewrite(AccessT& a) {
    if constexpr (requires { cc_.rewrite(*this, a); }) {
      return timed(TimeCat::CcManager, [&] { return cc_.rewrite(*this, a); });
    } else {
      return Rc::Ok;
    }
  }

  // Puts back the rows written in place (with dirty writes, their writers
  // too).
  [[gnu::noinline]] void put_back() {
    for (AccessT& a : accesses_) {
      if (a.undo == nullptr) continue;
      touch_row(a, platform::Access::Write);
      std::memcpy(a.local, a.undo, a.table->schema().size());
      if constexpr (CC::kTraits.dirty_writes) {
        platform::store_shared_word(RowLayout::header(a.row).writer.value, a.seen.value);
      }
    }
  }

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

  // The row of `key`: the index's, or, once a committed removal took the
  // key out of an ordered index, the row this transaction reached before
  // (its accesses to it stand, and the scheme orders them with the removal).
  Row* lookup(Table& t, uint64_t key) {
    const uint64_t t0 = w_.clock();
    Row* r = t.index().find(key);
    w_.charge(TimeCat::Index, w_.clock() - t0);
    if (r == nullptr && kRemovesEntries) r = reached_before(t, key);
    return r;
  }
  [[gnu::noinline]] Row* reached_before(const Table& t, uint64_t key) const {
    for (const AccessT& a : accesses_) {
      if (a.table == &t && a.key == key && a.type != AccessType::Insert) return a.row;
    }
    return nullptr;
  }

  // The row's first access: a scan of a short access set, a look-up in
  // by_row_ past kLinearFind accesses.
  AccessT* find(Row* row) {
    if (accesses_.size() <= kLinearFind) [[likely]] {
      for (AccessT& a : accesses_) {
        if (a.row == row) return &a;
      }
      return nullptr;
    }
    const uint32_t i = by_row_.find(row);
    return i == AccessIndex::kNone ? nullptr : &accesses_[i];
  }

  AccessT& add(Table& t, uint64_t key, Row* row, AccessType type) {
    if (accesses_.size() == capacity_) [[unlikely]] {
      refuse_access();
    }
    AccessT& a = accesses_.emplace_back();
    a.table = &t;
    a.key = key;
    a.row = row;
    a.type = type;
    if (type != AccessType::Read) changes_++;
    if (accesses_.size() > kLinearFind) [[unlikely]] {
      index_by_row();
    }
    return a;
  }
  // The newest access joins by_row_; the first time, every earlier one too.
  [[gnu::noinline]] void index_by_row() {
    const auto last = static_cast<uint32_t>(accesses_.size() - 1);
    if (last == kLinearFind) {
      for (uint32_t i = 0; i < last; i++) by_row_.add(accesses_[i].row, i);
    }
    by_row_.add(accesses_[last].row, last);
  }
  [[gnu::noinline, noreturn]] void refuse_access() const {
    throw std::runtime_error("a transaction touched more than " + std::to_string(capacity_) + " rows");
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

  // The steps below marked noinline are taken only by tables with ordered or
  // secondary indexes, by removals, or with a log: out of line, the common
  // paths of insert(), install_all() and commit() stay small enough to inline.

  // ---- scans and next-key writes (txn/scan.h) ------------------------------

  // An entry of an ordered index.
  struct Entry {
    uint64_t key = 0;
    Row* row = nullptr;
  };
  // A row this transaction inserted, which a scan of its range visits.
  struct OwnInsert {
    uint64_t key;
    const char* data;
  };
  Entry entry_at_or_above(const OrderedIndex& index, uint64_t from);
  bool entry_at_or_below(const OrderedIndex& index, uint64_t to, Entry& e);
  Rc scan_read(Table& t, uint32_t index_id, const Entry& e, const char*& data, bool& live, TxnId& seen);
  void collect_own_inserts(const Table& t, uint32_t index_id, uint64_t lo, uint64_t hi, ScanOrder order);
  Rc write_next_keys();
  Rc write_next_key(Table& t, uint32_t index_id, const Entry& next);
  [[gnu::noinline]] void note_insert(const Table& t, uint64_t key);
  void note_removal(const Table& t);

  // ---- index upkeep at install (txn/index_upkeep.h) ------------------------

  [[gnu::noinline]] void index_secondaries(const AccessT& a);
  [[gnu::noinline]] void remove_entries(const AccessT& a);
  void name_by_primary_key(AccessT& a) const;
  [[gnu::noinline]] void refuse_key_change(const AccessT& a, const char* before) const;

  // ---- slots and entries reclaimed later (txn/reclaim.h) -------------------

  // A row this transaction's committed removal left in ordered indexes
  // (!kRemovesEntries), under its primary key.
  struct Removed {
    Table* table;
    Row* row;
    uint64_t key;
  };
  [[gnu::noinline]] void note_removed(const AccessT& a);
  [[gnu::noinline]] void reclaim_removed();
  void enter_epoch();
  static constexpr uint32_t kAdvanceEvery = 16;
  void retire(Table* table, Row* row);
  bool reclaim(const Removed& r);

  // ---- the commit's log record and history line (txn/commit_record.h) ------

  // A scan, for the history: its range and the keys it saw from others,
  // scan_seen_[first, first + count).
  struct ScanRecord {
    const Table* table = nullptr;
    uint32_t index = 0;
    uint64_t lo = 0;
    uint64_t hi = 0;
    uint32_t first = 0;
    uint32_t count = 0;
  };
  struct SeenKey {
    uint64_t key;
    TxnId writer;
  };
  [[gnu::noinline]] TxnId ordered_commit_id();
  [[gnu::noinline]] void build_record();
  void log_update(log::RecordBuilder& record, const AccessT& a);
  [[noreturn]] static void refuse_undeclared(const AccessT& a, const Column& c);
  static bool logged_write(const AccessT& a);
  [[gnu::noinline]] void log_commit();
  std::string ack_log_commit_line() const;
  void record_history();
  std::span<const HistoryWriter::IndexKey> index_keys(const AccessT& a, const char* data);

  CC& cc_;
  Worker& w_;
  RowLayout layout_;
  std::size_t capacity_;  // accesses_ never grows past it
  AbortCause abort_cause_ = AbortCause::Unnamed;
  std::vector<AccessT> accesses_;
  // Past kLinearFind accesses, find() looks rows up by_row_.
  static constexpr std::size_t kLinearFind = 32;
  AccessIndex by_row_;
  uint32_t changes_ = 0;  // accesses that change their row (changes())
  std::vector<uint32_t> partitions_;
  bool next_key_writes_ = false;  // an insert or removal in a table with an ordered index
  bool in_commit_ = false;        // commit() has begun (in_commit())
  std::vector<OwnInsert> own_;
  std::deque<Removed> removed_;           // !kRemovesEntries: removals whose entries are still indexed
  std::vector<ScanRecord> scan_records_;  // with --history only
  std::vector<SeenKey> scan_seen_;
  std::vector<HistoryWriter::IndexKey> index_keys_;  // index_keys()' answer
  typename CC::TxnMeta meta_{};
  TxnId commit_id_{};
  bool scanned_ = false;          // a scan ran since begin()
  uint64_t commit_epoch_ = 0;     // with a log: the epoch read at install
  bool logged_ = false;           // with a log: the commit wrote a record
  std::size_t record_bytes_ = 0;  // with a log: the record built at install, not yet handed over
};

}  // namespace abyss

// The members of the other concerns (see the top of this file); each of
// these files includes this one first.
#include "txn/commit_record.h"
#include "txn/index_upkeep.h"
#include "txn/reclaim.h"
#include "txn/scan.h"
