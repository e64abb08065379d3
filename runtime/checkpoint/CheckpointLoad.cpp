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
  using Json = nlohmann::ordered_json;

  ManifestReader(const std::string &path, std::string &error)
      : path_(path), error_(error) {}

  bool read(const Json &root, Manifest &out) {
    if (!root.is_object())
      return fail(std::string("manifest is ") + jsonKindName(root) +
                  ", expected an object");
    const Json *format, *version, *model, *step, *data, *shards, *tensors;
    if (!field(root, "format", Json::value_t::string, format) ||
        !field(root, "version", Json::value_t::number_integer, version))
      return false;
    const std::string &formatName = format->get_ref<const std::string &>();
    if (formatName != "kiln-checkpoint")
      return fail("format is '" + formatName + "', expected 'kiln-checkpoint'");
    if (version->get<int64_t>() != kFormatVersion)
      return fail("version " + std::to_string(version->get<int64_t>()) +
                  " is not supported (this build reads version " +
                  std::to_string(kFormatVersion) + ")");
    if (!field(root, "model", Json::value_t::string, model) ||
        !field(root, "step", Json::value_t::number_integer, step) ||
        !field(root, "data", Json::value_t::object, data) ||
        !field(root, "shards", Json::value_t::array, shards) ||
        !field(root, "tensors", Json::value_t::object, tensors))
      return false;
    out.model = model->get<std::string>();
    out.step = step->get<int64_t>();
    if (out.step < 0)
      return fail("field 'step' is " + std::to_string(out.step) + ", expected 0 or more");
    for (const auto &[key, value] : data->items()) {
      if (!value.is_number_integer())
        return fail("data." + key + " is " + jsonKindName(value) +
                    ", expected an integer");
      out.data[key] = value.get<int64_t>();
    }
    for (const Json &shard : *shards) {
      if (!shard.is_string() ||
          !isPlainFileName(shard.get_ref<const std::string &>()))
        return fail("shards[" + std::to_string(out.shards.size()) +
                    "] is not a file name in the checkpoint's directory");
      out.shards.push_back(shard.get<std::string>());
    }
    for (const auto &[name, entry] : tensors->items()) {
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

  /// The member `name` of `object`, of type `kind` (number_integer: an
  /// integer that fits in int64, the only kind parseJsonStrict stores).
  bool field(const Json &object, const std::string &name, Json::value_t kind,
             const Json *&out, const std::string &where = "") {
    auto found = object.find(name);
    if (found == object.end())
      return fail("missing field '" + where + name + "'");
    out = &*found;
    if (out->type() != kind)
      return fail("field '" + where + name + "' is " + jsonKindName(*out) +
                  ", expected " + jsonKindName(kind));
    return true;
  }

  bool readTensor(const Json &entry, size_t shardCount,
                  ManifestTensor &tensor) {
    std::string where = "tensors." + tensor.name + ".";
    if (!entry.is_object())
      return fail("field 'tensors." + tensor.name + "' is " +
                  jsonKindName(entry) + ", expected an object");
    const Json *dtype, *shape, *shard, *checksum;
    if (!field(entry, "dtype", Json::value_t::string, dtype, where) ||
        !field(entry, "shape", Json::value_t::array, shape, where) ||
        !field(entry, "shard", Json::value_t::number_integer, shard, where) ||
        !field(entry, "fnv1a64", Json::value_t::string, checksum, where))
      return false;
    const std::string &dtypeName = dtype->get_ref<const std::string &>();
    if (!dtypeFromName(dtypeName, tensor.dtype))
      return fail("tensor '" + tensor.name + "': unknown dtype '" + dtypeName +
                  "' (expected F32, F16, BF16, I32, I64 or BOOL)");
    std::string problem =
        readNonNegativeIntegers(*shape, "shape", tensor.shape);
    if (!problem.empty())
      return fail("tensor '" + tensor.name + "': " + problem);
    int64_t shardIndex = shard->get<int64_t>();
    if (shardIndex < 0 || uint64_t(shardIndex) >= shardCount)
      return fail("tensor '" + tensor.name + "': shard " +
                  std::to_string(shardIndex) + " is not one of the " +
                  std::to_string(shardCount) + " shards");
    tensor.shard = size_t(shardIndex);
    tensor.checksum = checksum->get<std::string>();
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
  nlohmann::ordered_json root;
  std::string problem;
  if (!parseJsonStrict(bytes.data(), bytes.size(), root, problem)) {
    error = path + ": error: manifest is not JSON: " + problem;
    return false;
  }
  return ManifestReader(path, error).read(root, manifest);
}

/// Reads the tensors of `manifest` from the shards in `directory` that
/// `wanted` accepts (all without it).
bool readTensors(const std::string &directory, const Manifest &manifest,
                 const std::function<bool(const std::string &)> &wanted,
                 std::vector<LoadedTensor> &out, std::string &error) {
  std::vector<std::unique_ptr<SafetensorsReader>> shards;
  std::vector<std::set<std::string>> listed(manifest.shards.size());
  for (const ManifestTensor &tensor : manifest.tensors)
    listed[tensor.shard].insert(tensor.name);
  for (size_t i = 0; i < manifest.shards.size(); ++i) {
    shards.push_back(std::make_unique<SafetensorsReader>());
    if (wanted && !wanted(manifest.shards[i]))
      continue;
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
    if (wanted && !wanted(manifest.shards[entry.shard]))
      continue;
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

bool loadCheckpoint(const std::string &path, Checkpoint &out, std::string &error,
                    const std::function<bool(const std::string &)> &wanted) {
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
  if (!readManifest(directory + "/" + kManifestName, manifest, error))
    return false;
  // A committed checkpoint's directory is named after its step.
  std::string name = directory.substr(directory.rfind('/') + 1);
  if (int64_t named; parseCheckpointName(name, named) && named != manifest.step) {
    error = directory + "/" + kManifestName + ": error: field 'step' is " +
            std::to_string(manifest.step) + " but the checkpoint's directory is " + name;
    return false;
  }
  if (!readTensors(directory, manifest, wanted, out.tensors, error))
    return false;
  out.path = directory;
  out.model = manifest.model;
  out.step = manifest.step;
  out.data = manifest.data;
  return true;
}

} // namespace kiln::checkpoint
