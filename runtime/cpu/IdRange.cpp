//===- IdRange.cpp - Whether ids lie in their range -----------------------===//

#include "runtime/cpu/IdRange.h"

namespace kiln::cpu {

namespace {

template <typename Int>
inline bool anyOutside(const Int *ids, size_t count, int64_t low, uint64_t range) {
  // id - low wraps below low to a huge unsigned value: one compare covers
  // both ends.
  // A count, not a bool: GCC vectorizes a sum and leaves a bool's `|=`
  // scalar.
  uint64_t outside = 0;
  for (size_t i = 0; i < count; ++i)
    outside += static_cast<uint64_t>(static_cast<int64_t>(ids[i]) - low) >= range;
  return outside != 0;
}

} // namespace

__attribute__((target_clones("avx512f", "avx2", "default"))) bool
anyIdOutside(const int64_t *ids, size_t count, int64_t low, uint64_t range) {
  return anyOutside(ids, count, low, range);
}

__attribute__((target_clones("avx512f", "avx2", "default"))) bool
anyIdOutside(const int32_t *ids, size_t count, int64_t low, uint64_t range) {
  return anyOutside(ids, count, low, range);
}

} // namespace kiln::cpu
