//===- CheckpointCorruptionTest.cpp - Damaged checkpoints are refused -----===//
//
// Each case damages one file of a good checkpoint and checks the one-line
// error naming the file and the tensor, field or offset at fault.
//
//===----------------------------------------------------------------------===//

#include "runtime/checkpoint/Checkpoint.h"

#include "test/unit/CheckpointTestSupport.h"

#include <gtest/gtest.h>

using namespace kiln::checkpoint;
using namespace kiln::test;

namespace {

class CheckpointCorruptionTest : public ::testing::Test {
protected:
  void SetUp() override {
    for (size_t i = 0; i < w.size(); ++i)
      w[i] = float(i) * 0.5f;
    SaveRequest request{
        scratch.path(), "mlp", 7, {{"batches_consumed", 7}}, {}};
    request.tensors = {{"w", DType::F32, {2, 3}, w.data(), 24},
                       {"b", DType::I64, {3}, b.data(), 24}};
    std::string error;
    ASSERT_TRUE(saveCheckpoint(request, error)) << error;
    shard = scratch.file("ckpt-7/model-00000-of-00001.safetensors");
    manifest = scratch.file("ckpt-7/manifest.json");
    std::string bytes = readText(shard);
    for (int i = 0; i < 8; ++i)
      dataStart |= uint64_t(uint8_t(bytes[size_t(i)])) << (8 * i);
    dataStart += 8;
  }

  /// The error loading the checkpoint gives; it must be one line.
  std::string loadError() {
    Checkpoint loaded;
    std::string error;
    EXPECT_FALSE(loadCheckpoint(scratch.path(), loaded, error));
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
    return error;
  }

  /// Checks that `error` begins with `prefix`: nlohmann's wording goes on.
  static void expectStartsWith(const std::string &error,
                               const std::string &prefix) {
    EXPECT_EQ(error.substr(0, prefix.size()), prefix) << error;
  }

  /// Replaces the first `from` in the file at `path` with `to`.
  void replace(const std::string &path, const std::string &from,
               const std::string &to) {
    std::string text = readText(path);
    size_t at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    writeText(path, text.replace(at, from.size(), to));
  }

