//===- ReadAt.h - Whole reads at an offset ----------------------*- C++ -*-===//

#ifndef KILN_RUNTIME_SUPPORT_READAT_H
#define KILN_RUNTIME_SUPPORT_READAT_H

#include <cstddef>
#include <cstdint>
#include <sys/types.h>

namespace kiln {

/// Reads exactly `size` bytes at `offset` of `fd` into `out`, retrying short
/// and interrupted reads; returns 0 or the errno of the failure (EIO when the
/// file ends early).
int readAt(int fd, uint8_t *out, size_t size, off_t offset);

} // namespace kiln

#endif // KILN_RUNTIME_SUPPORT_READAT_H
