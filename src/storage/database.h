#pragma once
// The database owns its tables; nothing else is global (docs/architecture.md).
#include <memory>
#include <string>
#include <vector>

#include "storage/table.h"

namespace abyss {

class Database final {
 public:
  // `init_row` sets up the scheme's metadata in the rows a table makes
  // itself (Table::end_row); null leaves it zero-filled.
  explicit Database(RowLayout layout, StorageOptions options = {}, void (*init_row)(void* meta) = nullptr)
      : layout_(layout), options_(options), init_row_(init_row) {}

  // A table whose primary index is of type `primary` (hash unless the
  // workload scans it).
  Table& create_table(std::string name, Schema schema, uint64_t expected_rows, IndexType primary = IndexType::Hash) {
    tables_.push_back(std::make_unique<Table>(static_cast<uint32_t>(tables_.size()), std::move(name), std::move(schema),
                                              layout_, expected_rows, options_, primary, init_row_));
    return *tables_.back();
  }

  const std::vector<std::unique_ptr<Table>>& tables() const { return tables_; }
  const RowLayout& layout() const { return layout_; }

  // Writes DIR/<table>.csv for every table (docs/formats.md). Returns an error
  // message, empty on success.
  std::string dump(const std::string& dir) const;

 private:
  RowLayout layout_;
  StorageOptions options_;
  void (*init_row_)(void* meta);
  std::vector<std::unique_ptr<Table>> tables_;
};

}  // namespace abyss
