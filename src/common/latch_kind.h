#pragma once
// The latch kind a run uses (`--latch spin|queue|mutex`, Tale §4.1 and §5), a
// choice the platform layer offers: plain data here so the run's configuration
// can name it without depending on the platform; platform/latch.h implements
// the kinds.
#include <array>
#include <cstdint>
#include <string_view>

namespace abyss {

enum class LatchKind : uint8_t { Spin, Queue, Mutex };
inline constexpr std::array<std::string_view, 3> kLatchNames = {"spin", "queue", "mutex"};

}  // namespace abyss
