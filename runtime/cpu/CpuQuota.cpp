//===- CpuQuota.cpp - The cores a cgroup's CPU quota allows ---------------===//

#include "runtime/cpu/CpuQuota.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <vector>

namespace kiln::cpu {
namespace {

/// The first line of `path`, or empty.
std::string firstLine(const std::string &path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

/// ceil(quota / period) for a positive quota and period, else 0.
int coresOf(long long quota, long long period) {
  if (quota <= 0 || period <= 0)
    return 0;
  return static_cast<int>(std::min<long long>((quota + period - 1) / period, 1 << 20));
}

/// v2: "QUOTA PERIOD" or "max PERIOD".
int coresOfCpuMax(const std::string &dir) {
  std::istringstream text(firstLine(dir + "/cpu.max"));
  std::string quota;
  long long period = 0;
  if (!(text >> quota >> period) || quota == "max")
    return 0;
  try {
    return coresOf(std::stoll(quota), period);
  } catch (...) {
    return 0;
  }
}

/// v1: cpu.cfs_quota_us (-1: none) over cpu.cfs_period_us.
int coresOfCfs(const std::string &dir) {
  try {
    std::string quota = firstLine(dir + "/cpu.cfs_quota_us");
    std::string period = firstLine(dir + "/cpu.cfs_period_us");
    if (quota.empty() || period.empty())
      return 0;
    return coresOf(std::stoll(quota), std::stoll(period));
  } catch (...) {
    return 0;
  }
}

/// `smallest` = the smaller of the two limits (0: none).
void keepSmaller(int &smallest, int cores) {
  if (cores > 0)
    smallest = smallest ? std::min(smallest, cores) : cores;
}

/// The smallest limit `coresAt` finds in `mount` + `path` and the
/// directories above it up to `mount`; 0 without any.
template <typename CoresAt>
int smallestUpTo(const std::string &mount, std::string path, CoresAt coresAt) {
  int smallest = 0;
  while (true) {
    keepSmaller(smallest, coresAt(mount + path));
    if (path.empty() || path == "/")
      break;
    size_t slash = path.find_last_of('/');
    path = slash == std::string::npos ? "" : path.substr(0, slash);
  }
  return smallest;
}

} // namespace

int cgroupCpuLimit(const std::string &root, const std::string &selfCgroup) {
  int smallest = 0;
  std::istringstream lines(selfCgroup);
  std::string line;
  while (std::getline(lines, line)) {
    // "ID:CONTROLLERS:PATH"; v2's is "0::PATH".
    size_t first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos)
      continue;
    std::string controllers = line.substr(first + 1, second - first - 1);
    std::string path = line.substr(second + 1);
    if (controllers.empty()) {
      // Mounted at the root alone, or beside the v1 hierarchies.
      for (const char *mount : {"", "/unified"})
        keepSmaller(smallest, smallestUpTo(root + mount, path, coresOfCpuMax));
      continue;
    }
    std::vector<std::string> names;
    std::istringstream list(controllers);
    for (std::string name; std::getline(list, name, ',');)
      names.push_back(name);
    if (std::find(names.begin(), names.end(), "cpu") == names.end())
      continue;
    // The v1 cpu hierarchy, mounted under its controllers' names.
    for (const std::string &mount : {"/" + controllers, std::string("/cpu"),
                                     std::string("/cpu,cpuacct")})
      keepSmaller(smallest, smallestUpTo(root + mount, path, coresOfCfs));
  }
  return smallest;
}

int cgroupCpuLimit() {
  std::ifstream in("/proc/self/cgroup");
  std::stringstream text;
  text << in.rdbuf();
  return cgroupCpuLimit("/sys/fs/cgroup", text.str());
}

} // namespace kiln::cpu
