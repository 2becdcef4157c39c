#include "storage/database.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace abyss {

namespace {
void write_csv_field(std::ostream& out, const char* data, const Column& c) {
  switch (c.type) {
    case ColumnType::Int64:
      out << get_int64(data, c);
      return;
    case ColumnType::Double: {
      char buf[64];
      std::snprintf(buf, sizeof(buf), "%.17g", get_double(data, c));
      out << buf;
      return;
    }
    case ColumnType::Chars: {
      // Fixed-width text, cut at the first NUL, CSV-quoted with "" for ".
      const char* s = data + c.offset;
      const std::size_t len = strnlen(s, c.size);
      out << '"';
      for (std::size_t i = 0; i < len; i++) {
        if (s[i] == '"') out << '"';
        out << s[i];
      }
      out << '"';
      return;
    }
  }
}
}  // namespace

std::string Database::dump(const std::string& dir) const {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return "cannot create dump directory " + dir + ": " + ec.message();
  for (const auto& t : tables_) {
    const std::string path = dir + "/" + t->name() + ".csv";
    std::ofstream out(path);
    if (!out) return "cannot write " + path + ": " + std::strerror(errno);
    const auto& cols = t->schema().columns();
    for (std::size_t i = 0; i < cols.size(); i++) out << (i ? "," : "") << cols[i].name;
    out << '\n';
    t->for_each_live([&](const Row* r) {
      const char* data = t->layout().data(r);
      for (std::size_t i = 0; i < cols.size(); i++) {
        if (i) out << ',';
        write_csv_field(out, data, cols[i]);
      }
      out << '\n';
    });
    if (!out) return "write failed for " + path;
  }
  return {};
}

}  // namespace abyss
