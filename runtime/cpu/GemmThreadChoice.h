//===- GemmThreadChoice.h - One or all threads for a product ----*- C++ -*-===//
//
// Whether a matrix product should wake the sleeping OpenMP workers depends on
// its shape, on the machine and on what runs around it (a worker still
// spinning from the kernel before wakes cheaply), which no fixed threshold of
// multiply-adds captures: 2^24 left the MLP's 12.8M-MAC products on one
// thread, 2^22 made its 2M-MAC ones slower on two. So each GEMM step measures
// itself where it runs: after kWarmup runs on one thread, kTrials runs
// alternate between one thread and the session's, and the step keeps the
// faster by the fastest run of each (one thread unless all save 10%).
// Since the choice comes from timings, it must not change results: "all
// threads" is kiln's own split of the product (whole products of a batch,
// or blocks of at least 16 rows, each on one thread: cpu::gemm), which sums
// every element as one thread does, and a product it cannot split stays on
// one thread. A native bf16 product is computed in parts for the same reason
// (LowPrecisionGemm: one single-threaded oneDNN matmul per block, run in turn
// or side by side) and measured likewise; one too small to split keeps
// oneDNN's own threads (threadsForMacs).
// KILN_GEMM_PARALLEL_MACS set in the environment turns this off (the fixed
// threshold decides, cpu::threadsForMacs).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_CPU_GEMMTHREADCHOICE_H
#define KILN_RUNTIME_CPU_GEMMTHREADCHOICE_H

#include "runtime/cpu/Gemm.h"

#include <cmath>

namespace kiln::cpu {

class GemmThreadChoice {
public:
  static constexpr int kWarmup = 2;
  static constexpr int kTrials = 10;

  /// The threads for the product `shape`'s next run, given the session's
  /// (`available`): 1, `available` (only where gemm() can split it without
  /// changing its bits: the choice, made by timing, must not change results),
  /// or 0 (KILN_GEMM_PARALLEL_MACS: the fixed threshold decides).
  int next(int available, const GemmShape &shape) const;
  /// Records that a run on `threads` took `seconds`.
  void record(int threads, int available, double seconds);
  /// The threads chosen; 0 while measuring.
  int chosen() const { return chosen_; }
  /// Whether runs are still timed (not chosen, not the fixed threshold).
  bool measuring() const { return !chosen_ && !fixedGemmThreshold(); }

private:
  int runs_ = 0;
  int chosen_ = 0;
  double fastest_[2] = {INFINITY, INFINITY}; ///< Seconds: one thread, all.
};

} // namespace kiln::cpu

#endif // KILN_RUNTIME_CPU_GEMMTHREADCHOICE_H
