#include "workload/tpcc/tpcc_config.h"

#include <algorithm>
#include <charconv>

namespace abyss {

std::string parse_tpcc_mix(const std::string& text, TpccMix& mix) {
  const std::string allowed =
      "allowed: NAME=PERCENT,... with NAME in neworder, payment, delivery, orderstatus, stocklevel, each name at "
      "most once, "
      "percentages summing to 100";
  auto fail = [&](const std::string& why) { return "'" + text + "': " + why + "; " + allowed; };
  TpccMix out{};
  std::array<bool, kTpccTxnNames.size()> seen{};
  std::size_t pos = 0;
  if (text.empty()) return fail("empty");
  while (pos <= text.size()) {
    const std::size_t comma = std::min(text.find(',', pos), text.size());
    const std::string item = text.substr(pos, comma - pos);
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos) return fail("'" + item + "' is not NAME=PERCENT");
    const std::string name = item.substr(0, eq);
    const std::string value = item.substr(eq + 1);
    const auto it = std::find(kTpccTxnNames.begin(), kTpccTxnNames.end(), name);
    if (it == kTpccTxnNames.end()) return fail("unknown transaction '" + name + "'");
    const auto k = static_cast<std::size_t>(it - kTpccTxnNames.begin());
    if (seen[k]) return fail("'" + name + "' given twice");
    uint32_t pct = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), pct);
    if (ec != std::errc() || end != value.data() + value.size() || value.empty() || pct > 100) {
      return fail("'" + value + "' is not a percentage 0..100");
    }
    out[k] = pct;
    seen[k] = true;
    pos = comma + 1;
  }
  uint32_t sum = 0;
  for (uint32_t p : out) sum += p;
  if (sum != 100) return fail("percentages sum to " + std::to_string(sum));
  mix = out;
  return {};
}

std::string tpcc_mix_string(const TpccMix& mix) {
  std::string s;
  for (std::size_t k = 0; k < mix.size(); k++) {
    if (mix[k] == 0) continue;
    if (!s.empty()) s += ',';
    s += kTpccTxnNames[k];
    s += '=';
    s += std::to_string(mix[k]);
  }
  return s;
}

}  // namespace abyss
