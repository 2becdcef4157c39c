#pragma once
// The timestamp allocation method of a run (`--ts-alloc`, Abyss §4.3), as
// plain data for the run's configuration; txn/ts_source.h implements it.
#include <cstdint>
#include <string>

namespace abyss {

// Hardware: the simulated chip's timestamp counter (Abyss §4.3, Fig. 6),
// which exists only on simulated cores (docs/many-core.md).
enum class TsMethod : uint8_t { Mutex, Atomic, Batch, Clock, Hardware };

struct TsAllocConfig {
  TsMethod method = TsMethod::Atomic;
  uint32_t batch = 1;  // only for Batch

  // Parses "mutex", "atomic", "batch:N" (1 <= N <= 1'000'000), "clock" or "hw";
  // returns an error message, empty on success.
  static std::string parse(const std::string& text, TsAllocConfig& out);
  std::string to_string() const;
};

}  // namespace abyss
