//===- Fnv1a.cpp - The FNV-1a 64-bit hash ---------------------------------===//

#include "runtime/support/Fnv1a.h"

namespace kiln {

uint64_t fnv1a64(const void *data, size_t size) {
  const uint8_t *bytes = static_cast<const uint8_t *>(data);
  uint64_t hash = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < size; ++i) {
    hash ^= bytes[i];
    hash *= 0x100000001b3ull;
  }
  return hash;
}

} // namespace kiln
