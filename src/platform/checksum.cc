#include "platform/checksum.h"

#include <isa-l/crc.h>

#include <climits>
#include <cstddef>

namespace abyss::platform {

uint32_t crc32c(std::string_view bytes, uint32_t crc) {
  // ISA-L keeps the register uninverted: the standard CRC is its value
  // started from ~crc and inverted. It takes lengths as int: large inputs
  // go in pieces.
  uint32_t reg = ~crc;
  while (!bytes.empty()) {
    const std::size_t n = bytes.size() < std::size_t{1} << 30 ? bytes.size() : std::size_t{1} << 30;
    // ISA-L's signature is not const-correct; it only reads the buffer.
    reg = crc32_iscsi(const_cast<unsigned char*>(reinterpret_cast<const unsigned char*>(bytes.data())),
                      static_cast<int>(n), reg);
    bytes.remove_prefix(n);
  }
  return ~reg;
}

}  // namespace abyss::platform