  ScratchDirectory scratch;
  std::vector<float> w = std::vector<float>(6);
  std::vector<int64_t> b = {1, -2, 3};
  std::string shard, manifest;
  uint64_t dataStart = 0;
};

TEST_F(CheckpointCorruptionTest, TruncatedShard) {
  std::string bytes = readText(shard);
  writeText(shard, bytes.substr(0, bytes.size() - 1));
  EXPECT_EQ(loadError(),
            shard +
                ": error: tensor 'b': data_offsets [24, 48] are beyond "
                "the data (47 bytes from byte " +
                std::to_string(dataStart) + ")");
  writeText(shard, bytes.substr(0, 5));
  EXPECT_EQ(loadError(), shard + ": error: the file is 5 bytes, too short for "
                                 "the 8-byte header length");
}

TEST_F(CheckpointCorruptionTest, FlippedDataByte) {
  std::string bytes = readText(shard);
  bytes[size_t(dataStart) + 30] ^= 0x10;
  writeText(shard, bytes);
  std::string error = loadError();
  std::string prefix = shard +
                       ": error: tensor 'b': checksum mismatch at bytes " +
                       std::to_string(dataStart + 24) + ".." +
                       std::to_string(dataStart + 48) + " (fnv1a64 ";
  EXPECT_EQ(error.substr(0, prefix.size()), prefix) << error;
  EXPECT_NE(error.find("): the file is corrupt"), std::string::npos) << error;
}

TEST_F(CheckpointCorruptionTest, GarbageHeaderLength) {
  std::string bytes = readText(shard);
  for (int i = 0; i < 8; ++i)
    bytes[size_t(i)] = '\xff';
  writeText(shard, bytes);
  EXPECT_EQ(loadError(), shard +
                             ": error: header length "
                             "18446744073709551615 (at byte 0) is beyond "
                             "the file's size (" +
                             std::to_string(bytes.size()) + " bytes)");
}

TEST_F(CheckpointCorruptionTest, MalformedHeaderJson) {
  replace(shard, "\"shape\":[2,3]", "\"shape\":[2;3]");
  std::string bytes = readText(shard);
  expectStartsWith(loadError(),
                   shard + ": error: header is not JSON: at byte " +
                       std::to_string(bytes.find("[2;3]") + 2) +
                       ": syntax error while parsing array - invalid literal");
}

TEST_F(CheckpointCorruptionTest, UnknownDTypeInShard) {
  replace(shard, "\"dtype\":\"F32\"", "\"dtype\":\"F64\"");
  EXPECT_EQ(loadError(), shard + ": error: tensor 'w': unknown dtype 'F64' "
                                 "(expected F32, F16, BF16, I32, I64 or BOOL)");
}

TEST_F(CheckpointCorruptionTest, ShapeDisagreesWithOffsets) {
  replace(shard, "\"shape\":[2,3]", "\"shape\":[3,3]");
  EXPECT_EQ(loadError(), shard + ": error: tensor 'w': F32 [3, 3] needs 36 "
                                 "bytes, data_offsets [0, 24] hold 24");
}

TEST_F(CheckpointCorruptionTest, ShardDisagreesWithManifest) {
  replace(shard, "\"shape\":[2,3]", "\"shape\":[6,1]");
  EXPECT_EQ(loadError(), shard + ": error: tensor 'w': is F32 [6, 1] here, "
                                 "the manifest says F32 [2, 3]");
}

TEST_F(CheckpointCorruptionTest, TensorMissingFromShard) {
  replace(shard, "\"b\":", "\"c\":");
  EXPECT_EQ(loadError(), shard + ": error: tensor 'c' is not in the manifest");
}

TEST_F(CheckpointCorruptionTest, ShardMissing) {
  ::unlink(shard.c_str());
  EXPECT_EQ(loadError(),
            shard + ": error: cannot read: No such file or directory");
}

TEST_F(CheckpointCorruptionTest, ManifestNotJson) {
  replace(manifest, "\"step\":7", "\"step\":7x");
  std::string text = readText(manifest);
  expectStartsWith(loadError(),
                   manifest + ": error: manifest is not JSON: at byte " +
                       std::to_string(text.find("7x") + 1) +
                       ": syntax error while parsing object - invalid literal");
}

TEST_F(CheckpointCorruptionTest, ManifestFields) {
  std::string good = readText(manifest);
  auto errorWith = [&](const std::string &from, const std::string &to) {
    writeText(manifest, good);
    replace(manifest, from, to);
    return loadError();
  };
  std::string prefix = manifest + ": error: ";
  EXPECT_EQ(errorWith("\"step\":7,", ""), prefix + "missing field 'step'");
  EXPECT_EQ(errorWith("\"step\":7", "\"step\":\"7\""),
            prefix + "field 'step' is a string, expected an integer");
  EXPECT_EQ(errorWith("\"step\":7", "\"step\":-4"),
            prefix + "field 'step' is -4, expected 0 or more");
  // The directory (ckpt-7) names the step too.
  EXPECT_EQ(errorWith("\"step\":7", "\"step\":3"),
            prefix + "field 'step' is 3 but the checkpoint's directory is ckpt-7");
  EXPECT_EQ(errorWith("kiln-checkpoint", "other"),
            prefix + "format is 'other', expected 'kiln-checkpoint'");
  EXPECT_EQ(errorWith("\"version\":1", "\"version\":2"),
            prefix + "version 2 is not supported (this build reads version 1)");
  EXPECT_EQ(errorWith("\"batches_consumed\":7", "\"batches_consumed\":0.5"),
            prefix + "data.batches_consumed is a number, expected an integer");
  EXPECT_EQ(errorWith("\"model-00000", "\"../model-00000"),
            prefix + "shards[0] is not a file name in the checkpoint's "
                     "directory");
  EXPECT_EQ(errorWith("\"dtype\":\"F32\"", "\"dtype\":\"F8\""),
            prefix + "tensor 'w': unknown dtype 'F8' (expected F32, F16, "
                     "BF16, I32, I64 or BOOL)");
  EXPECT_EQ(errorWith("\"shard\":0", "\"shard\":1"),
            prefix + "tensor 'w': shard 1 is not one of the 1 shards");
  EXPECT_EQ(errorWith(",\"fnv1a64\"", ",\"sha\""),
            prefix + "missing field 'tensors.w.fnv1a64'");
  expectStartsWith(errorWith("{\"format\"", "[{\"format\""),
                   prefix + "manifest is not JSON: at byte " +
                       std::to_string(good.size() + 1) +
                       ": syntax error while parsing array - unexpected end "
                       "of input");
  writeText(manifest, "[]");
  EXPECT_EQ(loadError(), prefix + "manifest is an array, expected an object");
}

} // namespace
