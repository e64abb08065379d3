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
// fastest run of each (one thread unless all save 10%). A machine shared
// with other work can mislead one such window (a neighbour busy on the
// second core makes every split run slow: a transformer's products all
// chose one thread and its steps took twice as long), so the step measures
// again in a later window, each starting kRetrialFactor times later than
// the one before ended (runs 2, 88, 432, 1808, ...): a choice is never
// older than about three quarters of the run, at the price of the trial
// runs (40 of the first 108, 60 of the first 452), half of them on the
// slower choice.
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
  static constexpr int kRetrialFactor = 4;

  /// The threads for the step's next run (call once per run), given the
  /// session's (`available`) and whether the step can be split over them
  /// without changing its bits: 1 or `available`. A step that cannot be
  /// split, or a session of one thread, is settled on one at once (nothing
  /// to measure).
  int next(int available, bool splittable);
  /// Whether the run next() just gave is a trial, to be timed and recorded.
  bool measuring() const { return trial_; }
  /// Records that the trial run on `threads` took `seconds`.
  void record(int threads, int available, double seconds);
  /// The threads chosen by the last window; 0 before the first ends.
  int chosen() const { return chosen_; }

private:
  long runs_ = 0;         ///< Runs next() gave.
  long window_ = kWarmup; ///< The run the current or next window starts at.
  bool trial_ = false;
  int chosen_ = 0;
  bool settled_ = false; ///< One thread for good: nothing to measure.
  double fastest_[2] = {INFINITY, INFINITY}; ///< Seconds: one thread, all.
};

} // namespace kiln::cpu

#endif // KILN_RUNTIME_CPU_THREADCHOICE_H
