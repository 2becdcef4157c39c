#include "storage/table.h"

#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "common/out_of_memory.h"
#include "platform/memory.h"

namespace abyss {

Table::Table(uint32_t id, std::string name, Schema schema, RowLayout layout, uint64_t expected_rows,
             StorageOptions options, IndexType primary, void (*init_row)(void* meta))
    : id_(id),
      name_(std::move(name)),
      schema_(std::move(schema)),
      layout_(layout),
      stride_(stride_for(layout, schema_)),
      options_(options),
      primary_("primary", primary, expected_rows, options, name_.c_str()),
      rows_(stride_, BlockListMode::LatchFree, BlockList::kDefaultBlockBytes, options.huge_pages) {
  end_row_ = reinterpret_cast<Row*>(own_.allocate_zeroed(stride_, layout_.row_align));
  if (init_row != nullptr) init_row(layout_.meta(end_row_));
  RowLayout::header(end_row_).flags = RowHeader::kDeleted;  // never live: every reader finds it absent
  add_end_entry(primary_);
}

uint32_t Table::add_index(std::string name, IndexType type, uint64_t expected_keys, KeyOf key_of) {
  if (key_of != nullptr && key_of_[0] == nullptr) {
    throw std::logic_error("table " + name_ + ": index " + name +
                           " computes its keys, but the table has no primary key function");
  }
  secondary_.push_back(std::make_unique<Index>(std::move(name), type, expected_keys, options_, name_.c_str()));
  key_of_.push_back(key_of);
  add_end_entry(*secondary_.back());
  return static_cast<uint32_t>(secondary_.size());
}

void Table::add_end_entry(Index& index) {
  if (index.is_ordered()) index.ordered()->insert(Index::kEndKey, end_row_, own_);
}

Table::~Table() = default;

Row* Table::allocate(RowCursor& cursor, uint64_t block_rows) {
  if (!cursor.free.empty()) {
    Row* r = cursor.free.back();
    cursor.free.pop_back();
    cursor.reused++;
    std::memset(static_cast<void*>(r), 0, stride_);
    return r;
  }
  try {
    return reinterpret_cast<Row*>(rows_.claim(cursor.block, block_rows));
  } catch (const OutOfMemory&) {
    char detail[64];
    std::snprintf(detail, sizeof(detail), " (a block of %llu rows)", static_cast<unsigned long long>(block_rows));
    throw OutOfMemory(block_bytes(block_rows, stride_, options_.huge_pages), "table ", name_.c_str(), detail);
  }
}

void Table::for_each_live(const std::function<void(const Row*)>& fn) const {
  for (BlockList::Iterator it = rows_.begin(); it.valid(); it.next()) {
    const Row* r = reinterpret_cast<const Row*>(*it);
    const uint32_t flags = reinterpret_cast<const RowHeader*>(r)->flags;
    if ((flags & RowHeader::kLive) != 0 && (flags & RowHeader::kDeleted) == 0) fn(r);
  }
}

void Table::for_each_live_row(const std::function<void(Row*)>& fn) {
  for (BlockList::Iterator it = rows_.begin(); it.valid(); it.next()) {
    Row* r = reinterpret_cast<Row*>(const_cast<char*>(*it));  // this table owns the rows
    const uint32_t flags = RowLayout::header(r).flags;
    if ((flags & RowHeader::kLive) != 0 && (flags & RowHeader::kDeleted) == 0) fn(r);
  }
}

}  // namespace abyss
