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

#include <cstdint>
#include <vector>

namespace kiln::cpu {

/// How many threads a kernel of `rows` rows runs on: the session's
/// (availableThreads), at most one per row.
int rowThreads(int64_t rows);

/// One caller's argument array for a row entry: the kernel's `count`
/// buffer addresses, then pointers to the range's first and past-the-end
/// row (on the stack for up to 64 buffers). Each thread needs its own.
class RowArguments {
public:
  RowArguments(void *const *args, size_t count);
  RowArguments(const RowArguments &) = delete;
  RowArguments &operator=(const RowArguments &) = delete;

  /// Calls `rowKernel` on rows [begin, end).
  void call(KernelFunction rowKernel, int64_t begin, int64_t end) {
    range_[0] = begin;
    range_[1] = end;
    rowKernel(args_);
  }
  /// Replaces buffer address `index` (a block that moves between calls).
  void setBuffer(size_t index, void *address) { args_[index] = address; }

private:
  static constexpr size_t kOnStack = 64;
  void *onStack_[kOnStack + 2];
  std::vector<void *> onHeap_;
  void **args_ = onStack_;
  int64_t range_[2] = {0, 0};
};

/// Calls `rowKernel` once per thread with `args` (its `count` buffer
/// addresses) followed by pointers to the thread's first and past-the-end
/// row, the ranges together covering [0, rows).
void runRowRanges(KernelFunction rowKernel, void *const *args, size_t count, int64_t rows);

} // namespace kiln::cpu

#endif // KILN_RUNTIME_CPU_ROWRANGES_H
