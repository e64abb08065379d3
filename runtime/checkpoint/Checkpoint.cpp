//===- Checkpoint.cpp - Saving and restoring training state ---------------===//
//
// What saving and loading share: dtypes, finding the checkpoint to restore,
// and checking a restored checkpoint against the model.
//
//===----------------------------------------------------------------------===//

#include "runtime/checkpoint/Checkpoint.h"

#include "runtime/checkpoint/CheckpointFiles.h"
#include "runtime/checkpoint/Json.h"

#include <algorithm>
#include <cstring>

namespace kiln::checkpoint {

const char *dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "F32";
  case DType::F16:
    return "F16";
  case DType::BF16:
    return "BF16";
  case DType::I32:
    return "I32";
  case DType::I64:
    return "I64";
  case DType::Bool:
    return "BOOL";
  }
  return "unknown";
}

size_t dtypeSize(DType dtype) {
  switch (dtype) {
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F16:
  case DType::BF16:
    return 2;
  case DType::I64:
    return 8;
  case DType::Bool:
    return 1;
  }
  return 0;
}

bool dtypeFromName(const std::string &name, DType &dtype) {
  for (DType candidate : {DType::F32, DType::F16, DType::BF16, DType::I32,
                          DType::I64, DType::Bool})
    if (name == dtypeName(candidate)) {
      dtype = candidate;
      return true;
    }
  return false;
}

std::string tensorTypeString(DType dtype, const std::vector<int64_t> &shape) {
  std::string text = std::string(dtypeName(dtype)) + " [";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

namespace {

/// The index's "latest" if the index is readable and names a committed
/// checkpoint of `directory`.
bool latestFromIndex(const std::string &directory, std::string &name) {
  std::string bytes;
  nlohmann::ordered_json index;
  std::string problem;
  int64_t step;
  if (readWholeFile(directory + "/" + kIndexName, bytes) != 0 ||
      !parseJsonStrict(bytes.data(), bytes.size(), index, problem) ||
      !index.is_object())
    return false;
  auto latest = index.find("latest");
  if (latest == index.end() || !latest->is_string() ||
      !parseCheckpointName(latest->get_ref<const std::string &>(), step))
    return false;
  name = latest->get<std::string>();
  return fileExists(directory + "/" + name + "/" + kManifestName);
}

} // namespace

bool findLatestCheckpoint(const std::string &directory, std::string &path,
                          std::string &error) {
  std::string name;
  if (latestFromIndex(directory, name)) {
    path = directory + "/" + name;
    return true;
  }
  std::vector<StepDirectory> steps;
  if (int failure = listStepDirectories(directory, steps)) {
    error = directory + ": error: cannot read checkpoint directory: " +
            std::strerror(failure);
    return false;
  }
  for (auto it = steps.rbegin(); it != steps.rend(); ++it)
    if (it->committed) {
      path = directory + "/" + it->name;
      return true;
    }
  error = directory +
          ": error: no committed checkpoint (no ckpt-<step>/manifest.json)";
  return false;
}

bool checkMatches(const Checkpoint &checkpoint,
                  const std::vector<TensorSpec> &expected,
                  const std::string &model, std::string &error,
                  OptionalTensors *optional) {
  auto fail = [&](const std::string &problem) {
    error = checkpoint.path + ": error: " + problem;
    return false;
  };
  // An optional tensor on one side only, as it should be: an F32 scalar.
  auto mayBeAlone = [&](const std::vector<std::string> &names, const std::string &name,
                        DType dtype, const std::vector<int64_t> &shape) {
    return dtype == DType::F32 && shape.empty() &&
           std::find(names.begin(), names.end(), name) != names.end();
  };
  if (optional) {
    optional->missing.clear();
    optional->ignored.clear();
  }
  if (checkpoint.model != model)
    return fail("checkpoint is of model '" + checkpoint.model + "', not '" +
                model + "'");
  for (const TensorSpec &spec : expected) {
    const LoadedTensor *found = nullptr;
    for (const LoadedTensor &tensor : checkpoint.tensors)
      if (tensor.name == spec.name)
        found = &tensor;
    std::string wanted = tensorTypeString(spec.dtype, spec.shape);
    if (!found && optional && mayBeAlone(optional->mayLack, spec.name, spec.dtype, spec.shape)) {
      optional->missing.push_back(spec.name);
      continue;
    }
    if (!found)
      return fail("checkpoint lacks tensor '" + spec.name + "' (" + wanted +
                  ")");
    std::string held = tensorTypeString(found->dtype, found->shape);
    if (held != wanted)
      return fail("tensor '" + spec.name + "' is " + held +
                  " in the checkpoint, the model expects " + wanted);
  }
  for (const LoadedTensor &tensor : checkpoint.tensors) {
    bool known = false;
    for (const TensorSpec &spec : expected)
      known = known || spec.name == tensor.name;
    if (!known && optional &&
        mayBeAlone(optional->mayHaveExtra, tensor.name, tensor.dtype, tensor.shape)) {
      optional->ignored.push_back(tensor.name);
      continue;
    }
    if (!known)
      return fail("checkpoint has tensor '" + tensor.name + "' (" +
                  tensorTypeString(tensor.dtype, tensor.shape) +
                  ") the model does not have");
  }
  return true;
}

} // namespace kiln::checkpoint
