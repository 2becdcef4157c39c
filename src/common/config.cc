#include "common/config.h"

#include <cstdio>

#include <nlohmann/json.hpp>

namespace abyss {

std::string Config::hash() const {
  const std::string text = to_json().dump();  // keys are sorted: canonical
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace abyss
