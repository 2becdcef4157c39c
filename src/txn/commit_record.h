#pragma once
// What Txn<CC>'s commit leaves on record: with a log, its commit id ordered
// for recovery and its log record (log/record.h, docs/durability.md); with
// --history, its line in the history log (txn/history.h, docs/formats.md).
// The members txn/txn.h declares for them (it includes this file).
#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>

#include "log/record.h"
#include "platform/clock.h"
#include "platform/shared_copy.h"
#include "storage/schema.h"
#include "txn/history.h"
#include "txn/txn.h"

namespace abyss {

// With a log, commit ids order the versions of each row for recovery
// (docs/durability.md): an id exceeds the id of every version this
// transaction replaces (next keys included, so a key inserted again after
// its removal comes after it) and the worker's own last one, and stays
// unique (it is the worker's id modulo the workers). The epoch is read
// here, after every read and while the scheme holds every write.
template <class CC>
TxnId Txn<CC>::ordered_commit_id() {
  uint64_t floor = w_.last_commit_id;
  for (const AccessT& a : accesses_) {
    if (a.type != AccessType::Read) floor = std::max(floor, RowLayout::header(a.row).writer.value);
  }
  commit_epoch_ = w_.log->enter_install();
  w_.last_commit_id = (floor / w_.count + 1) * w_.count + w_.id.value;
  return TxnId{w_.last_commit_id};
}

// Builds the committed writes' log record (log/record.h), in install_all
// before any write is installed: an insert's data is the row itself,
// which others may change once it is installed, and an update's changes
// are found against the row it replaces. An update's changed columns, an
// insert's row, a removal's key; writes of next keys leave their rows as
// they were and are not logged.
template <class CC>
void Txn<CC>::build_record() {
  const uint64_t t0 = platform::cycles();
  record_bytes_ = 0;
  if (std::any_of(accesses_.begin(), accesses_.end(), logged_write)) {
    std::string& buf = w_.log->record_buffer();
    const std::size_t before = buf.size();
    log::RecordBuilder record(buf);
    record.begin(commit_epoch_, commit_id_.value);
    for (const AccessT& a : accesses_) {
      if (!logged_write(a)) continue;
      const uint32_t size = a.table->schema().size();
      switch (a.type) {
        case AccessType::Write:
          log_update(record, a);
          break;
        case AccessType::Insert:
          record.write(a.table->id(), log::WriteKind::Insert, a.key, a.local, size);
          break;
        case AccessType::Remove:
          record.write(a.table->id(), log::WriteKind::Delete, a.key, nullptr, 0);
          break;
        case AccessType::Read:
          break;
      }
    }
    record.end();
    record_bytes_ = buf.size() - before;
  }
  w_.charge(TimeCat::Log, platform::cycles() - t0);
}

// An update's write: the columns whose bytes differ from the version it
// replaces (the row, which the scheme holds against other writers, and
// which install_all() then overwrites whole), unless logging the row whole
// is no larger. Only the columns the transaction said it may change are
// compared (Txn::update); the checked builds compare the others too and
// refuse a change to one of them, which recovery would lose. Recovery
// applies a column only over an older version of it (engine/recover.cc),
// so the changes of one row may be replayed in any order.
template <class CC>
void Txn<CC>::log_update(log::RecordBuilder& record, const AccessT& a) {
  const Schema& schema = a.table->schema();
  const auto& columns = schema.columns();
  const char* old = layout_.data(a.row);
  uint64_t mask = 0;
  uint32_t bytes = 0;
  if (columns.size() <= log::kMaskColumns) {
    const uint64_t all = columns.size() == 64 ? ~uint64_t{0} : (uint64_t{1} << columns.size()) - 1;
    for (uint64_t m = kCheckUndeclared ? all : a.columns & all; m != 0; m &= m - 1) {
      const auto i = static_cast<std::size_t>(std::countr_zero(m));
      const Column& c = columns[i];
      const bool declared = (a.columns >> i & 1) != 0;
      if (platform::same_shared(old + c.offset, a.local + c.offset, c.size)) continue;
      if (!declared) refuse_undeclared(a, c);
      mask |= uint64_t{1} << i;
      bytes += c.size;
    }
  }
  if (columns.size() > log::kMaskColumns || log::kColumnMaskBytes + bytes >= schema.size()) {
    record.write(a.table->id(), log::WriteKind::Update, a.key, a.local, schema.size());
    return;
  }
  record.begin_columns(a.table->id(), a.key, mask, bytes);
  for (uint64_t m = mask; m != 0; m &= m - 1) {
    const Column& c = columns[static_cast<std::size_t>(std::countr_zero(m))];
    record.append(a.local + c.offset, c.size);
  }
}

template <class CC>
void Txn<CC>::refuse_undeclared(const AccessT& a, const Column& c) {
  throw std::logic_error("an update of " + a.table->name() + " changed column " + c.name +
                         ", which it did not name (Txn::update's columns)");
}

template <class CC>
inline bool Txn<CC>::logged_write(const AccessT& a) {
  return a.found && !a.next_key_only && a.type != AccessType::Read && a.row != a.table->end_row();
}

// Once the scheme's commit returned: hands the record built at install
// to the log (after the ack log's line for it).
template <class CC>
void Txn<CC>::log_commit() {
  const uint64_t t0 = platform::cycles();
  log::WorkerLog& log = *w_.log;
  if (commit_epoch_ == 0) {
    commit_epoch_ = log.enter_install();  // nothing was installed
  }
  log.leave_install();
  if (changes_ == 0 && record_bytes_ == 0) commit_epoch_ = read_epoch();
  if (record_bytes_ > 0) {
    if (log.writes_ack_log()) log.ack_log_line(ack_log_commit_line());
    log.appended(record_bytes_, commit_epoch_);
    record_bytes_ = 0;
    logged_ = true;
  }
  w_.charge(TimeCat::Log, platform::cycles() - t0);
}

// "c TID TABLE:KEY:KIND ...": the ack log's line for a commit
// (docs/durability.md), written before its record is handed over.
template <class CC>
inline std::string Txn<CC>::ack_log_commit_line() const {
  std::string line = "c " + std::to_string(commit_id_.value);
  for (const AccessT& a : accesses_) {
    if (!logged_write(a)) continue;
    const char kind = a.type == AccessType::Write ? 'u' : a.type == AccessType::Insert ? 'i' : 'd';
    line += ' ' + a.table->name() + ':' + std::to_string(a.key) + ':' + kind;
  }
  line += '\n';
  return line;
}

template <class CC>
inline void Txn<CC>::record_history() {
  HistoryWriter& h = *w_.history;
  h.begin(commit_id_);
  for (const AccessT& a : accesses_) {
    if (!a.found) continue;
    if (a.type == AccessType::Read || a.read_first) h.read(a.table->name(), a.key, a.seen);
  }
  for (const ScanRecord& r : scan_records_) {
    h.scan(r.table->name(), r.lo, r.hi, r.index == 0 ? nullptr : &r.table->index(r.index).name());
    for (uint32_t i = r.first; i < r.first + r.count; i++) h.scan_saw(scan_seen_[i].key, scan_seen_[i].writer);
  }
  for (const AccessT& a : accesses_) {
    if (!a.found) continue;
    if (a.type == AccessType::Write) h.write(a.table->name(), a.key, a.seen);
    if (a.type == AccessType::Remove) {
      h.write(a.table->name(), a.key, a.seen, HistoryWriter::WriteKind::Delete, index_keys(a, layout_.data(a.row)));
    }
    if (a.type == AccessType::Insert) {
      h.write(a.table->name(), a.key, a.seen, HistoryWriter::WriteKind::Insert, index_keys(a, a.local));
    }
  }
  h.end();
}

// The row's keys in its table's ordered secondary indexes, for the history
// (a removed row's data stays as it was: its slot is not reused while this
// transaction runs).
template <class CC>
inline std::span<const HistoryWriter::IndexKey> Txn<CC>::index_keys(const AccessT& a, const char* data) {
  index_keys_.clear();
  const Table& t = *a.table;
  for (uint32_t i = 1; i < t.index_count(); i++) {
    if (t.index(i).is_ordered() && t.key_of(i) != nullptr)
      index_keys_.push_back({&t.index(i).name(), t.key_of(i)(data)});
  }
  return index_keys_;
}

}  // namespace abyss
