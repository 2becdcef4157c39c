#pragma once
// A table: a schema, rows in blocks, a primary index and any secondary
// indexes (index/index.h: hash or ordered). The rows live in a latch-free
// block list (storage/block_list.h): each worker inserts into blocks of its
// own (RowCursor), so inserts share nothing but the rare compare-and-swap
// that appends a block.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/arena.h"
#include "common/storage_options.h"
#include "index/index.h"
#include "platform/latch.h"
#include "platform/memory.h"
#include "storage/block_list.h"
#include "storage/row.h"
#include "storage/schema.h"

namespace abyss {

class Table;

// A worker's position in its current insert block of one table, and the
// slots it may use again (txn/epochs.h), taken before the block's next.
struct RowCursor {
  BlockList::Cursor block;
  std::vector<Row*> free;
  uint64_t reused = 0;  // slots taken from `free`
};

class Table final {
 public:
  // `init_row` sets up the scheme's metadata of the rows the table makes
  // itself (the end entries below); null leaves it zero-filled.
  Table(uint32_t id, std::string name, Schema schema, RowLayout layout, uint64_t expected_rows,
        StorageOptions options = {}, IndexType primary = IndexType::Hash, void (*init_row)(void* meta) = nullptr);
  ~Table();
  Table(const Table&) = delete;
  Table& operator=(const Table&) = delete;

  uint32_t id() const { return id_; }
  const std::string& name() const { return name_; }
  const Schema& schema() const { return schema_; }
  const RowLayout& layout() const { return layout_; }
  uint32_t stride() const { return stride_; }
  // Every ordered index holds, past every key, an entry at Index::kEndKey
  // whose row no transaction sees (it reads as deleted): the successor of the
  // last key, which a scan that runs off the end reads and an insert after
  // the last key writes, so they conflict there as they do at any other next
  // key (txn/txn.h, scans). Its row is the table's own, outside the blocks.
  Row* end_row() const { return end_row_; }

  // The primary index: a row's key, unique.
  Index& index() { return primary_; }
  const Index& index() const { return primary_; }

  // A key computed from a row's data.
  using KeyOf = uint64_t (*)(const char* data);

  // Secondary indexes, numbered from 1 (0 is the primary) in the order they
  // were added, before the table is loaded. A secondary key need not be a
  // row's primary key; one that is not unique by itself is made unique by
  // packing the primary key into its low bits. With `key_of`, which computes
  // a row's key in the index from its data, load_row() and every committed
  // insert index the row there (set_primary_key_of() first), and no update
  // may change that key; without it, the caller indexes rows itself, and
  // transactions may not insert into the table.
  uint32_t add_index(std::string name, IndexType type, uint64_t expected_keys, KeyOf key_of = nullptr);
  Index& index(uint32_t id) { return id == 0 ? primary_ : *secondary_[id - 1]; }
  const Index& index(uint32_t id) const { return id == 0 ? primary_ : *secondary_[id - 1]; }
  uint32_t index_count() const { return static_cast<uint32_t>(secondary_.size()) + 1; }
  // The key function of index `id` (0: the primary's), or null.
  KeyOf key_of(uint32_t id) const { return key_of_[id]; }
  // The primary key of a row's data: a table with secondary indexes that
  // compute their keys needs it, since a scan of one names the rows it reads
  // by their primary keys.
  void set_primary_key_of(KeyOf key_of) { key_of_[0] = key_of; }

  // A zeroed row slot: one of the cursor's free slots, zeroed again, or the
  // next of the cursor's block, taking a new block of
  // `block_rows` when the current one is full. With huge pages on, a block of
  // a huge page or more (the loaders') is mapped on huge pages and holds as
  // many rows as they do; smaller ones (a worker's insert blocks) stay on
  // small pages, whose faults during a run cost far less. The row is not live (not
  // visible to dump) until its header says so.
  Row* allocate(RowCursor& cursor, uint64_t block_rows = kDefaultBlockRows);

