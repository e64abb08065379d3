//===- IdRange.h - Whether ids lie in their range ---------------*- C++ -*-===//
//
// Every batch's ids are checked against the rows or classes they index
// before a step runs (Session::bindFeed), on the step's own thread: a pass
// that must cost little next to the step. One unsigned compare an id, no
// branch, compiled for AVX-512, AVX2 and the baseline and picked at load
// time (SSE2 has no 64-bit compare: the baseline loop is scalar).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_CPU_IDRANGE_H
#define KILN_RUNTIME_CPU_IDRANGE_H

#include <cstddef>
#include <cstdint>

namespace kiln::cpu {

/// Whether any of the `count` ids lies outside [low, low + range).
bool anyIdOutside(const int64_t *ids, size_t count, int64_t low, uint64_t range);
bool anyIdOutside(const int32_t *ids, size_t count, int64_t low, uint64_t range);

} // namespace kiln::cpu

#endif // KILN_RUNTIME_CPU_IDRANGE_H
