//===- RuntimeDirectoriesTest.cpp - mkdir -p and the writability probe ----===//

#include "runtime/support/Directories.h"

#include "test/unit/RuntimeTestSupport.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <sys/stat.h>

namespace kiln {
namespace {

using test::TemporaryDirectory;

bool isDirectory(const std::string &path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

// Tests that missing parents are created, and an existing path is fine.
TEST(RuntimeDirectoriesTest, CreatesEveryLevel) {
  TemporaryDirectory tmp;
  std::string nested = tmp.file("a/b/c");
  EXPECT_EQ(makeDirectories(nested), 0);
  EXPECT_TRUE(isDirectory(nested));
  EXPECT_EQ(makeDirectories(nested + "/"), 0);
  ::rmdir(nested.c_str());
  ::rmdir(tmp.file("a/b").c_str());
}

// Tests that a file in the way is ENOTDIR, for the probe too.
TEST(RuntimeDirectoriesTest, FileInTheWayIsNotADirectory) {
  TemporaryDirectory tmp;
  test::writeFile(tmp.file("afile"), {1});
  EXPECT_EQ(makeDirectories(tmp.file("afile")), ENOTDIR);
  EXPECT_EQ(makeDirectories(tmp.file("afile/below")), ENOTDIR);
  EXPECT_EQ(probeWritableDirectory(tmp.file("afile/below")), ENOTDIR);
}

// Tests that the probe succeeds in a writable directory and leaves no file.
TEST(RuntimeDirectoriesTest, ProbeLeavesNothing) {
  TemporaryDirectory tmp;
  EXPECT_EQ(probeWritableDirectory(tmp.file("out")), 0);
  EXPECT_TRUE(isDirectory(tmp.file("out")));
  EXPECT_EQ(::rmdir(tmp.file("out").c_str()), 0) << "the probe left a file behind";
}

// Tests that a read-only directory fails the probe (root writes anyway).
TEST(RuntimeDirectoriesTest, ReadOnlyDirectoryFailsTheProbe) {
  if (::geteuid() == 0)
    GTEST_SKIP() << "root ignores directory permissions";
  TemporaryDirectory tmp;
  std::string dir = tmp.file("ro");
  ASSERT_EQ(::mkdir(dir.c_str(), 0500), 0);
  EXPECT_EQ(probeWritableDirectory(dir), EACCES);
  ::rmdir(dir.c_str());
}

} // namespace
} // namespace kiln
