//===- RuntimeCpuQuotaTest.cpp - cgroup CPU quotas as cores ---------------===//
//
// cpu::cgroupCpuLimit on hierarchies written into a temporary folder as the
// kernel lays them out (kiln-cpu-quota.test runs kiln in a real cgroup).
//
//===----------------------------------------------------------------------===//

#include "runtime/cpu/CpuQuota.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;

class CpuQuotaTest : public ::testing::Test {
protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("kiln-cpu-quota-" + std::to_string(getpid()));
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  /// Writes `text` to `relative` under the root, folders included.
  void write(const std::string &relative, const std::string &text) {
    fs::path path = root_ / relative;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text << "\n";
  }

  int limit(const std::string &selfCgroup) {
    return kiln::cpu::cgroupCpuLimit(root_.string(), selfCgroup);
  }

  fs::path root_;
};

TEST_F(CpuQuotaTest, ReadsCgroupV2CpuMaxRoundedUp) {
  write("cpu.max", "max 100000");
  EXPECT_EQ(limit("0::/\n"), 0);
  write("kubepods/pod1/cpu.max", "150000 100000"); // 1.5 cores: 2 threads.
  EXPECT_EQ(limit("0::/kubepods/pod1\n"), 2);
  write("kubepods/cpu.max", "100000 100000"); // A parent's limit applies too.
  EXPECT_EQ(limit("0::/kubepods/pod1\n"), 1);
}

TEST_F(CpuQuotaTest, ReadsCgroupV1CfsQuota) {
  std::string self = "12:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n1:name=systemd:/\n";
  write("cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "-1");
  write("cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000");
  EXPECT_EQ(limit(self), 0);
  write("cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "50000"); // Half a core: 1.
  EXPECT_EQ(limit(self), 1);
  write("cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "400000");
  EXPECT_EQ(limit(self), 4);
  // The hierarchy mounted as "cpu" alone (this line names only cpu).
  write("cpu/job/cpu.cfs_quota_us", "300000");
  write("cpu/job/cpu.cfs_period_us", "100000");
  EXPECT_EQ(limit("1:cpu:/job\n"), 3);
}

TEST_F(CpuQuotaTest, ReadsV2BesideV1Hierarchies) {
  write("unified/job/cpu.max", "200000 100000");
  EXPECT_EQ(limit("1:cpu:/\n0::/job\n"), 2);
}

TEST_F(CpuQuotaTest, NoQuotaWhereNothingCanBeRead) {
  EXPECT_EQ(limit(""), 0);
  EXPECT_EQ(limit("garbage without colons\n0::/missing\n3:cpu:/missing\n"), 0);
  write("cpu.max", "lots 100000");
  EXPECT_EQ(limit("0::/\n"), 0);
  write("cpu.max", "100000 0");
  EXPECT_EQ(limit("0::/\n"), 0);
  write("cpu/cpu.cfs_quota_us", "99999999999999999999999");
  write("cpu/cpu.cfs_period_us", "100000");
  EXPECT_EQ(limit("2:cpu:/\n"), 0);
}

} // namespace
