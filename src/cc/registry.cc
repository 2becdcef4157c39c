#include "cc/registry.h"

#include <cctype>
#include <utility>
#include <vector>

#include "cc/schemes.h"

namespace abyss::cc {

namespace {

template <class... S>
std::vector<Knob> knobs_of(SchemeList<S...>* /*tag*/) {
  std::vector<Knob> all;
  auto add = [&all]<class CC>() {
    if constexpr (HasKnobs<CC>) {
      for (Knob& k : CC::knobs()) {
        k.scheme = CC::kTraits.name;
        all.push_back(std::move(k));
      }
    }
  };
  (add.template operator()<S>(), ...);
  return all;
}

}  // namespace

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

std::vector<Knob> scheme_knobs() { return knobs_of(static_cast<Registry*>(nullptr)); }

}  // namespace abyss::cc
