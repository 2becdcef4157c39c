#include "cc/registry.h"

#include <cctype>

#include "cc/schemes.h"

namespace abyss::cc {

std::span<const SchemeTraits> schemes() { return Registry::kTraits; }

const SchemeTraits* find_scheme(std::string_view name) {
  for (const SchemeTraits& s : Registry::kTraits) {
    if (s.name.size() != name.size()) continue;
    bool same = true;
    for (std::size_t i = 0; i < name.size() && same; i++) {
      same = std::tolower(static_cast<unsigned char>(name[i])) == s.name[i];
    }
    if (same) return &s;
  }
  return nullptr;
}

const SchemeTraits& scheme(std::string_view name) {
  for (const SchemeTraits& s : Registry::kTraits) {
    if (s.name == name) return s;
  }
  throw std::invalid_argument("unknown scheme '" + std::string(name) + "'; one of " + scheme_names());
}

std::string scheme_names() {
  std::string out;
  for (const SchemeTraits& s : Registry::kTraits) out += (out.empty() ? "" : ", ") + std::string(s.name);
  return out;
}

}  // namespace abyss::cc
