#include "txn/history.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace abyss {

namespace {
void append_entry(std::string& out, const std::string& table, uint64_t key, TxnId id) {
  if (!out.empty()) out += ',';
  // Table names are identifiers chosen by abyss: no JSON escaping needed.
  out += "[\"";
  out += table;
  out += "\",";
  out += std::to_string(key);
  out += ',';
  out += std::to_string(id.value);
  out += ']';
}
}  // namespace

HistoryWriter::HistoryWriter(std::string part_path) : part_path_(std::move(part_path)) {
  file_ = std::fopen(part_path_.c_str(), "w");
  if (file_ == nullptr) throw std::runtime_error("cannot write " + part_path_ + ": " + std::strerror(errno));
  buf_.reserve(1 << 20);
}

HistoryWriter::~HistoryWriter() {
  if (file_ != nullptr) std::fclose(file_);
}

void HistoryWriter::begin(TxnId id) {
  buf_ += "{\"id\":";
  buf_ += std::to_string(id.value);
  reads_.clear();
  writes_.clear();
}

void HistoryWriter::read(const std::string& table, uint64_t key, TxnId writer) {
  append_entry(reads_, table, key, writer);
}

void HistoryWriter::write(const std::string& table, uint64_t key, TxnId prev_writer) {
  append_entry(writes_, table, key, prev_writer);
}

void HistoryWriter::end() {
  buf_ += ",\"reads\":[";
  buf_ += reads_;
  buf_ += "],\"writes\":[";
  buf_ += writes_;
  buf_ += "]}\n";
  if (buf_.size() >= (1 << 20)) spill();
}

void HistoryWriter::spill() {
  if (!buf_.empty() && std::fwrite(buf_.data(), 1, buf_.size(), file_) != buf_.size()) {
    throw std::runtime_error("write failed for " + part_path_);
  }
  buf_.clear();
}

const std::string& HistoryWriter::close() {
  spill();
  std::fclose(file_);
  file_ = nullptr;
  return part_path_;
}

std::string HistoryWriter::merge(const std::string& path, const std::vector<std::string>& parts) {
  std::FILE* out = std::fopen(path.c_str(), "w");
  if (out == nullptr) return "cannot write " + path + ": " + std::strerror(errno);
  std::vector<char> buf(1 << 20);
  for (const auto& p : parts) {
    std::FILE* in = std::fopen(p.c_str(), "r");
    if (in == nullptr) {
      std::fclose(out);
      return "cannot read " + p;
    }
    std::size_t n;
    while ((n = std::fread(buf.data(), 1, buf.size(), in)) > 0) std::fwrite(buf.data(), 1, n, out);
    std::fclose(in);
    std::error_code ec;
    std::filesystem::remove(p, ec);
  }
  return std::fclose(out) == 0 ? std::string{} : "write failed for " + path;
}

}  // namespace abyss
