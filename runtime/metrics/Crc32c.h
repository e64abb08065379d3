//===- Crc32c.h - CRC-32C (Castagnoli) --------------------------*- C++ -*-===//
//
// The checksum TFRecord framing uses (TensorBoard event files): CRC-32C with
// the reflected polynomial 0x82F63B78, table-driven, and the mask TensorFlow
// applies to a CRC stored next to the data it covers.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_METRICS_CRC32C_H
#define KILN_RUNTIME_METRICS_CRC32C_H

#include <cstddef>
#include <cstdint>

namespace kiln::metrics {

/// The CRC-32C of `size` bytes at `data`, continuing from `crc` (the CRC of
/// the bytes before them; 0 to start). crc32c("123456789") == 0xE3069283.
uint32_t crc32c(const void *data, size_t size, uint32_t crc = 0);

/// TensorFlow's masked form of `crc`: ((crc >> 15) | (crc << 17)) + 0xa282ead8.
uint32_t maskCrc32c(uint32_t crc);

} // namespace kiln::metrics

#endif // KILN_RUNTIME_METRICS_CRC32C_H
