//===- Threads.cpp - The OpenMP threads a session may use -----------------===//

#include "runtime/cpu/Threads.h"

#include "runtime/cpu/CpuQuota.h"

#include <omp.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <thread>

namespace kiln::cpu {
namespace {

std::atomic<int> sharingSessions{1};

int openMpThreads() {
  static const int threads = omp_get_max_threads();
  return threads;
}

/// Read when the library loads, before any code calls omp_set_num_threads
/// (a GEMM below the parallel threshold sets 1 for its call).
[[maybe_unused]] const int kReadAtLoad = openMpThreads();

} // namespace

int affinityCores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0)
    return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

int usableCores() {
  static const int quota = cgroupCpuLimit(); // Read once: it is a file or two.
  int cores = affinityCores();
  return quota > 0 ? std::min(cores, quota) : cores;
}

int processThreads() { return openMpThreads(); }

int availableThreads() {
  return std::max(1, processThreads() / sharingSessions.load(std::memory_order_relaxed));
}

void shareThreadsAmong(int sessions) {
  sharingSessions.store(std::max(1, sessions), std::memory_order_relaxed);
}

} // namespace kiln::cpu
