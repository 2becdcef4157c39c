#include "common/ts_alloc.h"

#include <charconv>
#include <string>

namespace abyss {

std::string TsAllocConfig::parse(const std::string& text, TsAllocConfig& out) {
  std::string allowed = "'" + text + "' is not one of mutex, atomic, batch:N (1 <= N <= 1000000), clock, hw";
  if (text == "mutex") {
    out = {TsMethod::Mutex, 1};
  } else if (text == "atomic") {
    out = {TsMethod::Atomic, 1};
  } else if (text == "clock") {
    out = {TsMethod::Clock, 1};
  } else if (text == "hw") {
    out = {TsMethod::Hardware, 1};
  } else if (text.rfind("batch:", 0) == 0) {
    const char* first = text.data() + 6;
    const char* last = text.data() + text.size();
    uint32_t n = 0;
    auto [ptr, ec] = std::from_chars(first, last, n);
    if (ec != std::errc() || ptr != last || first == last || n < 1 || n > 1'000'000) return allowed;
    out = {TsMethod::Batch, n};
  } else {
    return allowed;
  }
  return {};
}

std::string TsAllocConfig::to_string() const {
  switch (method) {
    case TsMethod::Mutex:
      return "mutex";
    case TsMethod::Atomic:
      return "atomic";
    case TsMethod::Batch:
      return "batch:" + std::to_string(batch);
    case TsMethod::Clock:
      return "clock";
    case TsMethod::Hardware:
      return "hw";
  }
  return "?";
}

}  // namespace abyss
