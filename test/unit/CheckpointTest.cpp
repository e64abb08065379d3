//===- CheckpointTest.cpp - Saving and restoring checkpoints --------------===//

#include "runtime/checkpoint/Checkpoint.h"

#include "test/unit/CheckpointTestSupport.h"

#include <gtest/gtest.h>

#include <csignal>
#include <random>
#include <sys/resource.h>

using namespace kiln::checkpoint;
using namespace kiln::test;

namespace {

/// A tensor with random bytes that a TensorRef can point at.
struct OwnedTensor {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;

  TensorRef ref() const {
    return {name, dtype, shape, data.data(), data.size()};
  }
};

OwnedTensor randomTensor(std::mt19937 &random, const std::string &name,
                         DType dtype, std::vector<int64_t> shape) {
  size_t count = 1;
  for (int64_t dim : shape)
    count *= size_t(dim);
  OwnedTensor tensor{name, dtype, shape,
                     std::vector<uint8_t>(count * dtypeSize(dtype))};
  std::uniform_int_distribution<int> byte(0, 255);
  for (uint8_t &b : tensor.data)
    b = dtype == DType::Bool ? uint8_t(byte(random) & 1)
                             : uint8_t(byte(random));
  return tensor;
}

/// One tensor of every dtype, plus a scalar and an empty one.
std::vector<OwnedTensor> everyDType(std::mt19937 &random) {
  return {randomTensor(random, "dense/kernel", DType::F32, {3, 5}),
          randomTensor(random, "dense/bias", DType::F16, {5}),
          randomTensor(random, "emb", DType::BF16, {7, 2}),
          randomTensor(random, "ids", DType::I32, {4}),
          randomTensor(random, "global_step", DType::I64, {}),
          randomTensor(random, "mask", DType::Bool, {2, 2, 2}),
          randomTensor(random, "empty", DType::F32, {0, 3}),
          randomTensor(random, "odd \"name\"", DType::I64, {1})};
}

SaveRequest requestFor(const std::string &directory, int64_t step,
                       const std::vector<OwnedTensor> &tensors, int keep = 0) {
  SaveRequest request{directory, "mlp", step, {}, {}, keep};
  request.data = {{"batches_consumed", step}, {"epoch", step / 10}};
  for (const OwnedTensor &tensor : tensors)
    request.tensors.push_back(tensor.ref());
  return request;
}

void expectSame(const Checkpoint &loaded,
                const std::vector<OwnedTensor> &tensors) {
  ASSERT_EQ(loaded.tensors.size(), tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    EXPECT_EQ(loaded.tensors[i].name, tensors[i].name);
    EXPECT_EQ(loaded.tensors[i].dtype, tensors[i].dtype);
    EXPECT_EQ(loaded.tensors[i].shape, tensors[i].shape);
    EXPECT_EQ(loaded.tensors[i].data, tensors[i].data) << tensors[i].name;
  }
}

void save(const SaveRequest &request) {
  std::string error;
  ASSERT_TRUE(saveCheckpoint(request, error)) << error;
}

int64_t loadedStep(const std::string &path) {
  Checkpoint loaded;
  std::string error;
  EXPECT_TRUE(loadCheckpoint(path, loaded, error)) << error;
  return loaded.step;
}

// Tests a round trip of every dtype, from the directory and from the
// ckpt-<step> directory, and the files a save leaves.
TEST(CheckpointTest, RoundTripsEveryDType) {
  std::mt19937 random(std::random_device{}());
  ScratchDirectory scratch;
  std::string dir = scratch.file("run/checkpoints");
  std::vector<OwnedTensor> tensors = everyDType(random);
  save(requestFor(dir, 120, tensors));

  EXPECT_EQ(listDirectory(dir),
            (std::vector<std::string>{"checkpoint", "ckpt-120"}));
  EXPECT_EQ(listDirectory(dir + "/ckpt-120"),
            (std::vector<std::string>{"manifest.json",
                                      "model-00000-of-00001.safetensors"}));
  EXPECT_EQ(readText(dir + "/checkpoint"),
            "{\"latest\":\"ckpt-120\",\"all\":[\"ckpt-120\"]}\n");
  std::string shard =
      readText(dir + "/ckpt-120/model-00000-of-00001.safetensors");
  uint64_t headerLength = 0;
  for (int i = 0; i < 8; ++i)
    headerLength |= uint64_t(uint8_t(shard[size_t(i)])) << (8 * i);
  EXPECT_EQ(headerLength % 8, 0u);
  size_t dataBytes = 0;
  for (const OwnedTensor &tensor : tensors)
    dataBytes += tensor.data.size();
  EXPECT_EQ(shard.size(), 8 + headerLength + dataBytes);

  for (const std::string &path : {dir, dir + "/", dir + "/ckpt-120"}) {
    Checkpoint loaded;
    std::string error;
    ASSERT_TRUE(loadCheckpoint(path, loaded, error)) << error;
    EXPECT_EQ(loaded.path, dir + "/ckpt-120");
    EXPECT_EQ(loaded.model, "mlp");
    EXPECT_EQ(loaded.step, 120);
    EXPECT_EQ(loaded.data, (std::map<std::string, int64_t>{
                               {"batches_consumed", 120}, {"epoch", 12}}));
    expectSame(loaded, tensors);
  }
}

// Tests tensors spread over several shards by maxShardBytes.
TEST(CheckpointTest, RoundTripsShards) {
  std::mt19937 random(std::random_device{}());
  ScratchDirectory scratch;
  std::vector<OwnedTensor> tensors = everyDType(random);
  SaveRequest request = requestFor(scratch.path(), 3, tensors);
  request.maxShardBytes = 32;
  save(request);
  std::vector<std::string> files = listDirectory(scratch.file("ckpt-3"));
  ASSERT_GT(files.size(), 3u);
  EXPECT_EQ(files[1], "model-00000-of-0000" + std::to_string(files.size() - 1) +
                          ".safetensors");
  Checkpoint loaded;
  std::string error;
  ASSERT_TRUE(loadCheckpoint(scratch.path(), loaded, error)) << error;
  expectSame(loaded, tensors);
}

// Tests a checkpoint without tensors.
TEST(CheckpointTest, RoundTripsNoTensors) {
  ScratchDirectory scratch;
  save(requestFor(scratch.path(), 0, {}));
  Checkpoint loaded;
  std::string error;
  ASSERT_TRUE(loadCheckpoint(scratch.path(), loaded, error)) << error;
  EXPECT_EQ(loaded.step, 0);
  EXPECT_TRUE(loaded.tensors.empty());
}

// Tests that only the last `keep` checkpoints stay, and the index lists them.
TEST(CheckpointTest, KeepsLastN) {
  std::mt19937 random(std::random_device{}());
  ScratchDirectory scratch;
  std::vector<OwnedTensor> tensors = {
      randomTensor(random, "w", DType::F32, {4})};
  for (int64_t step = 100; step <= 500; step += 100)
    save(requestFor(scratch.path(), step, tensors, /*keep=*/2));
  EXPECT_EQ(listDirectory(scratch.path()),
            (std::vector<std::string>{"checkpoint", "ckpt-400", "ckpt-500"}));
  EXPECT_EQ(readText(scratch.file("checkpoint")),
            "{\"latest\":\"ckpt-500\",\"all\":[\"ckpt-400\",\"ckpt-500\"]}\n");
  // keep = 0 keeps everything.
  save(requestFor(scratch.path(), 600, tensors));
  EXPECT_EQ(listDirectory(scratch.path()).size(), 4u);
  // keep = 1 keeps only the one just written.
  save(requestFor(scratch.path(), 700, tensors, 1));
  EXPECT_EQ(listDirectory(scratch.path()),
            (std::vector<std::string>{"checkpoint", "ckpt-700"}));
  EXPECT_EQ(loadedStep(scratch.path()), 700);
}

// Tests that the latest checkpoint is the one saved last, even below a
// higher step left by an abandoned run; without an index, the highest step.
TEST(CheckpointTest, LatestIsSavedLast) {
  ScratchDirectory scratch;
  for (int64_t step : {10, 30, 20})
    save(requestFor(scratch.path(), step, {}));
  EXPECT_EQ(loadedStep(scratch.path()), 20);
  std::string latest;
  std::string error;
  ASSERT_TRUE(findLatestCheckpoint(scratch.path(), latest, error)) << error;
  EXPECT_EQ(latest, scratch.file("ckpt-20"));
  ::unlink(scratch.file("checkpoint").c_str());
  EXPECT_EQ(loadedStep(scratch.path()), 30);
  writeText(scratch.file("checkpoint"), "{\"latest\":\"ckpt-99\"}");
  EXPECT_EQ(loadedStep(scratch.path()), 30);
  writeText(scratch.file("checkpoint"), "not json");
  EXPECT_EQ(loadedStep(scratch.path()), 30);
  writeText(scratch.file("checkpoint"), "{\"latest\":\"../ckpt-10\"}");
  EXPECT_EQ(loadedStep(scratch.path()), 30);
}

// Tests that a directory a crash left without a manifest is never restored,
// is deleted by the next save of a higher step, and is replaced by a save of
// its own step.
TEST(CheckpointTest, IgnoresAndCleansUncommittedDirectories) {
  std::mt19937 random(std::random_device{}());
  ScratchDirectory scratch;
  std::vector<OwnedTensor> tensors = {
      randomTensor(random, "w", DType::F32, {4})};
  save(requestFor(scratch.path(), 10, tensors));
  // A crash while writing ckpt-20: shards, no manifest, no new index.
  save(requestFor(scratch.file("crash"), 20, tensors));
  ::mkdir(scratch.file("ckpt-20").c_str(), 0777);
  ::rename(
      scratch.file("crash/ckpt-20/model-00000-of-00001.safetensors").c_str(),
      scratch.file("ckpt-20/model-00000-of-00001.safetensors").c_str());
  removeTree(scratch.file("crash"));
  ::unlink(scratch.file("checkpoint").c_str());
  ::mkdir(scratch.file("ckpt-40").c_str(), 0777);

  EXPECT_EQ(loadedStep(scratch.path()), 10);
  Checkpoint loaded;
  std::string error;
  EXPECT_FALSE(loadCheckpoint(scratch.file("ckpt-20"), loaded, error));
  EXPECT_EQ(error, scratch.file("ckpt-20") +
                       ": error: checkpoint is not committed (no "
                       "manifest.json)");

  save(requestFor(scratch.path(), 30, tensors));
  // ckpt-20 is gone; ckpt-40, above the step written, is left alone.
  EXPECT_EQ(listDirectory(scratch.path()),
            (std::vector<std::string>{"checkpoint", "ckpt-10", "ckpt-30",
                                      "ckpt-40"}));
  writeText(scratch.file("ckpt-40/junk"), "x");
  save(requestFor(scratch.path(), 40, tensors));
  EXPECT_EQ(listDirectory(scratch.file("ckpt-40")),
            (std::vector<std::string>{"manifest.json",
                                      "model-00000-of-00001.safetensors"}));
  EXPECT_EQ(loadedStep(scratch.path()), 40);
}

TEST(CheckpointTest, RefusesToOverwriteACommittedStep) {
  ScratchDirectory scratch;
  save(requestFor(scratch.path(), 5, {}));
  std::string error;
  EXPECT_FALSE(saveCheckpoint(requestFor(scratch.path(), 5, {}), error));
  EXPECT_EQ(error, scratch.path() +
                       ": error: cannot write checkpoint: ckpt-5 is already "
                       "committed");
  EXPECT_EQ(loadedStep(scratch.path()), 5);
}

// Tests requests refused before anything is written.
TEST(CheckpointTest, RefusesBadRequests) {
  ScratchDirectory scratch;
  std::vector<float> values(6);
  auto errorFor = [&](SaveRequest request) {
    std::string error;
    EXPECT_FALSE(saveCheckpoint(request, error));
    EXPECT_EQ(listDirectory(scratch.path()), std::vector<std::string>{});
    return error;
  };
  std::string prefix = scratch.path() + ": error: cannot write checkpoint: ";
  SaveRequest request{scratch.path(), "m", 1, {}, {}};
  request.tensors = {{"w", DType::F32, {2, 3}, values.data(), 20}};
  EXPECT_EQ(errorFor(request),
            prefix + "tensor 'w': 20 bytes given, F32 [2, 3] needs 24");
  request.tensors = {{"w", DType::F32, {2, 3}, values.data(), 24},
                     {"w", DType::F32, {6}, values.data(), 24}};
  EXPECT_EQ(errorFor(request), prefix + "tensor 'w': the name appears twice");
  request.tensors = {{"w", DType::F32, {-1, 3}, values.data(), 24}};
  EXPECT_EQ(errorFor(request),
            prefix + "tensor 'w': F32 [-1, 3] has a negative dimension or is "
                     "too large");
  request.tensors = {{"__metadata__", DType::F32, {}, values.data(), 4}};
  EXPECT_EQ(errorFor(request), prefix + "tensor '__metadata__': the name is "
                                        "reserved by safetensors");
  request.tensors = {{"", DType::F32, {}, values.data(), 4}};
  EXPECT_EQ(errorFor(request), prefix + "a tensor has no name");
  request.tensors = {};
  request.step = -1;
  EXPECT_EQ(errorFor(request), prefix + "step -1 is negative");
}

// Tests a directory that cannot be created: an error, and nothing written.
TEST(CheckpointTest, DirectoryThatCannotBeCreated) {
  ScratchDirectory scratch;
  writeText(scratch.file("file"), "x");
  std::string error;
  EXPECT_FALSE(
      saveCheckpoint(requestFor(scratch.file("file/ckpts"), 1, {}), error));
  EXPECT_EQ(error, scratch.file("file/ckpts") +
                       ": error: cannot write checkpoint: Not a directory");
  EXPECT_EQ(listDirectory(scratch.path()), std::vector<std::string>{"file"});
}

// Tests a directory that cannot be written: an error, and nothing written.
TEST(CheckpointTest, UnwritableDirectory) {
  if (::geteuid() == 0)
    GTEST_SKIP() << "running as root, which ignores directory permissions";
  ScratchDirectory scratch;
  std::string dir = scratch.file("ckpts");
  ASSERT_EQ(::mkdir(dir.c_str(), 0500), 0);
  std::string error;
  EXPECT_FALSE(saveCheckpoint(requestFor(dir, 1, {}), error));
  EXPECT_EQ(error, dir + ": error: cannot write checkpoint: Permission denied");
  EXPECT_EQ(listDirectory(dir), std::vector<std::string>{});
}

// Tests a save cut short by a full disk (a file size limit here): an error
// naming the file, the partial checkpoint removed, the previous one intact.
TEST(CheckpointTest, FailedWriteLeavesNothing) {
  std::mt19937 random(std::random_device{}());
  ScratchDirectory scratch;
  save(requestFor(scratch.path(), 1, {}));
  std::vector<OwnedTensor> tensors = {
      randomTensor(random, "w", DType::F32, {1024})};
  rlimit old;
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
  rlimit small = old;
  small.rlim_cur = 2048;
  auto oldHandler = std::signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  std::string error;
  bool saved = saveCheckpoint(requestFor(scratch.path(), 2, tensors), error);
  ::setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, oldHandler);
  EXPECT_FALSE(saved);
  EXPECT_EQ(error, scratch.path() +
                       ": error: cannot write checkpoint: "
                       "ckpt-2/model-00000-of-00001.safetensors: File too "
                       "large");
  EXPECT_EQ(listDirectory(scratch.path()),
            (std::vector<std::string>{"checkpoint", "ckpt-1"}));
  EXPECT_EQ(loadedStep(scratch.path()), 1);
}

