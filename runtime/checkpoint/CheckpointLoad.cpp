//===- CheckpointLoad.cpp - Restoring a checkpoint ------------------------===//
//
// Reads a committed ckpt-<step> directory: the manifest, then each shard's
// header (checked against the file's length and against the manifest), then
// each tensor's bytes (checked against the manifest's checksum).
//
//===----------------------------------------------------------------------===//

#include "runtime/checkpoint/Checkpoint.h"

#include "runtime/checkpoint/CheckpointFiles.h"
#include "runtime/checkpoint/Json.h"
#include "runtime/checkpoint/Safetensors.h"

#include <cerrno>
#include <cstring>
#include <memory>
#include <set>

namespace kiln::checkpoint {

namespace {

constexpr int64_t kFormatVersion = 1;

/// A manifest's tensor entry.
struct ManifestTensor {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  size_t shard;
  std::string checksum;
};

struct Manifest {
  std::string model;
  int64_t step;
  std::map<std::string, int64_t> data;
  std::vector<std::string> shards;
  std::vector<ManifestTensor> tensors;
};

/// Reads the fields of a parsed manifest, reporting the first one at fault.
class ManifestReader {
public:
  ManifestReader(const std::string &path, std::string &error)
      : path_(path), error_(error) {}

  bool read(const JsonValue &root, Manifest &out) {
    if (!root.isObject())
      return fail(std::string("manifest is ") + root.kindName() +
                  ", expected an object");
    const JsonValue *format, *version, *model, *step, *data, *shards, *tensors;
    if (!field(root, "format", JsonValue::Kind::String, format) ||
        !field(root, "version", JsonValue::Kind::Int, version))
      return false;
    if (format->asString() != "kiln-checkpoint")
      return fail("format is '" + format->asString() +
                  "', expected 'kiln-checkpoint'");
    if (version->asInt() != kFormatVersion)
      return fail("version " + std::to_string(version->asInt()) +
                  " is not supported (this build reads version " +
                  std::to_string(kFormatVersion) + ")");
    if (!field(root, "model", JsonValue::Kind::String, model) ||
        !field(root, "step", JsonValue::Kind::Int, step) ||
        !field(root, "data", JsonValue::Kind::Object, data) ||
        !field(root, "shards", JsonValue::Kind::Array, shards) ||
        !field(root, "tensors", JsonValue::Kind::Object, tensors))
      return false;
    out.model = model->asString();
    out.step = step->asInt();
    for (const auto &[key, value] : data->members()) {
      if (!value.isInt())
        return fail("data." + key + " is " + value.kindName() +
                    ", expected an integer");
      out.data[key] = value.asInt();
    }
    for (const JsonValue &shard : shards->elements()) {
      if (!shard.isString() || !isPlainFileName(shard.asString()))
        return fail("shards[" + std::to_string(out.shards.size()) +
                    "] is not a file name in the checkpoint's directory");
      out.shards.push_back(shard.asString());
    }
    for (const auto &[name, entry] : tensors->members()) {
      ManifestTensor tensor;
      tensor.name = name;
      if (!readTensor(entry, out.shards.size(), tensor))
        return false;
      out.tensors.push_back(std::move(tensor));
    }
    return true;
  }

private:
  bool fail(const std::string &problem) {
    error_ = path_ + ": error: " + problem;
    return false;
  }

  static bool isPlainFileName(const std::string &name) {
    return !name.empty() && name != "." && name != ".." &&
           name.find('/') == std::string::npos &&
           name.find('\0') == std::string::npos;
  }

  bool field(const JsonValue &object, const std::string &name,
             JsonValue::Kind kind, const JsonValue *&out,
             const std::string &where = "") {
    out = object.find(name);
    if (!out)
      return fail("missing field '" + where + name + "'");
    if (out->kind() != kind)
      return fail("field '" + where + name + "' is " + out->kindName() +
                  ", expected " + JsonValue::kindName(kind));
    return true;
  }

