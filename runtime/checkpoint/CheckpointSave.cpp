//===- CheckpointSave.cpp - Writing a checkpoint --------------------------===//
//
// Order of a save, each file written whole (temp + fsync + rename):
//   1. DIR/ckpt-S/ created (replacing an uncommitted leftover of step S) and
//      DIR fsynced;
//   2. the shards;
//   3. DIR/checkpoint removed, then DIR/ckpt-S/manifest.json renamed into
//      place and DIR/ckpt-S fsynced: the commit. With no index the loader
//      scans, so a crash here never leaves an index naming an older
//      checkpoint as the latest;
//   4. DIR/checkpoint written, then the checkpoints beyond `keep` and the
//      uncommitted leftovers of lower steps deleted.
//
//===----------------------------------------------------------------------===//

#include "runtime/checkpoint/Checkpoint.h"

#include "runtime/checkpoint/CheckpointFiles.h"
#include "runtime/checkpoint/Json.h"
#include "runtime/checkpoint/Safetensors.h"
#include "runtime/support/Directories.h"
#include "runtime/support/JsonText.h"
#include "runtime/support/StagedFile.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

namespace kiln::checkpoint {

namespace {

/// The problem a request has, or "".
std::string requestProblem(const SaveRequest &request) {
  if (request.step < 0)
    return "step " + std::to_string(request.step) + " is negative";
  if (request.keep < 0)
    return "keep " + std::to_string(request.keep) + " is negative";
  // The loader reads JSON strictly, so every string saved must be UTF-8.
  if (!isValidUtf8(request.model))
    return "the model name is not valid UTF-8";
  for (const auto &entry : request.data)
    if (!isValidUtf8(entry.first))
      return "data key '" + entry.first + "' is not valid UTF-8";
  std::set<std::string> names;
  for (const TensorRef &tensor : request.tensors) {
    std::string what = "tensor '" + tensor.name + "': ";
    if (tensor.name.empty())
      return "a tensor has no name";
    if (!isValidUtf8(tensor.name))
      return what + "the name is not valid UTF-8";
    if (tensor.name == "__metadata__")
      return what + "the name is reserved by safetensors";
    if (!names.insert(tensor.name).second)
      return what + "the name appears twice";
    uint64_t needed;
    if (!byteSize(tensor.shape, dtypeSize(tensor.dtype), needed))
      return what + tensorTypeString(tensor.dtype, tensor.shape) +
             " has a negative dimension or is too large";
    if (needed != tensor.bytes)
      return what + std::to_string(tensor.bytes) + " bytes given, " +
             tensorTypeString(tensor.dtype, tensor.shape) + " needs " +
             std::to_string(needed);
    if (tensor.bytes > 0 && !tensor.data)
      return what + "no data given";
  }
  std::set<std::string> files;
  for (const ExternalShard &shard : request.external) {
    if (!files.insert(shard.file).second || shard.file == kManifestName ||
        shard.file.rfind("model-", 0) == 0)
      return "the file '" + shard.file + "' of another writer is named twice or clashes";
    for (const SavedTensor &tensor : shard.tensors)
      if (!isValidUtf8(tensor.name) || tensor.name.empty() ||
          !names.insert(tensor.name).second)
        return "tensor '" + tensor.name + "' of " + shard.file +
               " is unnamed, not UTF-8 or named twice";
  }
  return "";
}

/// The tensors of each shard, in order: a new shard starts before one would
/// grow past `maxBytes` (0: no limit). Always at least one shard.
std::vector<std::vector<const TensorRef *>>
assignShards(const std::vector<TensorRef> &tensors, uint64_t maxBytes) {
  std::vector<std::vector<const TensorRef *>> shards(1);
  uint64_t bytes = 0;
  for (const TensorRef &tensor : tensors) {
    if (maxBytes && !shards.back().empty() && bytes + tensor.bytes > maxBytes) {
      shards.emplace_back();
      bytes = 0;
    }
    shards.back().push_back(&tensor);
    bytes += tensor.bytes;
  }
  return shards;
}

std::string integerArray(const std::vector<int64_t> &values) {
  std::string text = "[";
  for (size_t i = 0; i < values.size(); ++i)
    text += (i ? "," : "") + std::to_string(values[i]);
  return text + "]";
}

std::string stringArray(const std::vector<std::string> &values) {
  std::string text = "[";
  for (size_t i = 0; i < values.size(); ++i)
    text += (i ? "," : "") + jsonString(values[i]);
  return text + "]";
}

std::string tensorEntry(const std::string &name, DType dtype, const std::vector<int64_t> &shape,
                        size_t shard, uint64_t checksum) {
  return jsonString(name) + ":{\"dtype\":\"" + dtypeName(dtype) +
         "\",\"shape\":" + integerArray(shape) + ",\"shard\":" + std::to_string(shard) +
         ",\"fnv1a64\":\"" + hex64(checksum) + "\"}";
}

std::string
manifestText(const SaveRequest &request, const std::vector<std::string> &shards,
             const std::vector<std::vector<const TensorRef *>> &assignment) {
  std::string text = "{\"format\":\"kiln-checkpoint\",\"version\":1,\n";
  text += "\"model\":" + jsonString(request.model) + ",\n";
  text += "\"step\":" + std::to_string(request.step) + ",\n";
  text += "\"data\":{";
  bool first = true;
  for (const auto &[key, value] : request.data) {
    text += (first ? "" : ",") + jsonString(key) + ":" + std::to_string(value);
    first = false;
  }
  text += "},\n\"shards\":" + stringArray(shards) + ",\n\"tensors\":{";
  first = true;
  for (size_t shard = 0; shard < assignment.size(); ++shard)
    for (const TensorRef *tensor : assignment[shard]) {
      text += first ? "\n" : ",\n";
      first = false;
      text += tensorEntry(tensor->name, tensor->dtype, tensor->shape, shard,
                          fnv1a64(tensor->data, tensor->bytes));
    }
  for (size_t e = 0; e < request.external.size(); ++e)
    for (const SavedTensor &tensor : request.external[e].tensors) {
      text += first ? "\n" : ",\n";
      first = false;
      text += tensorEntry(tensor.name, tensor.dtype, tensor.shape, assignment.size() + e,
                          tensor.fnv1a64);
    }
  return text + "}}\n";
}

/// "FILE: REASON" from StagedFile's "PATH: error: cannot write: REASON".
std::string writeFailure(const std::string &file,
                         const std::string &stagedError) {
  const std::string marker = ": error: cannot write: ";
  size_t at = stagedError.find(marker);
  return file + ": " +
         (at == std::string::npos ? stagedError
                                  : stagedError.substr(at + marker.size()));
}

/// Writes the index, then deletes what `keep` and the crash rule say to;
/// neither failure is an error (the next save tries again).
void updateIndexAndPrune(const std::string &dir, const SaveRequest &request) {
  std::vector<StepDirectory> steps;
  if (listStepDirectories(dir, steps) != 0)
    return;
  std::vector<const StepDirectory *> others;
  for (const StepDirectory &entry : steps)
    if (entry.committed && entry.step != request.step)
      others.push_back(&entry);
  size_t keepOthers =
      request.keep > 0 ? size_t(request.keep - 1) : others.size();
  std::set<int64_t> kept = {request.step};
  for (size_t i = others.size(); i-- > 0 && kept.size() <= keepOthers;)
    kept.insert(others[i]->step);
  std::vector<std::string> all;
  for (const StepDirectory &entry : steps)
    if (entry.committed && kept.count(entry.step))
      all.push_back(entry.name);
  std::string index = "{\"latest\":" + jsonString(checkpointName(request.step)) +
                      ",\"all\":" + stringArray(all) + "}\n";
  std::string ignored;
  writeFileAtomically(dir + "/" + kIndexName, {{index.data(), index.size()}},
                      ignored);
  for (const StepDirectory &entry : steps) {
    bool leftover = !entry.committed && entry.step < request.step;
    bool beyondKeep = entry.committed && !kept.count(entry.step);
    if (leftover || beyondKeep)
      removeCheckpointDirectory(dir + "/" + entry.name);
  }
}

/// Creates DIR/ckpt-<step> empty, replacing an uncommitted leftover; a
/// committed one is refused through `fail`.
template <typename Fail>
bool makeStepDirectory(const std::string &dir, int64_t step, Fail &fail) {
  if (int failure = makeDirectories(dir))
    return fail(std::strerror(failure));
  std::string name = checkpointName(step);
  std::string path = dir + "/" + name;
  if (fileExists(path + "/" + kManifestName))
    return fail(name + " is already committed");
  if (fileExists(path))
    if (int failure = removeCheckpointDirectory(path))
      return fail("cannot remove the uncommitted " + name + ": " + std::strerror(failure));
  if (::mkdir(path.c_str(), 0777) != 0)
    return fail(std::strerror(errno));
  syncDirectory(dir);
  return true;
}

std::string trimmedDirectory(const std::string &directory) {
  std::string dir = directory.empty() ? "." : directory;
  while (dir.size() > 1 && dir.back() == '/')
    dir.pop_back();
  return dir;
}

} // namespace

bool beginCheckpoint(const std::string &directory, int64_t step, std::string &path,
                     std::string &error) {
  std::string dir = trimmedDirectory(directory);
  auto fail = [&](const std::string &reason) {
    error = dir + ": error: cannot write checkpoint: " + reason;
    return false;
  };
  if (step < 0)
    return fail("step " + std::to_string(step) + " is negative");
  if (!makeStepDirectory(dir, step, fail))
    return false;
  path = dir + "/" + checkpointName(step);
  return true;
}

bool writeTensorFile(const std::string &path, const std::vector<TensorRef> &tensors,
                     const std::vector<std::pair<std::string, std::string>> &metadata,
                     std::vector<SavedTensor> &saved, std::string &error) {
  std::vector<const TensorRef *> order;
  std::vector<ByteRange> pieces;
  saved.clear();
  for (const TensorRef &tensor : tensors) {
    order.push_back(&tensor);
    saved.push_back({tensor.name, tensor.dtype, tensor.shape, fnv1a64(tensor.data, tensor.bytes)});
  }
  std::string header = encodeSafetensorsHeader(order, metadata);
  pieces.push_back({header.data(), header.size()});
  for (const TensorRef &tensor : tensors)
    pieces.push_back({tensor.data, tensor.bytes});
  return writeFileAtomically(path, pieces, error);
}

bool checkCheckpointDirectory(const std::string &directory, int64_t firstStep,
                              int64_t lastStep, std::string &error) {
  auto fail = [&](const std::string &reason) {
    error = directory + ": error: cannot write checkpoint: " + reason;
    return false;
  };
  if (int failure = probeWritableDirectory(directory))
    return fail(std::strerror(failure));
  std::vector<StepDirectory> steps;
  if (int failure = listStepDirectories(directory, steps))
    return fail(std::strerror(failure));
  for (const StepDirectory &existing : steps)
    if (existing.committed && existing.step > firstStep && existing.step <= lastStep)
      return fail(existing.name + " is already committed, and this run would reach step " +
                  std::to_string(existing.step) +
                  " again (--restore from the directory, or save to another one)");
  return true;
}

bool saveCheckpoint(const SaveRequest &request, std::string &error) {
  std::string dir = trimmedDirectory(request.directory);
  auto fail = [&](const std::string &reason) {
    error = dir + ": error: cannot write checkpoint: " + reason;
    return false;
  };
  std::string problem = requestProblem(request);
  if (!problem.empty())
    return fail(problem);

  std::string name = checkpointName(request.step);
  std::string path = dir + "/" + name;
  if (request.begun) {
    if (fileExists(path + "/" + kManifestName))
      return fail(name + " is already committed");
    for (const ExternalShard &shard : request.external)
      if (!fileExists(path + "/" + shard.file))
        return fail(name + "/" + shard.file + " is missing");
  } else if (!makeStepDirectory(dir, request.step, fail)) {
    return false;
  }
  auto abandon = [&](const std::string &reason) {
    removeCheckpointDirectory(path);
    return fail(reason);
  };

  std::vector<std::vector<const TensorRef *>> assignment =
      assignShards(request.tensors, request.maxShardBytes);
  std::vector<std::string> shards;
  std::vector<std::pair<std::string, std::string>> metadata = {
      {"format", "kiln"},
      {"model", request.model},
      {"step", std::to_string(request.step)}};
  for (size_t i = 0; i < assignment.size(); ++i) {
    shards.push_back(shardName(i, assignment.size()));
    std::string header = encodeSafetensorsHeader(assignment[i], metadata);
    std::vector<ByteRange> pieces = {{header.data(), header.size()}};
    for (const TensorRef *tensor : assignment[i])
      pieces.push_back({tensor->data, tensor->bytes});
    std::string stagedError;
    if (!writeFileAtomically(path + "/" + shards.back(), pieces, stagedError))
      return abandon(writeFailure(name + "/" + shards.back(), stagedError));
  }

  for (const ExternalShard &shard : request.external)
    shards.push_back(shard.file);
  std::string manifest = manifestText(request, shards, assignment);
  std::string index = dir + "/" + kIndexName;
  if (::unlink(index.c_str()) != 0 && errno != ENOENT)
    return abandon(kIndexName + std::string(": ") + std::strerror(errno));
  syncDirectory(dir);
  std::string stagedError;
  if (!writeFileAtomically(path + "/" + kManifestName,
                           {{manifest.data(), manifest.size()}}, stagedError))
    return abandon(writeFailure(name + "/" + kManifestName, stagedError));

  updateIndexAndPrune(dir, request);
  return true;
}

} // namespace kiln::checkpoint
