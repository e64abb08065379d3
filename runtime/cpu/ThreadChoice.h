//===- ThreadChoice.h - One or all threads for a step -----------*- C++ -*-===//
//
// Whether a matrix product or a generated kernel should wake the sleeping
// OpenMP workers depends on its size, on the machine and on what runs around
// it (a worker still spinning from the step before wakes cheaply), which no
// fixed threshold captures: 2^24 multiply-adds left the MLP's 12.8M-MAC
// products on one thread, 2^22 made its 2M-MAC ones slower on two; a kernel
// of 65,536 iterations gains on two threads when each iteration reads nine
// tensors and loses when it reads one. So each such step measures itself
// where it runs: after kWarmup runs on one thread, kTrials runs alternate
// between one thread and the session's, and the step keeps the faster by the
// fastest run of each (one thread unless all save 10%).
//
// Since the choice comes from timings, it must not change results. "All
// threads" is kiln's own split: for a product (cpu::gemm) whole products of a
// batch, or blocks of at least 16 rows, each on one thread, which sums every
// element as one thread does; a native bf16 product computed in parts
// (LowPrecisionGemm: one single-threaded oneDNN matmul per block); for a
// kernel compiled with a row entry (kiln-split-rows) a range of its
// independent rows per thread (runRowRanges). A step that cannot be split
// stays on one thread. KILN_GEMM_PARALLEL_MACS set in the environment turns
// the products' measuring off (the fixed threshold decides,
// cpu::threadsForMacs).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_CPU_THREADCHOICE_H
#define KILN_RUNTIME_CPU_THREADCHOICE_H

#include <cmath>

namespace kiln::cpu {

class ThreadChoice {
public:
  static constexpr int kWarmup = 2;
  static constexpr int kTrials = 20;

  /// The threads for the step's next run, given the session's (`available`)
  /// and whether the step can be split over them without changing its bits:
  /// 1 or `available`. A step that cannot be split, or a session of one
  /// thread, is settled on one at once (nothing to measure).
  int next(int available, bool splittable);
  /// Records that a run on `threads` took `seconds`.
  void record(int threads, int available, double seconds);
  /// The threads chosen; 0 while measuring.
  int chosen() const { return chosen_; }
  /// Whether runs are still timed.
  bool measuring() const { return !chosen_; }

private:
  int runs_ = 0;
  int chosen_ = 0;
  double fastest_[2] = {INFINITY, INFINITY}; ///< Seconds: one thread, all.
};

} // namespace kiln::cpu

#endif // KILN_RUNTIME_CPU_THREADCHOICE_H
