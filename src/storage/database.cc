#include "storage/database.h"

#include <charconv>
#include <cstdio>
#include <cstring>

#include "platform/file.h"

namespace abyss {

namespace {
// "<what> <path>: <reason>": an error of the dump, in one line.
std::string failure(const char* what, const std::string& path, const std::string& reason) {
  std::string s = what;
  s += ' ';
  s += path;
  s += ": ";
  s += reason;
  return s;
}

void write_csv_field(platform::OutputFile& out, const char* data, const Column& c) {
  switch (c.type) {
    case ColumnType::Int64: {
      char buf[24];
      const auto res = std::to_chars(buf, buf + sizeof(buf), get_int64(data, c));
      out.write(std::string_view(buf, static_cast<std::size_t>(res.ptr - buf)));
      return;
    }
    case ColumnType::Double: {
      char buf[64];
      const int n = std::snprintf(buf, sizeof(buf), "%.17g", get_double(data, c));
      out.write(std::string_view(buf, static_cast<std::size_t>(n)));
      return;
    }
    case ColumnType::Chars: {
      // Fixed-width text, cut at the first NUL, CSV-quoted with "" for ".
      const char* s = data + c.offset;
      const std::size_t len = strnlen(s, c.size);
      out.put('"');
      for (std::size_t i = 0; i < len; i++) {
        if (s[i] == '"') out.put('"');
        out.put(s[i]);
      }
      out.put('"');
      return;
    }
  }
}
}  // namespace

std::string Database::dump(const std::string& dir) const {
  if (auto err = platform::make_dirs(dir); !err.empty()) return failure("cannot create dump directory", dir, err);
  platform::OutputFile out;
  for (const auto& t : tables_) {
    const std::string path = dir + "/" + t->name() + ".csv";
    if (auto err = out.open(path); !err.empty()) return failure("cannot write", path, err);
    const auto& cols = t->schema().columns();
    for (std::size_t i = 0; i < cols.size(); i++) {
      if (i) out.put(',');
      out.write(cols[i].name);
    }
    out.put('\n');
    t->for_each_live([&](const Row* r) {
      const char* data = t->layout().data(r);
      for (std::size_t i = 0; i < cols.size(); i++) {
        if (i) out.put(',');
        write_csv_field(out, data, cols[i]);
      }
      out.put('\n');
    });
    if (auto err = out.close(); !err.empty()) return failure("write failed for", path, err);
  }
  return {};
}

}  // namespace abyss
