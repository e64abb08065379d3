//===- RuntimeStagedFileTest.cpp - Files written whole or not at all ------===//

#include "runtime/support/StagedFile.h"

#include "test/unit/RuntimeTestSupport.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>

using namespace kiln;
using namespace kiln::test;

namespace {

std::vector<uint8_t> bytesOf(const std::string &text) {
  return {text.begin(), text.end()};
}

TEST(RuntimeStagedFileTest, WritesThePiecesInOrder) {
  TemporaryDirectory dir;
  std::string error;
  ASSERT_TRUE(
      writeFileAtomically(dir.file("f"), {{"ab", 2}, {"", 0}, {"c", 1}}, error))
      << error;
  EXPECT_EQ(readFile(dir.file("f")), bytesOf("abc"));
  EXPECT_EQ(dir.entries().size(), 1u);
}

TEST(RuntimeStagedFileTest, NothingAppearsBeforeCommit) {
  TemporaryDirectory dir;
  writeFile(dir.file("f"), bytesOf("old"));
  std::string error;
  {
    StagedFile staged;
    ASSERT_TRUE(staged.stage(dir.file("f"), {{"new", 3}}, error));
    EXPECT_EQ(readFile(dir.file("f")), bytesOf("old"));
    EXPECT_EQ(dir.entries().size(), 2u); // The destination and the temporary.
  }
  // Dropped uncommitted: the temporary is gone, the destination untouched.
  EXPECT_EQ(readFile(dir.file("f")), bytesOf("old"));
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"f"});

  StagedFile staged;
  ASSERT_TRUE(staged.stage(dir.file("f"), {{"new", 3}}, error));
  ASSERT_TRUE(staged.commit(error)) << error;
  EXPECT_EQ(readFile(dir.file("f")), bytesOf("new"));
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"f"});
}

TEST(RuntimeStagedFileTest, MovedStagedFilesCommitOnce) {
  TemporaryDirectory dir;
  std::string error;
  StagedFile first;
  ASSERT_TRUE(first.stage(dir.file("f"), {{"x", 1}}, error));
  StagedFile second = std::move(first);
  ASSERT_TRUE(second.commit(error)) << error;
  EXPECT_FALSE(second.commit(error));
  EXPECT_EQ(error, dir.file("f") + ": error: cannot write: nothing was staged");
  EXPECT_EQ(readFile(dir.file("f")), bytesOf("x"));
}

TEST(RuntimeStagedFileTest, CreatesFilesWithTheUmaskApplied) {
  TemporaryDirectory dir;
  mode_t previous = ::umask(022);
  std::string error;
  ASSERT_TRUE(writeFileAtomically(dir.file("f"), {{"x", 1}}, error));
  ::umask(previous);
  struct stat info;
  ASSERT_EQ(::stat(dir.file("f").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0644u);
}

TEST(RuntimeStagedFileTest, FailuresNameTheDestination) {
  TemporaryDirectory dir;
  std::string error;
  EXPECT_FALSE(writeFileAtomically(dir.file("no/f"), {{"x", 1}}, error));
  EXPECT_EQ(error, dir.file("no/f") + ": error: cannot write: No such file or "
                                      "directory");
  // Renaming over a directory fails at commit; the temporary goes away.
  ASSERT_EQ(::mkdir(dir.file("d").c_str(), 0755), 0);
  ::close(::open(dir.file("d/inside").c_str(), O_CREAT | O_WRONLY, 0644));
  StagedFile staged;
  ASSERT_TRUE(staged.stage(dir.file("d"), {{"x", 1}}, error)) << error;
  EXPECT_FALSE(staged.commit(error));
  EXPECT_EQ(error.rfind(dir.file("d") + ": error: cannot write: ", 0), 0u)
      << error;
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"d"});
  ::unlink(dir.file("d/inside").c_str());
  ::rmdir(dir.file("d").c_str());
}

} // namespace
