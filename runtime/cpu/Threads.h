//===- Threads.h - The OpenMP threads a session may use ---------*- C++ -*-===//
//
// GEMMs, convolutions and row-parallel kernels run on OpenMP threads. The
// process has a number of them (OMP_NUM_THREADS, which kiln --threads sets,
// and kiln sets to a smaller cgroup CPU quota's cores; else the cores it may
// run on), shared among the sessions that run at once
// (the replicas of an in-process data-parallel run).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_CPU_THREADS_H
#define KILN_RUNTIME_CPU_THREADS_H

namespace kiln::cpu {

/// The cores this process may run on (its CPU affinity), at least one.
int affinityCores();

/// The cores this process may use: its affinity's, or fewer where its
/// cgroup's CPU quota allows fewer (a container's CPU limit; CpuQuota.h).
int usableCores();

/// The process's threads (OMP_NUM_THREADS, else the cores), read once when
/// the library loads, before anything calls omp_set_num_threads (the GEMM
/// and convolution calls set it per call, so later reads would see theirs).
int processThreads();

/// The threads one session may use: the process's shared among the
/// sessions that run at once, at least one.
int availableThreads();

/// `sessions` sessions of this process run at once from now on (the
/// replicas of a data-parallel run, one thread each): each gets its share of
/// the threads, so the GEMMs and row-parallel kernels of one do not take
/// the cores of another.
void shareThreadsAmong(int sessions);

} // namespace kiln::cpu

#endif // KILN_RUNTIME_CPU_THREADS_H
