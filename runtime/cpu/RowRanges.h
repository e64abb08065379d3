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

namespace kiln::cpu {

/// The OpenMP threads one session may use: the process's (OMP_NUM_THREADS,
/// else the CPUs, read once, before anything calls omp_set_num_threads: the
/// GEMM and convolution calls set it per call, so later reads would see
/// theirs) shared among the sessions that run at once, at least one.
int availableThreads();

/// `sessions` sessions of this process run at once from now on (the
/// replicas of a data-parallel run, one thread each): each gets its share of
/// the threads, so the GEMMs and row-parallel kernels of one do not take
/// the cores of another.
void shareThreadsAmong(int sessions);

/// How many threads a kernel of `rows` rows runs on: the OpenMP threads
/// (OMP_NUM_THREADS), at most one per row.
int rowThreads(int64_t rows);

/// Calls `rowKernel` once per thread with `args` (its `count` buffer
/// addresses) followed by pointers to the thread's first and past-the-end
/// row, the ranges together covering [0, rows).
void runRowRanges(KernelFunction rowKernel, void *const *args, size_t count, int64_t rows);

} // namespace kiln::cpu

#endif // KILN_RUNTIME_CPU_ROWRANGES_H
