//===- Fnv1a.h - The FNV-1a 64-bit hash -------------------------*- C++ -*-===//
//
// One hash for three formats: the artifact footer's checksum, checkpoint
// manifests' per-tensor checksums and Criteo categorical strings' ids.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SUPPORT_FNV1A_H
#define KILN_RUNTIME_SUPPORT_FNV1A_H

#include <cstddef>
#include <cstdint>

namespace kiln {

/// FNV-1a, 64-bit (offset basis 0xcbf29ce484222325, prime 0x100000001b3),
/// of `size` bytes at `data`.
uint64_t fnv1a64(const void *data, size_t size);

} // namespace kiln

#endif // KILN_RUNTIME_SUPPORT_FNV1A_H
