#pragma once
// SmallBank's settings (Alomari et al., ICDE 2008), one knob row each
// (SmallBank::knobs in smallbank.cc); a run's are
// Config::settings<SmallBankConfig>().
#include <cstdint>

namespace abyss {

struct SmallBankConfig {
  uint32_t accounts = 100'000;  // customers, each with a savings and a checking account
  // The hot-account skew: an account is drawn from the first hot_accounts
  // with probability hot_ratio, else from the rest, uniform in each.
  uint32_t hot_accounts = 100;
  double hot_ratio = 0.9;
};

}  // namespace abyss
