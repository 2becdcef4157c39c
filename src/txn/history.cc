#include "txn/history.h"

#include <stdexcept>

namespace abyss {

namespace {
void append_entry(std::string& out, const std::string& table, uint64_t key, TxnId id, const char* kind = nullptr,
                  std::span<const HistoryWriter::IndexKey> index_keys = {}) {
  if (!out.empty()) out += ',';
  // Table names are identifiers chosen by abyss: no JSON escaping needed.
  out += "[\"";
  out += table;
  out += "\",";
  out += std::to_string(key);
  out += ',';
  out += std::to_string(id.value);
  if (kind != nullptr) {
    out += ",\"";
    out += kind;
    out += '"';
  }
  if (!index_keys.empty()) {
    // Index names, like table names, need no escaping.
    out += ",{";
    for (std::size_t i = 0; i < index_keys.size(); i++) {
      if (i > 0) out += ',';
      out += '"';
      out += *index_keys[i].index;
      out += "\":";
      out += std::to_string(index_keys[i].key);
    }
    out += '}';
  }
  out += ']';
}

// Closes an open scan's list of keys seen, and the scan.
void close_scan(std::string& scans, const std::string* index) {
  scans += "]";
  if (index != nullptr) {
    scans += ",\"";
    scans += *index;
    scans += '"';
  }
  scans += "]";
}
}  // namespace

HistoryWriter::HistoryWriter(std::string part_path) : part_path_(std::move(part_path)) {
  if (auto err = file_.open(part_path_); !err.empty())
    throw std::runtime_error("cannot write " + part_path_ + ": " + err);
  buf_.reserve(1 << 20);
}

HistoryWriter::~HistoryWriter() {
  (void)file_.close();
  (void)platform::remove_file(part_path_);  // gone already once merged
}

void HistoryWriter::begin(TxnId id) {
  buf_ += "{\"id\":";
  buf_ += std::to_string(id.value);
  reads_.clear();
  writes_.clear();
  scans_.clear();
  scan_open_ = false;
  scan_index_ = nullptr;
}

void HistoryWriter::read(const std::string& table, uint64_t key, TxnId writer) {
  append_entry(reads_, table, key, writer);
}

void HistoryWriter::write(const std::string& table, uint64_t key, TxnId prev_writer, WriteKind kind,
                          std::span<const IndexKey> index_keys) {
  append_entry(writes_, table, key, prev_writer,
               kind == WriteKind::Insert   ? "insert"
               : kind == WriteKind::Delete ? "delete"
                                           : nullptr,
               kind == WriteKind::Update ? std::span<const IndexKey>{} : index_keys);
}

void HistoryWriter::scan(const std::string& table, uint64_t lo, uint64_t hi, const std::string* index) {
  if (scan_open_) {
    close_scan(scans_, scan_index_);
    scans_ += ',';
  }
  scan_index_ = index;
  scans_ += "[\"";
  scans_ += table;
  scans_ += "\",";
  scans_ += std::to_string(lo);
  scans_ += ',';
  scans_ += std::to_string(hi);
  scans_ += ",[";
  scan_open_ = true;
}

void HistoryWriter::scan_saw(uint64_t key, TxnId writer) {
  if (scans_.back() != '[') scans_ += ',';
  scans_ += '[';
  scans_ += std::to_string(key);
  scans_ += ',';
  scans_ += std::to_string(writer.value);
  scans_ += ']';
}

void HistoryWriter::end() {
  buf_ += ",\"reads\":[";
  buf_ += reads_;
  buf_ += "],\"writes\":[";
  buf_ += writes_;
  buf_ += ']';
  if (scan_open_) {
    buf_ += ",\"scans\":[";
    buf_ += scans_;
    close_scan(buf_, scan_index_);
    buf_ += ']';
  }
  buf_ += "}\n";
  if (buf_.size() >= (1 << 20)) spill();
}

void HistoryWriter::spill() {
  file_.write(buf_);
  buf_.clear();
  if (!file_.ok()) throw std::runtime_error("write failed for " + part_path_ + ": " + file_.error());
}

const std::string& HistoryWriter::close() {
  spill();
  if (auto err = file_.close(); !err.empty()) throw std::runtime_error("write failed for " + part_path_ + ": " + err);
  return part_path_;
}

std::string HistoryWriter::merge(const std::string& path, const std::vector<std::string>& parts) {
  std::string err;
  std::size_t merged = 0;  // parts copied and removed
  platform::OutputFile out(std::size_t{1} << 20);
  if (auto reason = out.open(path); !reason.empty()) {
    err = "cannot write " + path + ": " + reason;
  } else {
    for (; merged < parts.size() && out.ok(); merged++) {
      if (auto reason = out.append_file(parts[merged]); !reason.empty()) {
        err = "cannot read " + parts[merged] + ": " + reason;
        break;
      }
      (void)platform::remove_file(parts[merged]);
    }
    if (auto reason = out.close(); err.empty() && !reason.empty()) err = "write failed for " + path + ": " + reason;
    if (!err.empty()) (void)platform::remove_file(path);
  }
  for (std::size_t i = merged; i < parts.size(); i++) (void)platform::remove_file(parts[i]);
  return err;
}

}  // namespace abyss
