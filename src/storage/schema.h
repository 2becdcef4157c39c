#pragma once
// Fixed-size row schemas. Column offsets are resolved when the schema is built
// (Tale §5: catalogue look-ups on the hot path were a hotspot); workloads keep
// the resolved Column values and never look a column up by name per access.
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace abyss {

enum class ColumnType : uint8_t { Int64, Double, Chars };

struct Column {
  std::string name;
  ColumnType type;
  uint32_t size;    // bytes
  uint32_t offset;  // from the start of the row's data
};

class Schema final {
 public:
  Schema& add_int64(std::string name) { return add(std::move(name), ColumnType::Int64, 8); }
  Schema& add_double(std::string name) { return add(std::move(name), ColumnType::Double, 8); }
  Schema& add_chars(std::string name, uint32_t size) { return add(std::move(name), ColumnType::Chars, size); }

  const std::vector<Column>& columns() const { return columns_; }
  const Column& column(std::size_t i) const { return columns_.at(i); }
  // Set-up time only (never per access).
  const Column& column(const std::string& name) const {
    for (const auto& c : columns_) {
      if (c.name == name) return c;
    }
    throw std::invalid_argument("no column " + name);
  }
  uint32_t size() const { return size_; }

 private:
  Schema& add(std::string name, ColumnType type, uint32_t size) {
    // Numbers are 8-byte aligned inside the row; strings pack.
    const uint32_t align = type == ColumnType::Chars ? 1 : 8;
    const uint32_t offset = (size_ + align - 1) / align * align;
    columns_.push_back({std::move(name), type, size, offset});
    size_ = offset + size;
    return *this;
  }
  std::vector<Column> columns_;
  uint32_t size_ = 0;
};

// Typed access to one column of a row's data.
inline int64_t get_int64(const char* data, const Column& c) {
  int64_t v;
  std::memcpy(&v, data + c.offset, sizeof(v));
  return v;
}
inline void set_int64(char* data, const Column& c, int64_t v) { std::memcpy(data + c.offset, &v, sizeof(v)); }
inline double get_double(const char* data, const Column& c) {
  double v;
  std::memcpy(&v, data + c.offset, sizeof(v));
  return v;
}
inline void set_double(char* data, const Column& c, double v) { std::memcpy(data + c.offset, &v, sizeof(v)); }

}  // namespace abyss
