//===- ArtifactFileTest.cpp - The artifact file layout --------------------===//

#include "runtime/artifact/ArtifactFile.h"

#include "test/unit/RuntimeTestSupport.h"

#include <gtest/gtest.h>

using namespace kiln::artifact;
using namespace kiln::test;

namespace {

// Tests that the checksum is FNV-1a 64 (published test vectors).
TEST(ArtifactFileTest, Fnv1a64MatchesReferenceVectors) {
  EXPECT_EQ(fnv1a64("", 0), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a64("a", 1), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(fnv1a64("foobar", 6), 0x85944171f73967e8ull);
}

// Tests that the file is the FlatBuffer then length and checksum, both
// little-endian.
TEST(ArtifactFileTest, WritesFlatBufferThenFooter) {
  TemporaryDirectory dir;
  std::vector<uint8_t> flatbuffer = {1, 2, 3, 4, 5};
  std::string error;
  ASSERT_TRUE(writeArtifactFile(dir.file("a.kiln"), flatbuffer.data(),
                                flatbuffer.size(), error))
      << error;
  std::vector<uint8_t> file = readFile(dir.file("a.kiln"));
  ASSERT_EQ(file.size(), flatbuffer.size() + kFooterSize);
  EXPECT_TRUE(std::equal(flatbuffer.begin(), flatbuffer.end(), file.begin()));
  const uint8_t *footer = file.data() + flatbuffer.size();
  EXPECT_EQ(footer[0], 5);
  EXPECT_TRUE(
      std::all_of(footer + 1, footer + 8, [](uint8_t b) { return !b; }));
  ArtifactFooter decoded = decodeArtifactFooter(footer);
  EXPECT_EQ(decoded.flatbufferSize, 5u);
  EXPECT_EQ(decoded.checksum, fnv1a64(flatbuffer.data(), flatbuffer.size()));
  EXPECT_EQ(footer[8], uint8_t(decoded.checksum));
  // Nothing but the artifact is left in the directory.
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"a.kiln"});
}

// Tests that writing replaces an existing file whole.
TEST(ArtifactFileTest, ReplacesAnExistingFile) {
  TemporaryDirectory dir;
  writeFile(dir.file("a.kiln"), std::vector<uint8_t>(1000, 0xAA));
  std::vector<uint8_t> flatbuffer = {9, 9};
  std::string error;
  ASSERT_TRUE(writeArtifactFile(dir.file("a.kiln"), flatbuffer.data(),
                                flatbuffer.size(), error));
  EXPECT_EQ(readFile(dir.file("a.kiln")).size(), 2 + kFooterSize);
}

// Tests that a failed write names the file, says why and leaves nothing.
TEST(ArtifactFileTest, FailedWriteNamesTheFileAndLeavesNothing) {
  TemporaryDirectory dir;
  std::string path = dir.file("missing/a.kiln");
  std::vector<uint8_t> flatbuffer = {1};
  std::string error;
  EXPECT_FALSE(writeArtifactFile(path, flatbuffer.data(), 1, error));
  EXPECT_EQ(error, path + ": error: cannot write: No such file or directory");
  EXPECT_TRUE(dir.entries().empty());
}

} // namespace
