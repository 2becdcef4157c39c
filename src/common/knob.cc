#include "common/knob.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace abyss {

namespace knob_detail {

std::string quote_text(std::string_view text) { return "'" + std::string(text) + "'"; }

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace knob_detail

namespace {

using knob_detail::lower;
using knob_detail::quote_text;

constexpr std::string_view kKnobKindNames[] = {"integer", "real", "choice", "switch", "text"};

// Shortest text that reads back as the same double ("0.9999", "86400").
std::string format_real(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<int64_t>(v));
  char buf[32];
  for (int precision = 1; precision <= 17; precision++) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

}  // namespace

std::string_view name_of(KnobKind k) { return kKnobKindNames[static_cast<std::size_t>(k)]; }

std::string Knob::allowed() const {
  switch (kind) {
    case KnobKind::Integer:
      return "an integer from " + std::to_string(min) + " to " + std::to_string(max);
    case KnobKind::Real:
      return "a number from " + format_real(lo) + " to " + format_real(hi);
    case KnobKind::Choice: {
      std::string out = "one of ";
      for (std::size_t i = 0; i < choices.size(); i++) out += (i ? ", " : "") + choices[i];
      return out;
    }
    case KnobKind::Switch:
      return "no value";
    case KnobKind::Text:
      return std::string(syntax);
  }
  return {};
}

std::string Knob::apply(Config& cfg, std::string_view text) const {
  if (kind == KnobKind::Choice) {
    const std::string want = lower(text);
    if (std::find(choices.begin(), choices.end(), want) == choices.end()) {
      return quote_text(text) + ": not " + allowed();
    }
  }
  return set(cfg, text);
}

std::string parse_integer(std::string_view text, uint64_t min, uint64_t max, uint64_t& out) {
  const std::string allowed = "allowed: an integer from " + std::to_string(min) + " to " + std::to_string(max);
  if (text.empty()) return "'': not a number; " + allowed;
  uint64_t v = 0;
  const char* first = text.data();
  const char* last = text.data() + text.size();
  const auto [end, ec] = std::from_chars(first, last, v);
  if (ec == std::errc::result_out_of_range) return quote_text(text) + ": above " + std::to_string(max) + "; " + allowed;
  if (ec != std::errc() || end != last) {
    // Not plain digits: a negative number, scientific notation (1e6) or not a number at all.
    const std::string s(text);
    char* stop = nullptr;
    const long double d = std::strtold(s.c_str(), &stop);
    if (stop == s.c_str() || *stop != '\0' || std::isspace(static_cast<unsigned char>(s[0])) != 0) {
      return quote_text(text) + ": not a number; " + allowed;
    }
    if (std::isnan(d)) return quote_text(text) + ": not a number; " + allowed;
    if (std::isinf(d)) return quote_text(text) + ": not finite; " + allowed;
    if (d != std::floor(d)) return quote_text(text) + ": not an integer; " + allowed;
    if (d < static_cast<long double>(min)) return quote_text(text) + ": below " + std::to_string(min) + "; " + allowed;
    if (d > static_cast<long double>(max)) return quote_text(text) + ": above " + std::to_string(max) + "; " + allowed;
    v = static_cast<uint64_t>(d);
  }
  if (v < min) return quote_text(text) + ": below " + std::to_string(min) + "; " + allowed;
  if (v > max) return quote_text(text) + ": above " + std::to_string(max) + "; " + allowed;
  out = v;
  return {};
}

std::string parse_real(std::string_view text, double lo, double hi, double& out) {
  const std::string allowed = "allowed: a number from " + format_real(lo) + " to " + format_real(hi);
  const std::string s(text);
  if (s.empty()) return "'': not a number; " + allowed;
  char* stop = nullptr;
  const double v = std::strtod(s.c_str(), &stop);
  if (stop == s.c_str() || *stop != '\0' || std::isspace(static_cast<unsigned char>(s[0])) != 0) {
    return quote_text(text) + ": not a number; " + allowed;
  }
  if (std::isnan(v)) return quote_text(text) + ": not a number; " + allowed;
  if (std::isinf(v)) return quote_text(text) + ": not finite; " + allowed;
  if (v < lo) return quote_text(text) + ": below " + format_real(lo) + "; " + allowed;
  if (v > hi) return quote_text(text) + ": above " + format_real(hi) + "; " + allowed;
  out = v;
  return {};
}

}  // namespace abyss
