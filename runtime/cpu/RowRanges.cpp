//===- RowRanges.cpp - A kernel's rows split over threads -----------------===//

#include "runtime/cpu/RowRanges.h"

#include <omp.h>

#include <algorithm>

namespace kiln::cpu {

int rowThreads(int64_t rows) {
  return static_cast<int>(std::min<int64_t>(availableThreads(), rows));
}

RowArguments::RowArguments(void *const *args, size_t count) {
  if (count > kOnStack) {
    onHeap_.resize(count + 2);
    args_ = onHeap_.data();
  }
  std::copy(args, args + count, args_);
  args_[count] = &range_[0];
  args_[count + 1] = &range_[1];
}

void runRowRanges(KernelFunction rowKernel, void *const *args, size_t count, int64_t rows) {
  int threads = rowThreads(rows);
#pragma omp parallel num_threads(threads)
  {
    int64_t team = omp_get_num_threads(), thread = omp_get_thread_num();
    RowArguments local(args, count); // A small copy per thread and call.
    local.call(rowKernel, rows * thread / team, rows * (thread + 1) / team);
  }
}

} // namespace kiln::cpu
