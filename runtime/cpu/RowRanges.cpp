//===- RowRanges.cpp - A kernel's rows split over threads -----------------===//

#include "runtime/cpu/RowRanges.h"

#include <omp.h>

#include <algorithm>
#include <vector>

namespace kiln::cpu {

int rowThreads(int64_t rows) {
  return static_cast<int>(std::min<int64_t>(availableThreads(), rows));
}

void runRowRanges(KernelFunction rowKernel, void *const *args, size_t count, int64_t rows) {
  int threads = rowThreads(rows);
#pragma omp parallel num_threads(threads)
  {
    int64_t team = omp_get_num_threads(), thread = omp_get_thread_num();
    int64_t range[2] = {rows * thread / team, rows * (thread + 1) / team};
    // The buffers, then the range: a small copy per thread and call.
    constexpr size_t kOnStack = 64;
    void *onStack[kOnStack + 2];
    std::vector<void *> onHeap;
    void **local = onStack;
    if (count > kOnStack) {
      onHeap.resize(count + 2);
      local = onHeap.data();
    }
    std::copy(args, args + count, local);
    local[count] = &range[0];
    local[count + 1] = &range[1];
    rowKernel(local);
  }
}

} // namespace kiln::cpu
