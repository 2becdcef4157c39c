#pragma once
// CRC-32C (Castagnoli), the checksum of log records from format 2 on
// (log/record.h). Natively ISA-L's, which picks the CPU's instruction
// (SSE4.2's crc32 on x86, the CRC32C instructions on ARMv8) and falls back
// to tables elsewhere. A simulated build runs the same code: it never logs.
#include <cstdint>
#include <string_view>

namespace abyss::platform {

// CRC-32C of `bytes`, continuing from `crc` (the CRC of what came before;
// 0 for none): crc32c(b, crc32c(a)) == crc32c(a + b).
uint32_t crc32c(std::string_view bytes, uint32_t crc = 0);

}  // namespace abyss::platform