  bool readTensor(const JsonValue &entry, size_t shardCount,
                  ManifestTensor &tensor) {
    std::string where = "tensors." + tensor.name + ".";
    if (!entry.isObject())
      return fail("field 'tensors." + tensor.name + "' is " + entry.kindName() +
                  ", expected an object");
    const JsonValue *dtype, *shape, *shard, *checksum;
    if (!field(entry, "dtype", JsonValue::Kind::String, dtype, where) ||
        !field(entry, "shape", JsonValue::Kind::Array, shape, where) ||
        !field(entry, "shard", JsonValue::Kind::Int, shard, where) ||
        !field(entry, "fnv1a64", JsonValue::Kind::String, checksum, where))
      return false;
    if (!dtypeFromName(dtype->asString(), tensor.dtype))
      return fail("tensor '" + tensor.name + "': unknown dtype '" +
                  dtype->asString() +
                  "' (expected F32, F16, BF16, I32, I64 or BOOL)");
    for (const JsonValue &dim : shape->elements()) {
      if (!dim.isInt() || dim.asInt() < 0)
        return fail("tensor '" + tensor.name +
                    "': shape is not an array of non-negative integers");
      tensor.shape.push_back(dim.asInt());
    }
    if (shard->asInt() < 0 || uint64_t(shard->asInt()) >= shardCount)
      return fail("tensor '" + tensor.name + "': shard " +
                  std::to_string(shard->asInt()) + " is not one of the " +
                  std::to_string(shardCount) + " shards");
    tensor.shard = size_t(shard->asInt());
    tensor.checksum = checksum->asString();
    return true;
  }

  const std::string &path_;
  std::string &error_;
};

bool readManifest(const std::string &path, Manifest &manifest,
                  std::string &error) {
  std::string bytes;
  if (int failure = readWholeFile(path, bytes)) {
    error = path + ": error: cannot read: " + std::strerror(failure);
    return false;
  }
  JsonValue root;
  std::string problem;
  if (!parseJson(bytes.data(), bytes.size(), root, problem)) {
    error = path + ": error: manifest is not JSON: " + problem;
    return false;
  }
  return ManifestReader(path, error).read(root, manifest);
}

/// Reads the tensors of `manifest` from the shards in `directory`.
bool readTensors(const std::string &directory, const Manifest &manifest,
                 std::vector<LoadedTensor> &out, std::string &error) {
  std::vector<std::unique_ptr<SafetensorsReader>> shards;
  std::vector<std::set<std::string>> listed(manifest.shards.size());
  for (const ManifestTensor &tensor : manifest.tensors)
    listed[tensor.shard].insert(tensor.name);
  for (size_t i = 0; i < manifest.shards.size(); ++i) {
    shards.push_back(std::make_unique<SafetensorsReader>());
    if (!shards.back()->open(directory + "/" + manifest.shards[i], error))
      return false;
    for (const ShardTensor &tensor : shards.back()->tensors())
      if (!listed[i].count(tensor.name)) {
        error = shards.back()->path() + ": error: tensor '" + tensor.name +
                "' is not in the manifest";
        return false;
      }
  }
  out.clear();
  for (const ManifestTensor &entry : manifest.tensors) {
    const SafetensorsReader &shard = *shards[entry.shard];
    auto fail = [&](const std::string &problem) {
      error = shard.path() + ": error: tensor '" + entry.name + "': " + problem;
      return false;
    };
    const ShardTensor *tensor = shard.find(entry.name);
    if (!tensor)
      return fail("in the manifest but not in this shard");
    std::string held = tensorTypeString(tensor->dtype, tensor->shape);
    std::string listedType = tensorTypeString(entry.dtype, entry.shape);
    if (held != listedType)
      return fail("is " + held + " here, the manifest says " + listedType);
    LoadedTensor loaded{entry.name, entry.dtype, entry.shape, {}};
    if (!shard.read(*tensor, loaded.data, error))
      return false;
    std::string checksum =
        hex64(fnv1a64(loaded.data.data(), loaded.data.size()));
    if (checksum != entry.checksum)
      return fail("checksum mismatch at bytes " +
                  std::to_string(tensor->offset) + ".." +
                  std::to_string(tensor->offset + tensor->bytes) +
                  " (fnv1a64 " + checksum + ", the manifest says " +
                  entry.checksum + "): the file is corrupt");
    out.push_back(std::move(loaded));
  }
  return true;
}

} // namespace

bool loadCheckpoint(const std::string &path, Checkpoint &out,
                    std::string &error) {
  std::string directory = path;
  while (directory.size() > 1 && directory.back() == '/')
    directory.pop_back();
  if (!fileExists(directory)) {
    error =
        directory + ": error: cannot read checkpoint: " + std::strerror(errno);
    return false;
  }
  if (!fileExists(directory + "/" + kManifestName)) {
    std::string name = directory.substr(directory.rfind('/') + 1);
    int64_t step;
    if (parseCheckpointName(name, step)) {
      error = directory + ": error: checkpoint is not committed (no " +
              kManifestName + ")";
      return false;
    }
    std::string latest;
    if (!findLatestCheckpoint(directory, latest, error))
      return false;
    directory = latest;
  }
  Manifest manifest;
  if (!readManifest(directory + "/" + kManifestName, manifest, error) ||
      !readTensors(directory, manifest, out.tensors, error))
    return false;
  out.path = directory;
  out.model = manifest.model;
  out.step = manifest.step;
  out.data = manifest.data;
  return true;
}

} // namespace kiln::checkpoint
