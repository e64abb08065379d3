//===- Crc32c.cpp - CRC-32C (Castagnoli) ----------------------------------===//

#include "runtime/metrics/Crc32c.h"

#include <array>

namespace kiln::metrics {

namespace {

/// Slicing-by-8 tables: table[0] is the byte-at-a-time table, table[k] the
/// CRC of a byte followed by k zero bytes.
using Tables = std::array<std::array<uint32_t, 256>, 8>;

Tables makeTables() {
  Tables tables{};
  for (uint32_t byte = 0; byte < 256; ++byte) {
    uint32_t crc = byte;
    for (int bit = 0; bit < 8; ++bit)
      crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
    tables[0][byte] = crc;
  }
  for (uint32_t byte = 0; byte < 256; ++byte)
    for (size_t k = 1; k < tables.size(); ++k)
      tables[k][byte] =
          (tables[k - 1][byte] >> 8) ^ tables[0][tables[k - 1][byte] & 0xFFu];
  return tables;
}

const Tables &crcTables() {
  static const Tables tables = makeTables();
  return tables;
}

} // namespace

uint32_t crc32c(const void *data, size_t size, uint32_t crc) {
  const Tables &t = crcTables();
  const uint8_t *bytes = static_cast<const uint8_t *>(data);
  crc = ~crc;
  while (size >= 8) {
    uint32_t low = crc ^ (uint32_t(bytes[0]) | uint32_t(bytes[1]) << 8 |
                          uint32_t(bytes[2]) << 16 | uint32_t(bytes[3]) << 24);
    crc = t[7][low & 0xFFu] ^ t[6][(low >> 8) & 0xFFu] ^
          t[5][(low >> 16) & 0xFFu] ^ t[4][low >> 24] ^ t[3][bytes[4]] ^
          t[2][bytes[5]] ^ t[1][bytes[6]] ^ t[0][bytes[7]];
    bytes += 8;
    size -= 8;
  }
  while (size-- > 0)
    crc = (crc >> 8) ^ t[0][(crc ^ *bytes++) & 0xFFu];
  return ~crc;
}

uint32_t maskCrc32c(uint32_t crc) {
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

} // namespace kiln::metrics
