#pragma once
// TATP's settings (the Telecom Application Transaction Processing
// benchmark, version 1.0), one knob row each (Tatp::knobs in tatp.cc); a
// run's are Config::settings<TatpConfig>().
#include <cstdint>

namespace abyss {

struct TatpConfig {
  // The population: subscriber ids 1..subscribers, each with one to four
  // ACCESS_INFO and SPECIAL_FACILITY rows, and up to three CALL_FORWARDING
  // rows per SPECIAL_FACILITY row.
  uint32_t subscribers = 100'000;
};

}  // namespace abyss
