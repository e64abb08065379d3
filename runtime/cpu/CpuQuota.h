//===- CpuQuota.h - The cores a cgroup's CPU quota allows -------*- C++ -*-===//
//
// A container's CPU limit (Kubernetes' `resources.limits.cpu`, `docker run
// --cpus`) is a cgroup CPU quota: the process sees every core of the host
// in its affinity mask but may use only the quota's share of their time.
// Threads beyond that share take turns, and every parallel GEMM or kernel
// waits for its slowest thread.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_CPU_CPUQUOTA_H
#define KILN_RUNTIME_CPU_CPUQUOTA_H

#include <string>

namespace kiln::cpu {

/// The cores this process's cgroup CPU quota allows, rounded up (a quota of
/// 1.5 cores: 2), the smallest over its cgroup and the cgroups above it; 0
/// without a quota or where none can be read. cgroup v2 (`cpu.max`) or v1
/// (`cpu.cfs_quota_us` / `cpu.cfs_period_us`), from /proc/self/cgroup and
/// the hierarchies under /sys/fs/cgroup.
int cgroupCpuLimit();

/// The same, for the hierarchies under `root` and the text of
/// /proc/self/cgroup `selfCgroup` (for tests).
int cgroupCpuLimit(const std::string &root, const std::string &selfCgroup);

} // namespace kiln::cpu

#endif // KILN_RUNTIME_CPU_CPUQUOTA_H
