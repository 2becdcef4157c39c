#pragma once
// The two run-time choices the platform layer offers, as plain data so the
// run's configuration can name them without depending on the platform:
// the latch kind (`--latch`, Tale §5) and the timestamp allocation method
// (`--ts-alloc`, Abyss §4.3). platform/latch.h and platform/ts_source.h
// implement them.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace abyss {

// Which latch a run uses (`--latch spin|queue`).
enum class LatchKind : uint8_t { Spin, Queue };
inline constexpr std::array<std::string_view, 2> kLatchNames = {"spin", "queue"};

enum class TsMethod : uint8_t { Mutex, Atomic, Batch, Clock };

struct TsAllocConfig {
  TsMethod method = TsMethod::Atomic;
  uint32_t batch = 1;  // only for Batch

  // Parses "mutex", "atomic", "batch:N" (1 <= N <= 1'000'000) or "clock";
  // returns an error message, empty on success.
  static std::string parse(const std::string& text, TsAllocConfig& out);
  std::string to_string() const;
};

}  // namespace abyss
