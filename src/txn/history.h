#pragma once
// The history log (--history, docs/formats.md): one JSON line per committed
// transaction. Each worker buffers its own lines and spills them to a part
// file; the parts are concatenated when the run ends.
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/types.h"
#include "platform/file.h"
#include "platform/latch.h"

namespace abyss {

// A writer owns its part file: its destructor removes it, so a run that
// fails leaves none behind.
class HistoryWriter final {
 public:
  explicit HistoryWriter(std::string part_path);
  ~HistoryWriter();
  HistoryWriter(const HistoryWriter&) = delete;
  HistoryWriter& operator=(const HistoryWriter&) = delete;

  void begin(TxnId id);
  void read(const std::string& table, uint64_t key, TxnId writer);
  // An insert or a delete is marked as such: it changes what a scan of the
  // key's range sees (docs/formats.md, predicate dependencies).
  enum class WriteKind : uint8_t { Update, Insert, Delete };
  // The row's key in one of its table's ordered secondary indexes.
  struct IndexKey {
    const std::string* index;
    uint64_t key;
  };
  // An insert or a delete also names the row's keys in the table's ordered
  // secondary indexes, which scans of those indexes are checked against.
  void write(const std::string& table, uint64_t key, TxnId prev_writer, WriteKind kind = WriteKind::Update,
             std::span<const IndexKey> index_keys = {});
  // A scan of [lo, hi] of `table`'s keys (of its secondary index `index`'s
  // keys, when not null), then each key it saw with the version's writer
  // (docs/formats.md, "scans").
  void scan(const std::string& table, uint64_t lo, uint64_t hi, const std::string* index = nullptr);
  void scan_saw(uint64_t key, TxnId writer);
  void end();

  // Flushes and closes the part file; returns its path. Throws when the file
  // cannot be written.
  const std::string& close();

  // Concatenates the parts into `path`. Returns an error message naming the
  // file and the OS's reason, empty on success. Removes the parts either way,
  // and on failure the partly written `path` too.
  static std::string merge(const std::string& path, const std::vector<std::string>& parts);

 private:
  void spill();
  std::string part_path_;
  // Its buffer is small: spill() hands over whole batches of buf_, which go
  // straight to the OS.
  platform::OutputFile file_{std::size_t{4} << 10};
  std::string buf_;
  std::string reads_;
  std::string writes_;
  std::string scans_;
  bool scan_open_ = false;                   // scans_ ends in an unclosed list of keys seen
  const std::string* scan_index_ = nullptr;  // the open scan's index, if secondary
};

// The last committed delete of each key a run deleted, shared by the
// workers under --history: an insert of a key deleted earlier in the run
// (TATP's CALL_FORWARDING) replaced that delete's version, and its history
// entry says so (docs/formats.md). Txn::install_all notes a delete before
// its entries leave the index and looks an insert up before its entry joins
// it, so a later insert always finds the delete it followed.
class DeletedKeys final {
 public:
  void deleted(uint32_t table, uint64_t key, TxnId by) {
    platform::MutexGuard g(mutex_);
    last_[Key{table, key}] = by;
  }
  // The last delete of the key, or kLoadTxn when the run deleted none.
  TxnId last(uint32_t table, uint64_t key) {
    platform::MutexGuard g(mutex_);
    const auto it = last_.find(Key{table, key});
    return it == last_.end() ? kLoadTxn : it->second;
  }

 private:
  struct Key {
    uint32_t table;
    uint64_t key;
    bool operator==(const Key&) const = default;
  };
  struct Hash {
    std::size_t operator()(const Key& k) const { return std::hash<uint64_t>()(k.key * 31 + k.table); }
  };
  platform::Mutex mutex_;
  std::unordered_map<Key, TxnId, Hash> last_;
};

}  // namespace abyss
