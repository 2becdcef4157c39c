// CRC-32C (platform/checksum.h): the standard's check values, and a CRC
// carried across pieces equals the CRC of the whole.
#include "platform/checksum.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>

namespace abyss::platform {
namespace {

TEST(Crc32c, MatchesTheStandardsCheckValues) {
  EXPECT_EQ(crc32c(""), 0u);
  EXPECT_EQ(crc32c("123456789"), 0xE3069283u);
  // RFC 3720 (iSCSI), B.4: 32 bytes of zeros, of ones, ascending.
  EXPECT_EQ(crc32c(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(crc32c(std::string(32, '\xff')), 0x62A8AB43u);
  std::string ascending;
  for (int i = 0; i < 32; i++) ascending.push_back(static_cast<char>(i));
  EXPECT_EQ(crc32c(ascending), 0x46DD794Eu);
}

TEST(Crc32c, ACrcCarriedAcrossPiecesIsTheWholesCrc) {
  std::mt19937_64 rng(7);
  std::string bytes(100'000, '\0');
  for (char& c : bytes) c = static_cast<char>(rng());
  const uint32_t whole = crc32c(bytes);
  for (int i = 0; i < 200; i++) {
    const std::size_t cut = rng() % bytes.size();
    const std::string_view all(bytes);
    EXPECT_EQ(crc32c(all.substr(cut), crc32c(all.substr(0, cut))), whole) << "cut at " << cut;
  }
  bytes[rng() % bytes.size()] ^= 1;
  EXPECT_NE(crc32c(bytes), whole);
}

}  // namespace
}  // namespace abyss::platform
