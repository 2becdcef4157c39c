#pragma once
// The history log (--history, docs/formats.md): one JSON line per committed
// transaction. Each worker buffers its own lines and spills them to a part
// file; the parts are concatenated when the run ends.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "common/types.h"

namespace abyss {

class HistoryWriter final {
 public:
  explicit HistoryWriter(std::string part_path);
  ~HistoryWriter();
  HistoryWriter(const HistoryWriter&) = delete;
  HistoryWriter& operator=(const HistoryWriter&) = delete;

  void begin(TxnId id);
  void read(const std::string& table, uint64_t key, TxnId writer);
  void write(const std::string& table, uint64_t key, TxnId prev_writer);
  void end();

  // Flushes and closes the part file; returns its path.
  const std::string& close();

  // Concatenates the parts into `path` and removes them. Returns an error
  // message, empty on success.
  static std::string merge(const std::string& path, const std::vector<std::string>& parts);

 private:
  void spill();
  std::string part_path_;
  std::FILE* file_ = nullptr;
  std::string buf_;
  std::string reads_;
  std::string writes_;
};

}  // namespace abyss