TEST(CheckpointTest, NothingToRestore) {
  ScratchDirectory scratch;
  Checkpoint loaded;
  std::string error;
  EXPECT_FALSE(loadCheckpoint(scratch.path(), loaded, error));
  EXPECT_EQ(error, scratch.path() + ": error: no committed checkpoint (no "
                                    "ckpt-<step>/manifest.json)");
  EXPECT_FALSE(loadCheckpoint(scratch.file("missing"), loaded, error));
  EXPECT_EQ(error, scratch.file("missing") +
                       ": error: cannot read checkpoint: No such file or "
                       "directory");
}

TEST(CheckpointTest, ChecksTheModel) {
  std::mt19937 random(std::random_device{}());
  ScratchDirectory scratch;
  std::vector<OwnedTensor> tensors = {
      randomTensor(random, "w", DType::F32, {2, 3}),
      randomTensor(random, "b", DType::F32, {3})};
  save(requestFor(scratch.path(), 1, tensors));
  Checkpoint loaded;
  std::string error;
  ASSERT_TRUE(loadCheckpoint(scratch.path(), loaded, error)) << error;
  std::string prefix = loaded.path + ": error: ";
  std::vector<TensorSpec> expected = {{"b", DType::F32, {3}},
                                      {"w", DType::F32, {2, 3}}};
  EXPECT_TRUE(checkMatches(loaded, expected, "mlp", error)) << error;
  EXPECT_FALSE(checkMatches(loaded, expected, "cnn", error));
  EXPECT_EQ(error, prefix + "checkpoint is of model 'mlp', not 'cnn'");
  expected.push_back({"v", DType::I64, {}});
  EXPECT_FALSE(checkMatches(loaded, expected, "mlp", error));
  EXPECT_EQ(error, prefix + "checkpoint lacks tensor 'v' (I64 [])");
  expected.pop_back();
  expected[1].shape = {3, 2};
  EXPECT_FALSE(checkMatches(loaded, expected, "mlp", error));
  EXPECT_EQ(error, prefix + "tensor 'w' is F32 [2, 3] in the checkpoint, the "
                            "model expects F32 [3, 2]");
  expected[1] = {"w", DType::BF16, {2, 3}};
  EXPECT_FALSE(checkMatches(loaded, expected, "mlp", error));
  EXPECT_EQ(error, prefix + "tensor 'w' is F32 [2, 3] in the checkpoint, the "
                            "model expects BF16 [2, 3]");
  expected.pop_back();
  EXPECT_FALSE(checkMatches(loaded, expected, "mlp", error));
  EXPECT_EQ(error, prefix + "checkpoint has tensor 'w' (F32 [2, 3]) the model "
                            "does not have");
}

