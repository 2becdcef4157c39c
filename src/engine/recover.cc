#include "engine/recover.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cc/registry.h"
#include "cc/schemes.h"
#include "common/arena.h"
#include "common/build_info.h"
#include "engine/knobs.h"
#include "engine/run_context.h"
#include "log/logger.h"
#include "log/record.h"
#include "platform/clock.h"
#include "platform/file.h"
#include "platform/latch.h"
#include "platform/machine.h"
#include "platform/thread.h"
#include "storage/database.h"
#include "workload/registry.h"
#include "workload/workloads.h"

namespace abyss {

namespace {

constexpr uint32_t kManifestFormat = 1;
// Replay threads lock the row of a key through one of these, by its hash.
constexpr std::size_t kReplayStripes = std::size_t{1} << 16;

// A knob's value as the flag text that sets it again.
std::string flag_text(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "on" : "off";
  return v.dump();
}

// "<what> <path>[, record at byte <at>]: <why>[<then>]": one line naming a
// file, where in it, what is wrong and what recovery did about it. Built out
// of line, once, for the loops that report it.
std::string file_error(std::string_view what, const std::string& path, const std::string& why,
                       std::string_view then = "", std::size_t at = ~std::size_t{0}) {
  std::string s(what);
  s += ' ';
  s += path;
  if (at != ~std::size_t{0}) {
    s += ", record at byte ";
    s += std::to_string(at);
  }
  s += ": ";
  s += why;
  s += then;
  return s;
}

// What read_journal found in a journal segment: its size, how a torn end
// was torn (", record at byte N: why"), empty if it was not, and, with
// --salvage, where the damage that ended it began (", record at byte N:
// why; ... dropped"), empty if there was none.
struct FileRecords {
  uint64_t bytes = 0;
  std::string torn;
  std::string salvaged;
  uint64_t dropped = 0;  // bytes left unread after the damage
};

// The bytes of the file `path` (`what`), its header checked.
std::string read_checked(const std::string& path, const std::string& what,
                         std::string (*check_header)(std::string_view)) {
  std::string bytes;
  if (auto err = platform::read_file(path, bytes); !err.empty()) {
    throw std::runtime_error(file_error("cannot read " + what, path, err));
  }
  if (auto err = check_header(bytes); !err.empty()) {
    throw std::invalid_argument(file_error(what, path, err, "; recovery stopped"));
  }
  return bytes;
}

// The pieces, one after the other.
std::string cat(std::initializer_list<std::string_view> parts) {
  std::string s;
  for (const std::string_view p : parts) s += p;
  return s;
}

// A journal segment older than the one the epoch file names: durable whole.
constexpr uint64_t kWholeFile = ~uint64_t{0};

// Reads the journal segment `path`, whose first `durable` bytes (kWholeFile:
// all) the epoch file says were written and synced, and calls on(record, bad) for each
// record in order; `bad`, set by `on`, stops recovery at that record. A
// record that fails its checks at or after `durable` is a torn tail: a
// write the crash cut off, never acknowledged; the file ends there. One
// before it is damage to what was durable: recovery stops with
// std::invalid_argument naming the file, the byte and the epochs, or, with
// `salvage`, the file ends there and the result says what was dropped.
template <class OnRecord>
FileRecords read_journal(const std::string& path, uint64_t durable, uint64_t durable_epoch, bool salvage,
                         OnRecord&& on) {
  FileRecords out;
  std::string bytes;
  if (auto err = platform::read_file(path, bytes); !err.empty()) {
    throw std::runtime_error(file_error("cannot read journal", path, err));
  }
  out.bytes = bytes.size();
  if (auto err = log::check_journal_header(bytes); !err.empty()) {
    // In a segment whose header was not yet durable, the crash cut that.
    if (durable < log::kJournalHeaderBytes) {
      out.torn = ", its header: " + err;
      return out;
    }
    throw std::invalid_argument(file_error("journal", path, err, "; recovery stopped"));
  }
  const uint32_t format = log::file_format(bytes);
  std::size_t pos = log::kJournalHeaderBytes;
  log::RecordView rec;
  std::string why;
  for (;;) {
    const std::size_t at = pos;
    const log::ReadStatus status = log::read_record(bytes, pos, rec, why, format);
    if (status == log::ReadStatus::Ok) {
      std::string bad;
      on(rec, bad);
      if (!bad.empty()) throw std::invalid_argument(file_error("journal", path, bad, "; recovery stopped there", at));
      continue;
    }
    if (status == log::ReadStatus::End && (durable == kWholeFile || bytes.size() >= durable)) break;
    if (status != log::ReadStatus::End && at >= durable) {
      out.torn = file_error("", "", why, "", at).substr(1);
      break;
    }
    // Damage to the durable part: a record that fails its checks, or a
    // file shorter than what was synced.
    if (status == log::ReadStatus::End) {
      why = "the file holds " + std::to_string(bytes.size()) + " bytes";
    } else if (bytes.size() - at >= 16) {
      why += " (of epoch " + std::to_string(log::load_le<uint64_t>(bytes.data() + at + 8)) + " by its header)";
    }
    why += "; the epoch file says its first " + std::to_string(durable) + " bytes are durable, to epoch " +
           std::to_string(durable_epoch);
    if (!salvage) {
      throw std::invalid_argument(
          file_error("journal", path, why, "; recovery stopped there (--salvage recovers what comes before it)", at));
    }
    out.salvaged = file_error("", "", why, "", at).substr(1);
    out.dropped = bytes.size() - std::min<uint64_t>(bytes.size(), at);
    break;
  }
  return out;
}

// Reads the file `path` (`what`), its header checked, its records split
// among `threads` threads in contiguous runs, and calls on(thread, record,
// bad) for each: for a checkpoint, whose rows are independent of each other
// and whose every record was synced before it was put in place, so that a
// record that fails its checks, or `bad`, stops recovery
// (std::invalid_argument naming the file and the byte). Returns the file's
// size.
template <class OnRecord>
uint64_t read_records_parallel(const std::string& path, const std::string& what,
                               std::string (*check_header)(std::string_view), uint32_t threads, OnRecord&& on) {
  const std::string bytes = read_checked(path, what, check_header);
  const uint32_t format = log::file_format(bytes);
  // Where each record starts, from the size fields alone. A size that
  // cannot be right ends the list: reading that record reports it.
  std::vector<std::size_t> starts;
  for (std::size_t pos = log::kJournalHeaderBytes; pos < bytes.size();) {
    starts.push_back(pos);
    if (bytes.size() - pos < log::kRecordHeaderBytes) break;
    const auto size = log::load_le<uint32_t>(bytes.data() + pos);
    if (size < log::kRecordHeaderBytes) break;
    pos += size;
  }
  platform::run_parallel(threads, [&](uint32_t t) {
    log::RecordView rec;
    std::string why;
    for (std::size_t i = starts.size() * t / threads; i < starts.size() * (t + 1) / threads; i++) {
      std::size_t pos = starts[i];
      if (log::read_record(bytes, pos, rec, why, format) != log::ReadStatus::Ok) {
        throw std::invalid_argument(file_error(what, path, why, "; recovery stopped there", starts[i]));
      }
      std::string bad;
      on(t, rec, bad);
      if (!bad.empty()) {
        throw std::invalid_argument(file_error(what, path, bad, "; recovery stopped there", starts[i]));
      }
    }
  });
  return bytes.size();
}

std::string policy_name(LogPolicy p) { return std::string(kLogPolicyNames[static_cast<std::size_t>(p)]); }

// A row of the versions file: a key replay wrote, and the row it wrote.
struct Replayed {
  uint32_t table;
  uint64_t key;
  Row* row;
};

// What one replay thread did.
struct ReplayPart {
  uint64_t bytes = 0;
  uint64_t records = 0;
  uint64_t applied = 0;
  uint64_t beyond = 0;
  uint64_t writes = 0;
  uint64_t superseded = 0;
  uint64_t covered = 0;  // of epochs before the checkpoint's replay_from
  uint64_t max_tid = 0;  // the highest commit id read
  uint64_t checkpoint_rows = 0;
  uint32_t torn = 0;
  std::string torn_note;
  uint32_t salvaged = 0;
  std::string salvage_note;
  uint64_t dropped = 0;
  std::vector<Replayed> replayed;
};

// One stripe's share of the column commit ids of replay_log: where each
// row's ids start in `ids`, a row's as many as its table's columns.
struct ColumnIds {
  std::unordered_map<const Row*, std::size_t> at;
  std::vector<uint64_t> ids;
};

// What recovery starts from besides the load: the checkpoint in place, if
// any, and the journal segments.
struct Segment {
  std::string name;  // in the log directory
  uint32_t journal = 0;
  uint32_t segment = 0;
  uint64_t durable = 0;  // its first bytes the epoch file says are durable (all of an older segment's)
};
struct Sources {
  std::vector<std::vector<Segment>> journals;  // per journal, its segments in order
  std::size_t segments = 0;
  std::string checkpoint;          // file name; empty: none
  uint64_t checkpoint_number = 0;  // the checkpoint's number; 0: none
  uint64_t replay_from = 0;        // the checkpoint's: journal records of older epochs are in it
  uint64_t durable = 0;
  std::string epoch_note;                                      // a damaged copy of the epoch file, if one was
  std::vector<std::pair<std::string, uint64_t>> durable_ends;  // per journal: its named segment, durable bytes
};

// After replay, removed rows are left as a run leaves them: live and
// removed (a row a delete record started holds no data and was never
// live), and, in a table whose indexes are all ordered, out of every index,
// as a committed removal takes them out (Txn::install_all). The dump and
// checkpoints read live rows only; a run that goes on from the recovered
// database (run --recover) reads the indexes too.
void settle_removed(Database& db) {
  const RowLayout& layout = db.layout();
  for (const auto& table : db.tables()) {
    const bool unlink = table->removals_unlink();
    std::vector<std::pair<uint64_t, Row*>> removed;
    table->index().for_each([&](uint64_t key, Row* row) {
      RowHeader& h = RowLayout::header(row);
      if ((h.flags & RowHeader::kDeleted) == 0) return;
      h.flags = RowHeader::kLive | RowHeader::kDeleted;
      if (unlink) removed.emplace_back(key, row);
    });
    for (const auto& [key, row] : removed) {
      // A row a delete record started has no secondary keys: its zeroed
      // data may compute another row's, which stays.
      for (uint32_t i = 1; i < table->index_count(); i++) {
        if (table->key_of(i) == nullptr) continue;
        const uint64_t k = table->key_of(i)(layout.data(row));
        if (table->index(i).find(k) == row) (void)table->index(i).remove(k);
      }
      (void)table->index().remove(key);
    }
  }
}

// After replay, each secondary index whose keys a row's data computes holds
// what a run leaves there: every live row under the key its data computes,
// and no other entry. Replay gives a row the keys of the first version it
// meets; a newer version, or the key removed and inserted again with other
// data, may compute other keys, and a row a delete record started has none.
// An ordered index loses the wrong entries; a hash index keeps its entries
// for the run, so a wrong one stays there, under a key no live row has.
void settle_secondary(Database& db, Arena& nodes) {
  const RowLayout& layout = db.layout();
  for (const auto& table : db.tables()) {
    for (uint32_t i = 1; i < table->index_count(); i++) {
      const Table::KeyOf key_of = table->key_of(i);
      if (key_of == nullptr) continue;
      Index& index = table->index(i);
      auto live = [](Row* row) {
        const uint32_t flags = RowLayout::header(row).flags;
        return (flags & RowHeader::kLive) != 0 && (flags & RowHeader::kDeleted) == 0;
      };
      if (index.is_ordered()) {
        std::vector<uint64_t> wrong;
        index.for_each([&](uint64_t key, Row* row) {
          if (key != Index::kEndKey && (!live(row) || key_of(layout.data(row)) != key)) wrong.push_back(key);
        });
        for (const uint64_t key : wrong) (void)index.remove(key);
      }
      table->index().for_each([&](uint64_t primary, Row* row) {
        if (primary == Index::kEndKey || !live(row)) return;
        const uint64_t key = key_of(layout.data(row));
        if (index.find(key) != row) index.insert(key, row, nodes);
      });
    }
  }
}

// Applies the checkpoint in `src` (if any) and every journal record of an
// epoch up to the durable one over `db`, which holds the log's load: each
// row takes the version with the highest commit id. New index nodes come
// from `nodes`, which must outlive the database's use. Then settles the
// removed rows (settle_removed). `versions`, if not null, receives every
// row a record or the checkpoint wrote.
void replay_log(Database& db, void (*init_row)(void*), const std::string& dir, const Sources& src,
                uint32_t threads_wanted, bool salvage, std::vector<Arena>& nodes, RecoverResult& out,
                std::vector<Replayed>* versions) {
  const RowLayout& layout = db.layout();
  const auto journals = static_cast<uint32_t>(src.journals.size());
  const uint32_t cores = threads_wanted > 0 ? threads_wanted : platform::hardware_cores();
  // A journal is read by one thread; a checkpoint by all of them.
  const uint32_t threads = std::max<uint32_t>(1, std::min(std::max<uint32_t>(journals, 1), cores));
  const uint32_t checkpoint_threads = std::max<uint32_t>(1, cores);
  std::vector<ReplayPart> parts(std::max(threads, checkpoint_threads));
  auto stripes = std::make_unique<platform::SpinLatch[]>(kReplayStripes);
  while (nodes.size() < parts.size()) nodes.emplace_back(std::size_t{1} << 20, "recovery's index nodes");
  const auto& tables = db.tables();

  // Per column, the commit id of its version, for each row a Columns write
  // reached (log/record.h, format 3), under the row's stripe latch: such a
  // row takes each column of a later write only over an older version of
  // that column, so that one row's writes may come in any order. Every
  // column of a row without ids is of its header's writer.
  auto column_ids = std::make_unique<ColumnIds[]>(kReplayStripes);

  // One write of a record (or a checkpoint's row), applied if it is newer
  // than the row's version (column by column, for a row with column ids);
  // `why` says what is wrong with it, if anything. A checkpoint's rows are
  // marked (RowHeader::epoch), so the rows it lacks can be found.
  auto apply = [&](uint32_t t, std::vector<RowCursor>& cursors, ReplayPart& part, const log::WriteView& w, uint64_t tid,
                   std::string& why) {
    if (w.table >= tables.size()) {
      why = "a write to table " + std::to_string(w.table) + "; the database has " + std::to_string(tables.size());
      return;
    }
    Table& table = *tables[w.table];
    const auto& columns = table.schema().columns();
    const bool from_checkpoint = w.kind == log::WriteKind::Row;
    const bool some_columns = w.kind == log::WriteKind::Columns;
    const char* data = from_checkpoint ? w.data + 8 : some_columns ? w.data + log::kColumnMaskBytes : w.data;
    const uint32_t bytes = from_checkpoint ? w.bytes - 8
                           : some_columns  ? w.bytes - static_cast<uint32_t>(log::kColumnMaskBytes)
                                           : w.bytes;
    uint64_t mask = 0;
    if (some_columns) {
      mask = log::load_le<uint64_t>(w.data);
      if (columns.size() > log::kMaskColumns || (columns.size() < log::kMaskColumns && mask >> columns.size() != 0)) {
        why = "a write to columns " + std::to_string(mask) + " (a mask) of " + table.name() + ", which has " +
              std::to_string(columns.size());
        return;
      }
      uint64_t sum = 0;
      for (uint64_t m = mask; m != 0; m &= m - 1) sum += columns[static_cast<std::size_t>(std::countr_zero(m))].size;
      if (sum != bytes) {
        why = "a write of " + std::to_string(bytes) + " bytes to columns of " + table.name() + " that hold " +
              std::to_string(sum);
        return;
      }
    } else if (w.kind != log::WriteKind::Delete && bytes != table.schema().size()) {
      why = "a write of " + std::to_string(bytes) + " bytes to " + table.name() + ", whose rows hold " +
            std::to_string(table.schema().size());
      return;
    }
    part.max_tid = std::max(part.max_tid, tid);
    const std::size_t stripe = (w.key * 0x9e3779b97f4a7c15ULL + w.table) >> 48;
    platform::SpinLatch& latch = stripes[stripe];
    latch.lock();
    Row* row = table.index().find(w.key);
    const bool fresh = row == nullptr;
    if (fresh) {
      // Its insert is in another journal, or the key came back after a
      // removal: the row starts here, and older writes of it find a newer
      // version.
      row = table.allocate(cursors[w.table]);
      init_row(layout.meta(row));
      if (w.kind != log::WriteKind::Delete && !some_columns) std::memcpy(layout.data(row), data, bytes);
      table.index().insert(w.key, row, nodes[t]);
      for (uint32_t i = 1; i < table.index_count(); i++) {
        if (w.kind != log::WriteKind::Delete && table.key_of(i) != nullptr) {
          table.index(i).insert(table.key_of(i)(layout.data(row)), row, nodes[t]);
        }
      }
    }
    RowHeader& h = RowLayout::header(row);
    const uint64_t writer = fresh ? 0 : h.writer.value;
    ColumnIds& ids = column_ids[stripe];
    auto at = ids.at.find(row);
    if (some_columns && at == ids.at.end()) {
      at = ids.at.emplace(row, ids.ids.size()).first;
      ids.ids.resize(ids.ids.size() + columns.size(), writer);
    }
    bool applied = false;
    if (at != ids.at.end()) {
      uint64_t* version = ids.ids.data() + at->second;
      const char* from = data;
      for (std::size_t i = 0; i < columns.size() && w.kind != log::WriteKind::Delete; i++) {
        const Column& c = columns[i];
        if (some_columns && (mask >> i & 1) == 0) continue;
        if (!some_columns) from = data + c.offset;
        if (tid > version[i]) {
          std::memcpy(layout.data(row) + c.offset, from, c.size);
          version[i] = tid;
          applied = true;
        }
        from += c.size;
      }
    } else if (!fresh && writer >= tid && !(from_checkpoint && writer == tid)) {
      if (from_checkpoint) h.epoch = 1;
      part.superseded++;
      latch.unlock();
      return;
    } else if (w.kind != log::WriteKind::Delete) {
      std::memcpy(layout.data(row), data, bytes);
      applied = true;
    }
    if (fresh || tid > writer) {
      h.flags = w.kind == log::WriteKind::Delete ? RowHeader::kDeleted : RowHeader::kLive;
      h.writer = TxnId{tid};
      applied = true;
    }
    if (from_checkpoint) h.epoch = 1;
    latch.unlock();
    if (!applied) {
      part.superseded++;
      return;
    }
    part.writes++;
    if (versions != nullptr) part.replayed.push_back({w.table, w.key, row});
  };

  const uint64_t replay_start = platform::wall_ns();
  if (!src.checkpoint.empty()) {
    // The checkpoint: each row at its copied version; a row of the load it
    // lacks was removed before it, and is removed here too. It was synced
    // before it was put in place: a torn end is corruption too.
    std::vector<std::vector<RowCursor>> cursors(checkpoint_threads, std::vector<RowCursor>(tables.size()));
    out.checkpoint_bytes =
        read_records_parallel(dir + "/" + src.checkpoint, "checkpoint", log::check_checkpoint_header,
                              checkpoint_threads, [&](uint32_t t, const log::RecordView& rec, std::string& bad) {
                                rec.for_each_write([&](const log::WriteView& w) {
                                  if (!bad.empty()) return;
                                  if (w.kind != log::WriteKind::Row) {
                                    bad = "a journal's write in a checkpoint";
                                    return;
                                  }
                                  apply(t, cursors[t], parts[t], w, log::load_le<uint64_t>(w.data), bad);
                                  parts[t].checkpoint_rows++;
                                });
                              });
    for (const auto& table : tables) {
      table->for_each_live_row([&](Row* row) {
        RowHeader& h = RowLayout::header(row);
        if (h.epoch == 0) h.flags |= RowHeader::kDeleted;
        h.epoch = 0;
      });
    }
  }
  platform::run_parallel(threads, [&](uint32_t t) {
    ReplayPart& part = parts[t];
    std::vector<RowCursor> cursors(tables.size());
    for (uint32_t j = t; j < journals; j += threads) {
      for (const Segment& seg : src.journals[j]) {
        std::string path = dir;
        path += '/';
        path += seg.name;
        const FileRecords read =
            read_journal(path, seg.durable, src.durable, salvage, [&](const log::RecordView& rec, std::string& bad) {
              part.records++;
              // Ids of records not applied are still taken: a later
              // run's commits come after every one of them.
              part.max_tid = std::max(part.max_tid, rec.tid);
              if (rec.epoch > src.durable) {
                part.beyond++;
                return;
              }
              if (rec.epoch < src.replay_from) {
                part.covered++;
                return;
              }
              part.applied++;
              rec.for_each_write([&](const log::WriteView& w) {
                if (!bad.empty()) return;
                if (w.kind == log::WriteKind::Row) {
                  bad = "a checkpoint's row in a journal";
                  return;
                }
                apply(t, cursors, part, w, rec.tid, bad);
              });
            });
        part.bytes += read.bytes;
        if (!read.torn.empty() && part.torn++ == 0) part.torn_note = seg.name + read.torn;
        if (!read.salvaged.empty()) {
          // The rest of this journal comes after the damage: it is dropped too.
          const auto later = static_cast<std::size_t>(&src.journals[j].back() - &seg);
          if (part.salvaged++ == 0) {
            part.salvage_note = seg.name + read.salvaged + "; dropped the " + std::to_string(read.dropped) +
                                " bytes from there" +
                                (later > 0 ? " and the journal's " + std::to_string(later) + " later segment(s)" : "");
          }
          part.dropped += read.dropped;
          break;
        }
      }
    }
  });
  settle_removed(db);
  settle_secondary(db, nodes[0]);
  out.replay_seconds = static_cast<double>(platform::wall_ns() - replay_start) / 1e9;
  for (ReplayPart& p : parts) {
    out.journal_bytes += p.bytes;
    out.records += p.records;
    out.records_applied += p.applied;
    out.records_beyond += p.beyond;
    out.records_covered += p.covered;
    out.writes_applied += p.writes;
    out.writes_superseded += p.superseded;
    out.max_commit_id = std::max(out.max_commit_id, p.max_tid);
    out.checkpoint_rows += p.checkpoint_rows;
    if (p.torn > 0 && out.torn_journals == 0) out.torn_note = p.torn_note;
    out.torn_journals += p.torn;
    if (p.salvaged > 0 && out.salvaged_journals == 0) out.salvage_note = p.salvage_note;
    out.salvaged_journals += p.salvaged;
    out.salvaged_bytes_dropped += p.dropped;
    if (versions != nullptr) versions->insert(versions->end(), p.replayed.begin(), p.replayed.end());
  }
}

template <class CC, class W>
void recover_with(const Config& given, const RecoverOptions& options, const Sources& src, RecoverResult& out) {
  // The logged run's set-up up to its load (engine/run_context.h); the log
  // does the rest.
  RunContext<CC> ctx(given, W::partitions(given));
  Database& db = ctx.db();
  W workload(ctx.config());
  out.load_seconds = ctx.load(workload);

  std::vector<Arena> nodes;
  std::vector<Replayed> all;
  replay_log(db, &RunContext<CC>::init_row, options.dir, src, options.threads, options.salvage, nodes, out,
             options.versions_path.empty() ? nullptr : &all);
  const auto& tables = db.tables();

  if (!options.versions_path.empty()) {
    std::sort(all.begin(), all.end(),
              [](const Replayed& a, const Replayed& b) { return std::tie(a.table, a.key) < std::tie(b.table, b.key); });
    all.erase(std::unique(all.begin(), all.end(),
                          [](const Replayed& a, const Replayed& b) { return a.table == b.table && a.key == b.key; }),
              all.end());
    platform::OutputFile f;
    std::string err = f.open(options.versions_path);
    if (err.empty()) {
      f.write("table,key,writer,deleted\n");
      for (const Replayed& r : all) {
        const RowHeader& h = RowLayout::header(r.row);
        f.write(tables[r.table]->name() + "," + std::to_string(r.key) + "," + std::to_string(h.writer.value) + "," +
                ((h.flags & RowHeader::kDeleted) != 0 ? "1" : "0") + "\n");
      }
      err = f.close();
    }
    if (!err.empty()) throw std::runtime_error("cannot write " + options.versions_path + ": " + err);
  }
  if (!options.dump_dir.empty()) {
    if (auto err = db.dump(options.dump_dir); !err.empty()) throw std::runtime_error(err);
  }
}

// Reads the log directory `dir`: the run's configuration from its manifest,
// the durable epoch, the journal segments and the checkpoint in place.
// Throws std::invalid_argument naming what is missing or damaged.
void read_manifest(const std::string& dir, Config& cfg);
void read_sources(const std::string& dir, Sources& src);

void read_log_dir(const std::string& dir, Config& cfg, Sources& src) {
  read_manifest(dir, cfg);
  read_sources(dir, src);
}

// The configuration of the run that wrote the log directory `dir`, from its
// manifest: every knob it lists, set again.
void read_manifest(const std::string& dir, Config& cfg) {
  const std::string manifest_path = dir + "/" + std::string(log::kManifestFile);
  std::string text;
  if (auto err = platform::read_file(manifest_path, text); !err.empty()) {
    throw std::invalid_argument(dir + " is not a log directory: cannot read " + manifest_path + ": " + err);
  }
  nlohmann::json m;
  try {
    m = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(manifest_path + " is not JSON: " + e.what());
  }
  auto bad = [&](const std::string& what) { return std::invalid_argument(manifest_path + ": " + what); };
  if (!m.is_object() || !m.contains("format") || !m["format"].is_number_unsigned()) throw bad("no format number");
  if (m["format"].get<uint64_t>() != kManifestFormat) {
    throw bad("format " + m["format"].dump() + ", this build reads format " + std::to_string(kManifestFormat));
  }
  if (!m.contains("args") || !m["args"].is_array() || m["args"].size() % 2 != 0) throw bad("no list of flags");
  for (std::size_t i = 0; i < m["args"].size(); i += 2) {
    const nlohmann::json& flag = m["args"][i];
    const nlohmann::json& value = m["args"][i + 1];
    if (!flag.is_string() || !value.is_string()) throw bad("a flag or value that is not a string");
    std::string name = flag.get<std::string>();
    const Knob* k = name.rfind("--", 0) == 0 ? find_knob(std::string_view(name).substr(2)) : nullptr;
    if (k == nullptr) throw bad("unknown flag " + name);
    if (auto err = k->apply(cfg, value.get<std::string>()); !err.empty()) throw bad(name.append(": ").append(err));
  }
  if (auto err = validate_workload(cfg); !err.empty()) throw bad(err);
}

// Why the journal bytes that the epoch file's copy `newer` names are not
// all there whole, or empty. Only those it names past `older`'s ends are
// read: `older` was durable, and so were the bytes it names, before
// `newer` was written.
std::string unsynced_bytes(const std::string& dir, const log::DurablePoint& newer, const log::DurablePoint& older) {
  for (uint32_t j = 0; j < newer.journals.size(); j++) {
    const log::JournalEnd end = newer.journals[j];
    if (end.bytes == 0) continue;
    const bool same = j < older.journals.size() && older.journals[j].segment == end.segment;
    const uint64_t from = std::max<uint64_t>(same ? older.journals[j].bytes : 0, log::kJournalHeaderBytes);
    const std::string name = log::journal_name(j, end.segment);
    const std::string path = cat({dir, "/", name});
    std::string head;
    if (auto err = platform::read_file_range(path, 0, log::kJournalHeaderBytes, head); !err.empty()) {
      return cat({name, ": ", err});
    }
    if (auto err = log::check_journal_header(head); !err.empty()) return cat({name, ": ", err});
    if (end.bytes <= from) continue;
    std::string bytes;
    if (auto err = platform::read_file_range(path, from, end.bytes - from, bytes); !err.empty()) {
      return cat({name, ": ", err});
    }
    if (bytes.size() < end.bytes - from) {
      return cat({name, " holds ", std::to_string(from + bytes.size()), " of the ", std::to_string(end.bytes),
                  " bytes it names"});
    }
    const uint32_t format = log::file_format(head);
    log::RecordView rec;
    std::string why;
    for (std::size_t pos = 0; pos < bytes.size();) {
      const std::size_t at = pos;
      if (log::read_record(bytes, pos, rec, why, format) != log::ReadStatus::Ok) {
        return cat({name, ", record at byte ", std::to_string(from + at), ": ", why});
      }
    }
  }
  return {};
}

// Where recovery of `dir` starts: the durable epoch, the journal segments
// and the checkpoint in place.
void read_sources(const std::string& dir, Sources& src) {
  const std::string epoch_path = dir + "/" + std::string(log::kEpochFile);
  std::string epoch_bytes;
  if (auto err = platform::read_file(epoch_path, epoch_bytes); !err.empty()) {
    throw std::invalid_argument(dir + " is not a log directory: cannot read " + epoch_path + ": " + err);
  }
  log::DurablePoint point;
  std::optional<log::DurablePoint> older;
  std::string note;
  if (auto err = log::parse_epoch_file(epoch_bytes, point, note, &older); !err.empty()) {
    throw std::invalid_argument(epoch_path + " " + err + "; recovery stopped");
  }
  // A copy written beside its journals' syncs names bytes a crash may have
  // cut off before they were synced; none of its epoch's commits was
  // acknowledged then, and the other copy holds. (One written after them,
  // or with no whole copy to fall back to, is held to what it names: what
  // is missing is damage, and replay says where.)
  if (point.beside && older.has_value()) {
    if (auto why = unsynced_bytes(dir, point, *older); !why.empty()) {
      note = "copy " + std::to_string(point.sequence % 2) + " (write " + std::to_string(point.sequence) + ", epoch " +
             std::to_string(point.epoch) + ") names journal bytes not synced before the crash (" + why + "): copy " +
             std::to_string(older->sequence % 2) + " (write " + std::to_string(older->sequence) + ", epoch " +
             std::to_string(older->epoch) + ") is used";
      point = std::move(*older);
    }
  }

  src = Sources{};
  src.durable = point.epoch;
  if (!note.empty()) src.epoch_note = epoch_path + ": " + note;
  src.journals.resize(point.journals.size());
  std::vector<std::string> names;
  if (auto err = platform::list_dir(dir, names); !err.empty()) throw std::invalid_argument(dir + ": " + err);
  for (const std::string& name : names) {
    Segment seg;
    if (!log::parse_journal_name(name, seg.journal, seg.segment)) continue;
    // A journal the epoch file does not name is an older log's, left by a
    // crash while this one opened (Logger::open): none of its records is
    // durable in this log.
    if (seg.journal >= point.journals.size()) continue;
    const log::JournalEnd end = point.journals[seg.journal];
    seg.name = name;
    seg.durable = seg.segment < end.segment ? kWholeFile : seg.segment == end.segment ? end.bytes : 0;
    src.journals[seg.journal].push_back(seg);
    src.segments++;
  }
  for (uint32_t j = 0; j < point.journals.size(); j++) {
    src.durable_ends.emplace_back(log::journal_name(j, point.journals[j].segment), point.journals[j].bytes);
    auto& segs = src.journals[j];
    std::sort(segs.begin(), segs.end(), [](const Segment& a, const Segment& b) { return a.segment < b.segment; });
    // The segment the epoch file names holds durable records, or at least
    // the header of a journal in use: it must be there. Older ones may
    // have gone, covered by a checkpoint.
    const log::JournalEnd end = point.journals[j];
    if (end.bytes > 0 &&
        std::none_of(segs.begin(), segs.end(), [&](const Segment& s) { return s.segment == end.segment; })) {
      throw std::invalid_argument(
          cat({dir, "/", log::journal_name(j, end.segment), " is missing: the epoch file says its first ",
               std::to_string(end.bytes), " bytes are durable, to epoch ", std::to_string(point.epoch),
               "; recovery stopped"}));
    }
  }
  // The checkpoint in place, if any: its file, and the epoch the journals
  // are replayed from over it.
  const std::string checkpoint_path = dir + "/" + std::string(log::kCheckpointFile);
  if (platform::file_status(checkpoint_path).kind != platform::FileKind::kMissing) {
    std::string ck;
    if (auto err = platform::read_file(checkpoint_path, ck); !err.empty()) {
      throw std::invalid_argument("cannot read " + checkpoint_path + ": " + err);
    }
    nlohmann::json c;
    try {
      c = nlohmann::json::parse(ck);
    } catch (const nlohmann::json::exception& e) {
      throw std::invalid_argument(checkpoint_path + " is not JSON: " + e.what());
    }
    if (!c.is_object() || !c.contains("file") || !c["file"].is_string() || !c.contains("replay_from") ||
        !c["replay_from"].is_number_unsigned() || c["file"].get<std::string>().find('/') != std::string::npos) {
      throw std::invalid_argument(checkpoint_path + ": no checkpoint file name and replay_from epoch");
    }
    src.checkpoint = c["file"].get<std::string>();
    src.replay_from = c["replay_from"].get<uint64_t>();
    if (c.contains("checkpoint") && c["checkpoint"].is_number_unsigned()) {
      src.checkpoint_number = c["checkpoint"].get<uint64_t>();
    }
  }
  // A run that went on from a log (run --recover) has its base in place
  // before its first journal exists.
  if (src.segments == 0 && src.checkpoint.empty()) {
    throw std::invalid_argument(dir + " is not a log directory: it holds no journal");
  }
}

}  // namespace

std::string check_log(const Config& cfg) {
  // --log-dir and --ack-log without --log file change nothing: the knob
  // table's notes say so (engine/knobs.cc).
  const LogSettings& l = cfg.log;
  if (l.recover) {
    if (l.dir.empty()) return "--recover needs --log-dir DIR, the log to recover";
    if (platform::kSimulated || cfg.sim_cores > 0) {
      return "--recover runs on this machine's cores only: simulated cores have no journals (leave out --sim-cores)";
    }
    if (!cfg.history_path.empty()) {
      return "--history with --recover: the recovered rows' versions were written by the logged run, whose commits "
             "this run's history would not hold (abyss check history needs the load's)";
    }
  }
  if (l.policy == LogPolicy::Off) return {};
  if (platform::kSimulated || cfg.sim_cores > 0) {
    return "--log " + policy_name(l.policy) +
           " runs on this machine's cores only: simulated cores have no journals (leave out --sim-cores)";
  }
  if (l.policy == LogPolicy::File && l.dir.empty()) return "--log file needs --log-dir DIR, where the journals go";
  const cc::SchemeTraits& s = cc::scheme(cfg.cc);
  if (!cfg.history_path.empty() && s.dirty_writes && !s.writes_in_place) {
    return "--history with --log " + policy_name(l.policy) + " under --cc " + std::string(s.name) +
           ": its writes are read before they commit, named by an id taken at the write, where a log takes the "
           "commit's id at its install; leave out one of the two";
  }
  return {};
}

std::string check_recover_options(const RecoverOptions& options) {
  if (options.dir.empty()) return "an empty log directory path";
  const platform::FileStatus st = platform::file_status(options.dir);
  if (st.kind == platform::FileKind::kMissing) return options.dir + ": " + st.reason;
  if (st.kind != platform::FileKind::kDirectory) return options.dir + " is not a directory";
  if (!options.dump_dir.empty()) {
    if (auto err = platform::check_output_dir(options.dump_dir); !err.empty()) {
      return "--dump " + options.dump_dir + ": cannot write there: " + err;
    }
  }
  for (const auto& [flag, path] : {std::pair{"--versions", &options.versions_path}, {"--json", &options.json_path}}) {
    if (path->empty()) continue;
    if (auto err = platform::check_output_file(*path); !err.empty()) {
      return std::string(flag) + " " + *path + ": cannot write there: " + err;
    }
  }
  return {};
}

std::string log_manifest(const Config& cfg) {
  nlohmann::json args = nlohmann::json::array();
  for (const Knob& k : run_knobs()) {
    if (k.json.empty() || (!k.workload.empty() && k.workload != cfg.workload)) continue;
    // Where a run wrote its outputs does not shape its load.
    if (k.syntax == "DIR" || k.syntax == "FILE") continue;
    args.push_back(k.flag());
    args.push_back(flag_text(k.get(cfg)));
  }
  const bool shared = cfg.log.journal == JournalLayout::Shared;
  nlohmann::json m = {{"format", kManifestFormat},
                      {"abyss", std::string(git_rev())},
                      {"workload", cfg.workload},
                      {"cc", cfg.cc},
                      {"journal", std::string(kJournalLayoutNames[static_cast<std::size_t>(cfg.log.journal)])},
                      {"journals", shared ? 1 : cfg.threads},
                      {"args", args}};
  return m.dump(2) + "\n";
}

RecoverResult recover(const RecoverOptions& options) {
  Config cfg;
  Sources src;
  read_log_dir(options.dir, cfg, src);
  const uint64_t durable = src.durable;
  RecoverResult out;
  out.workload = cfg.workload;
  out.cc = cfg.cc;
  out.journals = static_cast<uint32_t>(src.segments);
  out.durable_epoch = durable;
  out.epoch_note = src.epoch_note;
  out.durable_ends = src.durable_ends;
  out.checkpoint = src.checkpoint;
  out.replay_from = src.replay_from;
  cc::Registry::dispatch(cfg.cc, [&]<class CC>() {
    return WorkloadRegistry::dispatch(cfg.workload, [&]<class W>() {
      recover_with<CC, W>(cfg, options, src, out);
      return 0;
    });
  });
  if (!options.json_path.empty()) {
    const double gb = static_cast<double>(out.journal_bytes + out.checkpoint_bytes) / 1e9;
    nlohmann::json durable_ends = nlohmann::json::array();
    for (const auto& [file, bytes] : out.durable_ends) durable_ends.push_back({{"file", file}, {"bytes", bytes}});
    const nlohmann::json j = {{"dir", options.dir},
                              {"workload", out.workload},
                              {"cc", out.cc},
                              {"journals", out.journals},
                              {"durable_epoch", out.durable_epoch},
                              {"journal_bytes", out.journal_bytes},
                              {"records", out.records},
                              {"records_applied", out.records_applied},
                              {"records_beyond", out.records_beyond},
                              {"records_covered", out.records_covered},
                              {"checkpoint", out.checkpoint},
                              {"checkpoint_rows", out.checkpoint_rows},
                              {"checkpoint_bytes", out.checkpoint_bytes},
                              {"replay_from", out.replay_from},
                              {"writes_applied", out.writes_applied},
                              {"writes_superseded", out.writes_superseded},
                              {"torn_journals", out.torn_journals},
                              {"torn_note", out.torn_note},
                              {"durable_ends", durable_ends},
                              {"epoch_note", out.epoch_note},
                              {"salvaged_journals", out.salvaged_journals},
                              {"salvage_note", out.salvage_note},
                              {"salvaged_bytes_dropped", out.salvaged_bytes_dropped},
                              {"load_seconds", out.load_seconds},
                              {"replay_seconds", out.replay_seconds},
                              {"replay_gb_per_s", out.replay_seconds > 0 ? gb / out.replay_seconds : 0.0}};
    platform::OutputFile f;
    std::string err = f.open(options.json_path);
    if (err.empty()) {
      f.write(j.dump(2) + "\n");
      err = f.close();
    }
    if (!err.empty()) throw std::runtime_error("cannot write " + options.json_path + ": " + err);
  }
  return out;
}

std::string adopt_logged_workload(Config& cfg, const std::function<bool(const Knob&)>& given) {
  Config logged;
  try {
    read_manifest(cfg.log.dir, logged);
  } catch (const std::invalid_argument& e) {
    return std::string("--recover: ") + e.what();
  }
  for (const Knob& k : run_knobs()) {
    const bool shapes =
        k.name == "workload" || k.name == "seed" || (!k.workload.empty() && k.workload == logged.workload);
    if (!shapes) continue;
    const nlohmann::json want = k.get(logged);
    if (given(k)) {
      if (k.get(cfg) != want) {
        return k.flag() + " " + flag_text(k.get(cfg)) + ": the log in " + cfg.log.dir + " was written with " +
               k.flag() + " " + flag_text(want) + ", and a recovered run goes on with the logged workload (leave " +
               k.flag() + " out)";
      }
      continue;
    }
    if (auto err = k.apply(cfg, flag_text(want)); !err.empty()) {
      return "--recover: " + cfg.log.dir + "/" + std::string(log::kManifestFile) + ": " + k.flag() + ": " + err;
    }
  }
  return {};
}

Recovered recover_into(Database& db, void (*init_row)(void*), const std::string& dir, uint32_t threads) {
  Config cfg;
  Sources src;
  read_log_dir(dir, cfg, src);
  Recovered r;
  r.result.workload = cfg.workload;
  r.result.cc = cfg.cc;
  r.result.journals = static_cast<uint32_t>(src.segments);
  r.result.durable_epoch = src.durable;
  r.result.epoch_note = src.epoch_note;
  r.result.durable_ends = src.durable_ends;
  r.result.checkpoint = src.checkpoint;
  r.result.replay_from = src.replay_from;
  r.checkpoint_number = src.checkpoint_number;
  replay_log(db, init_row, dir, src, threads, false, r.nodes, r.result, nullptr);
  return r;
}

}  // namespace abyss
