#pragma once
// Which rows a workload's load makes: every one, or only those the workers'
// pre-generated queries name, so a run can have the papers' table sizes
// (YCSB's 20 M rows, TPC-C's 1,024 warehouses) without their memory: the
// rows no query names are never read.
#include <array>
#include <cstdint>
#include <string_view>

namespace abyss {

enum class Materialize : uint8_t { All, Queried };
inline constexpr std::array<std::string_view, 2> kMaterializeNames = {"all", "queried"};

}  // namespace abyss
