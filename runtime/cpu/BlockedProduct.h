//===- BlockedProduct.h - A product computed by blocks of rows --*- C++ -*-===//
//
// The artifact's BlockedGemm: C = A x B computed a block of rows at a time
// into one block's buffer, each block handed to the row entry of the kernel
// that reads C before the next block is computed, each thread's rows of the
// block while they are still in its cache. A weight gradient's optimizer
// update (C is never whole in memory), or a product's elementwise epilogue
// (one block: all of C).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_CPU_BLOCKEDPRODUCT_H
#define KILN_RUNTIME_CPU_BLOCKEDPRODUCT_H

#include "runtime/cpu/Gemm.h"
#include "runtime/cpu/KernelLibrary.h"

#include <cstddef>
#include <string>

namespace kiln::cpu {

struct BlockedProduct {
  GemmShape shape;          ///< One f32 product (batch 1).
  const float *a = nullptr;
  const float *b = nullptr;
  float *block = nullptr;   ///< blockRows x n floats.
  int64_t blockRows = 0;
  KernelFunction rowKernel = nullptr; ///< The reader's row entry.
  void *const *args = nullptr;        ///< Its buffer addresses...
  size_t argCount = 0;
  size_t blockArg = 0;      ///< ...of which this one is C, set per block.
  /// The product's rows each row of `rowKernel` covers (C's leading
  /// dimensions past the first folded into its rows); divides blockRows.
  int64_t rowsPerKernelRow = 1;
};

/// How many of `threads` threads share each full block: at most one per
/// kGemmRowsPerThread of its rows (the same bits as on one thread) and per
/// row of the kernel.
int blockThreads(const BlockedProduct &product, int threads);

/// Whether more than one thread can share each full block.
bool canSplitBlocks(const BlockedProduct &product, int threads);

/// Runs `product` on blockThreads(product, threads) threads (1: this one).
/// A short last block is split over as many as get kGemmRowsPerThread of
/// its rows (and a kernel row), else computed by one. False, with `error` set, when the GEMM
/// library fails.
bool runBlockedProduct(const BlockedProduct &product, int threads, std::string &error);

} // namespace kiln::cpu

#endif // KILN_RUNTIME_CPU_BLOCKEDPRODUCT_H
