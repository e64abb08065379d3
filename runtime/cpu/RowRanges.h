//===- RowRanges.h - A kernel's rows split over threads ---------*- C++ -*-===//
//
// Kernels compiled with a row entry (artifact KernelCall.rows) compute any
// range of their rows. runRowRanges gives each OpenMP thread one contiguous
// range; the rows are independent, so the result is the same bits as one
// call over all of them.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_CPU_ROWRANGES_H
#define KILN_RUNTIME_CPU_ROWRANGES_H

#include "runtime/cpu/KernelLibrary.h"
#include "runtime/cpu/Threads.h"

namespace kiln::cpu {

/// How many threads a kernel of `rows` rows runs on: the session's
/// (availableThreads), at most one per row.
int rowThreads(int64_t rows);

/// Calls `rowKernel` once per thread with `args` (its `count` buffer
/// addresses) followed by pointers to the thread's first and past-the-end
/// row, the ranges together covering [0, rows).
void runRowRanges(KernelFunction rowKernel, void *const *args, size_t count, int64_t rows);

} // namespace kiln::cpu

#endif // KILN_RUNTIME_CPU_ROWRANGES_H