  // Loads one row, before any transaction runs: a slot from the cursor's
  // block, the scheme's metadata set up by `init_row`, the data written by
  // `fill(char* data)`, then the row made live and indexed under `key` with a
  // node taken from `nodes` (an arena the caller hands to adopt() when done).
  template <class Fill>
  Row* load_row(RowCursor& cursor, Arena& nodes, uint64_t block_rows, uint64_t key, void (*init_row)(void* meta),
                Fill&& fill) {
    Row* row = allocate(cursor, block_rows);
    init_row(layout_.meta(row));
    fill(layout_.data(row));
    RowLayout::header(row).flags = RowHeader::kLive;
    primary_.insert(key, row, nodes);
    for (uint32_t i = 1; i < key_of_.size(); i++) {
      if (key_of_[i] != nullptr) secondary_[i - 1]->insert(key_of_[i](layout_.data(row)), row, nodes);
    }
    return row;
  }

  // Loads a row no transaction ever sees (it reads as deleted, as the end
  // row does) under `key` in the primary index, before any transaction runs:
  // a fence between key ranges, the next key of the range below it.
  Row* load_fence(RowCursor& cursor, Arena& nodes, uint64_t block_rows, uint64_t key, void (*init_row)(void* meta)) {
    Row* row = allocate(cursor, block_rows);
    init_row(layout_.meta(row));
    RowLayout::header(row).flags = RowHeader::kDeleted;
    primary_.insert(key, row, nodes);
    return row;
  }

  // Calls fn on every live, not deleted row. Only when no worker runs.
  void for_each_live(const std::function<void(const Row*)>& fn) const;
  // The same, free to change the row (recovery).
  void for_each_live_row(const std::function<void(Row*)>& fn);

  // Whether no index of the table keeps a removed row's entry: every one is
  // ordered (a hash index keeps its entries for the run), so a removed row's
  // slot may be used again once no transaction holds it (txn/epochs.h).
  bool removals_unlink() const {
    for (uint32_t i = 0; i < index_count(); i++) {
      if (!index(i).is_ordered()) return false;
    }
    return true;
  }

  // The bytes of its row blocks, as mapped.
  uint64_t reserved_bytes() const { return rows_.mapped_bytes(); }

  // A table no transaction writes once loaded (TPC-C ITEM). Reads of it skip
  // concurrency control: with no writer there is no conflict to order, under
  // any scheme. Txn refuses writes to it.
  void set_read_only() { read_only_ = true; }
  bool read_only() const { return read_only_; }

  // Keeps an arena (the loaders' index nodes) alive as long as the table.
  void adopt(Arena&& arena) {
    platform::MutexGuard g(arenas_mutex_);
    arenas_.push_back(std::make_unique<Arena>(std::move(arena)));
  }

  static constexpr uint64_t kDefaultBlockRows = 4096;

  // The bytes between consecutive rows of a table of `schema` under `layout`:
  // the row padded to a multiple of its alignment (row.h).
  static uint32_t stride_for(const RowLayout& layout, const Schema& schema) {
    return static_cast<uint32_t>(round_up(layout.data_offset + schema.size(), layout.row_align));
  }
  // The bytes a block of `block_rows` rows of `stride` maps (footprint.h).
  static std::size_t block_bytes(uint64_t block_rows, uint32_t stride, bool huge_pages) {
    return BlockList::block_mapping(block_rows, stride, huge_pages);
  }
  // The rows such a block holds: as many as its mapping has room for.
  static uint64_t block_capacity(uint64_t block_rows, uint32_t stride, bool huge_pages) {
    return (block_bytes(block_rows, stride, huge_pages) - BlockList::header_bytes()) / stride;
  }

 private:
  uint32_t id_;
  std::string name_;
  Schema schema_;
  RowLayout layout_;
  uint32_t stride_;
  bool read_only_ = false;
  StorageOptions options_;
  // Indexes the end row at Index::kEndKey in `index`, if it is ordered.
  void add_end_entry(Index& index);

  Index primary_;
  std::vector<std::unique_ptr<Index>> secondary_;
  std::vector<KeyOf> key_of_{nullptr};    // per index, the primary's first
  Arena own_{4096, "a table's end row"};  // the end row and the end entries' index nodes
  Row* end_row_ = nullptr;
  BlockList rows_;                // every row but the end row
  platform::Mutex arenas_mutex_;  // guards arenas_ (loaders may adopt theirs in parallel)
  std::vector<std::unique_ptr<Arena>> arenas_;
};

}  // namespace abyss
