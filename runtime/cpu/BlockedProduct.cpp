//===- BlockedProduct.cpp - A product computed by blocks of rows ----------===//

#include "runtime/cpu/BlockedProduct.h"

#include "runtime/cpu/RowRanges.h"

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <utility>

namespace kiln::cpu {

namespace {

/// One thread's calls: its copy of the reader's arguments (RowArguments).
class RowCall {
public:
  explicit RowCall(const BlockedProduct &product)
      : product_(product), args_(product.args, product.argCount) {}

  /// Rows [begin, end) of the product, into the block holding rows from
  /// `blockBegin`, then the reader on those rows.
  bool run(int64_t blockBegin, int64_t begin, int64_t end, std::string &error) {
    const BlockedProduct &p = product_;
    int64_t n = p.shape.n;
    if (!gemmRows(p.shape, p.a, p.b, p.block + (begin - blockBegin) * n, begin, end, error))
      return false;
    // The reader addresses C as [m, n]: the block stands where its rows do.
    // (An address before the block, never read below its first row.)
    auto at = reinterpret_cast<uintptr_t>(p.block) -
              static_cast<uintptr_t>(blockBegin * n) * sizeof(float);
    args_.setBuffer(p.blockArg, reinterpret_cast<void *>(at));
    args_.call(p.rowKernel, begin / p.rowsPerKernelRow, end / p.rowsPerKernelRow);
    return true;
  }

private:
  const BlockedProduct &product_;
  RowArguments args_;
};

/// How many of `team` threads share `rows` rows of the product: the most
/// whose shares (whole kernel rows of `perRow` product rows, split as
/// shareOf does) all get kGemmRowsPerThread rows of the product.
int64_t sharing(int64_t rows, int64_t perRow, int64_t team) {
  int64_t kernelRows = rows / perRow;
  for (int64_t threads = std::min(team, kernelRows); threads > 1; --threads)
    if (kernelRows / threads * perRow >= kGemmRowsPerThread)
      return threads;
  return 1;
}

/// Thread `thread`'s share of `rows` product rows from `begin` among
/// `threads`: whole kernel rows of `perRow` product rows.
std::pair<int64_t, int64_t> shareOf(int64_t begin, int64_t rows, int64_t perRow, int64_t thread,
                                    int64_t threads) {
  int64_t kernelRows = rows / perRow;
  return {begin + kernelRows * thread / threads * perRow,
          begin + kernelRows * (thread + 1) / threads * perRow};
}

} // namespace

int blockThreads(const BlockedProduct &product, int threads) {
  return static_cast<int>(sharing(product.blockRows, product.rowsPerKernelRow, threads));
}

bool canSplitBlocks(const BlockedProduct &product, int threads) {
  return blockThreads(product, threads) > 1;
}

bool runBlockedProduct(const BlockedProduct &product, int threads, std::string &error) {
  int64_t m = product.shape.m, block = product.blockRows;
  omp_set_num_threads(1); // oneDNN inside: one thread each.
  threads = blockThreads(product, threads);
  if (threads < 2) {
    RowCall call(product);
    for (int64_t begin = 0; begin < m; begin += block)
      if (!call.run(begin, begin, std::min(begin + block, m), error))
        return false;
    return true;
  }
  bool ok = true;
#pragma omp parallel num_threads(threads)
  {
    RowCall call(product);
    std::string mine;
    int64_t team = omp_get_num_threads(), thread = omp_get_thread_num();
    for (int64_t begin = 0; begin < m; begin += block) {
      int64_t rows = std::min(block, m - begin);
      // Every full block is split alike: each thread reuses its own rows of
      // the buffer, and no thread waits for another. A short last block is
      // split otherwise, once every thread is done with the block before.
      if (rows < block) {
#pragma omp barrier
      }
      // One thread per kGemmRowsPerThread rows of the block and per kernel
      // row, at least one (every thread of the team, for a full block:
      // blockThreads).
      int64_t shared = sharing(rows, product.rowsPerKernelRow, team);
      if (thread < shared && mine.empty()) {
        auto [first, last] = shareOf(begin, rows, product.rowsPerKernelRow, thread, shared);
        call.run(begin, first, last, mine);
      }
    }
    if (!mine.empty()) {
#pragma omp critical
      {
        ok = false;
        error = mine;
      }
    }
  }
  return ok;
}

} // namespace kiln::cpu