// fp16 loss scaling's state may be on one side only (a checkpoint of
// another precision): a scalar F32 the model has and the checkpoint may
// lack keeps its first value, one the checkpoint may hold and the model
// lacks is not restored; each only where allowed, and any other type or
// name is still an error.
TEST(CheckpointTest, OptionalScalarsMayBeOnOneSideOnly) {
  std::mt19937 random(std::random_device{}());
  ScratchDirectory scratch;
  std::vector<OwnedTensor> tensors = {randomTensor(random, "w", DType::F32, {2, 3}),
                                      randomTensor(random, "loss_scale", DType::F32, {})};
  save(requestFor(scratch.path(), 1, tensors));
  Checkpoint loaded;
  std::string error;
  ASSERT_TRUE(loadCheckpoint(scratch.path(), loaded, error)) << error;
  std::string prefix = loaded.path + ": error: ";
  const std::vector<std::string> state = {"loss_scale", "loss_scale/good_steps"};
  OptionalTensors lacking;
  lacking.mayLack = state;
  std::vector<TensorSpec> scaled = {{"w", DType::F32, {2, 3}},
                                    {"loss_scale", DType::F32, {}},
                                    {"loss_scale/good_steps", DType::F32, {}}};
  ASSERT_TRUE(checkMatches(loaded, scaled, "mlp", error, &lacking)) << error;
  EXPECT_EQ(lacking.missing, std::vector<std::string>{"loss_scale/good_steps"});
  EXPECT_TRUE(lacking.ignored.empty());
  OptionalTensors extra;
  extra.mayHaveExtra = state;
  std::vector<TensorSpec> unscaled = {{"w", DType::F32, {2, 3}}};
  ASSERT_TRUE(checkMatches(loaded, unscaled, "mlp", error, &extra)) << error;
  EXPECT_TRUE(extra.missing.empty());
  EXPECT_EQ(extra.ignored, std::vector<std::string>{"loss_scale"});
  // Each side only where allowed; without the leniency, exactly the
  // model's tensors.
  EXPECT_FALSE(checkMatches(loaded, unscaled, "mlp", error, &lacking));
  EXPECT_EQ(error, prefix + "checkpoint has tensor 'loss_scale' (F32 []) the model does not "
                            "have");
  EXPECT_FALSE(checkMatches(loaded, scaled, "mlp", error, &extra));
  EXPECT_EQ(error, prefix + "checkpoint lacks tensor 'loss_scale/good_steps' (F32 [])");
  EXPECT_FALSE(checkMatches(loaded, unscaled, "mlp", error));
  // Not a scalar F32, or not optional: refused as before.
  std::vector<TensorSpec> wide = {{"w", DType::F32, {2, 3}}, {"loss_scale", DType::F32, {}},
                                  {"loss_scale/good_steps", DType::F32, {2}}};
  EXPECT_FALSE(checkMatches(loaded, wide, "mlp", error, &lacking));
  EXPECT_EQ(error, prefix + "checkpoint lacks tensor 'loss_scale/good_steps' (F32 [2])");
  std::vector<TensorSpec> other = {{"w", DType::F32, {2, 3}}, {"loss_scale", DType::F32, {}},
                                   {"bias", DType::F32, {}}};
  EXPECT_FALSE(checkMatches(loaded, other, "mlp", error, &lacking));
  EXPECT_EQ(error, prefix + "checkpoint lacks tensor 'bias' (F32 [])");
}

TEST(CheckpointTest, DTypeNames) {
  for (DType dtype : {DType::F32, DType::F16, DType::BF16, DType::I32,
                      DType::I64, DType::Bool}) {
    DType parsed;
    ASSERT_TRUE(dtypeFromName(dtypeName(dtype), parsed));
    EXPECT_EQ(parsed, dtype);
  }
  DType parsed;
  EXPECT_FALSE(dtypeFromName("F64", parsed));
  EXPECT_EQ(std::string(dtypeName(DType::Bool)), "BOOL");
  EXPECT_EQ(dtypeSize(DType::BF16), 2u);
  EXPECT_EQ(dtypeSize(DType::I64), 8u);
}

} // namespace
