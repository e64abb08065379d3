//===- ThreadChoice.h - One or all threads for a step -----------*- C++ -*-===//
//
// Whether a matrix product or a generated kernel should wake the sleeping
// OpenMP workers depends on its size, on the machine and on what runs around
// it (a worker still spinning from the step before wakes cheaply), which no
// fixed threshold captures: 2^24 multiply-adds left the MLP's 12.8M-MAC
// products on one thread, 2^22 made its 2M-MAC ones slower on two; a kernel
// of 65,536 iterations gains on two threads when each iteration reads nine
// tensors and loses when it reads one. So each such step measures itself
// where it runs: in a window of runs (kFirstTrials the first time, kTrials
// later) it alternates between one thread and the session's, and keeps the
// faster by the fastest run of each (one thread unless all save 10%).
//
// In context. What a step costs on one thread depends on where its inputs
// were computed: wide&deep's ReLU gradient (65,536 elements) takes 10 us on
// one thread after steps that all ran on that thread, and 36 us after a
// product split over two, whose rows it must then fetch from the other
// core's cache (20 us split the same way; its bf16 train step). Windows where every step
// alternated at once (until 2026-12-06) timed each step's one-thread runs
// after one-thread producers, chose one thread for such kernels, and left
// the MLP, wide&deep and the transformer 5-7% slower than every split step
// on all threads. So the steps take their windows in turn: step position p
// (stagger(), the order of the program's measured steps) is in group
// p mod kGroups, group g's first window starts at run
// kWarmup + g * kFirstTrials (short windows, so that all end by run 26 and a
// run of 50 steps is mostly past them), and meanwhile the other steps keep
// their choice, or, before their own first window, all threads (the usual
// winner). Neighbouring steps are in different groups, so each is timed
// after and before its neighbours as they will run; the program's last
// step too, which runs just before its first (ResolvedProgram).
//
// A machine shared with other work can mislead one window (a neighbour busy
// on the second core makes every split run slow: a transformer's products
// all chose one thread and its steps took twice as long), so each step
// measures again in a later window starting kRetrialFactor times later than
// its last one ended (group 0: runs 2, 32, 168, 712, ...; group 3: 20,
// 104, 456, ...): a choice is never older than about three quarters of the
// run, at the price of the trial runs, half of them on the slower choice.
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
#include <cstddef>

namespace kiln::cpu {

class ThreadChoice {
public:
  static constexpr int kWarmup = 2;
  static constexpr int kFirstTrials = 6;
  static constexpr int kTrials = 10;
  static constexpr int kGroups = 4;
  static constexpr int kRetrialFactor = 4;
  /// The run by which every step has had its first window.
  static constexpr int kFirstWindowsEnd = kWarmup + kGroups * kFirstTrials;

  /// Places the step at `position` among the program's measured steps: its
  /// group's windows (call before the first next()).
  void stagger(int position) { window_ = kWarmup + (position % kGroups) * kFirstTrials; }
  /// The group of the measured step at `position` of a program's `count`:
  /// position mod kGroups, but the last step's differs from the first's too.
  static int groupOf(size_t position, size_t count);

  /// The threads for the step's next run (call once per run), given the
  /// session's (`available`) and whether the step can be split over them
  /// without changing its bits: 1 or `available` (`available` before its
  /// first window). A step that cannot be split, or a session of one
  /// thread, is settled on one at once (nothing to measure).
  int next(int available, bool splittable);
  /// Whether the run next() just gave is a trial, to be timed and recorded.
  bool measuring() const { return trial_; }
  /// Records that the trial run on `threads` took `seconds`.
  void record(int threads, int available, double seconds);
  /// The threads chosen by the last window; 0 before the first ends.
  int chosen() const { return chosen_; }

private:
  int windowLength() const { return windows_ ? kTrials : kFirstTrials; }

  long runs_ = 0;         ///< Runs next() gave.
  long window_ = kWarmup; ///< The run the current or next window starts at.
  int windows_ = 0;       ///< Windows ended.
  bool trial_ = false;
  int chosen_ = 0;
  bool settled_ = false; ///< One thread for good: nothing to measure.
  double fastest_[2] = {INFINITY, INFINITY}; ///< Seconds: one thread, all.
};

} // namespace kiln::cpu

#endif // KILN_RUNTIME_CPU_THREADCHOICE_H
