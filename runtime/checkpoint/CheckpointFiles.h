//===- CheckpointFiles.h - Files and directories of checkpoints -*- C++ -*-===//
//
// The file-system side of checkpoints, internal to runtime/checkpoint: names,
// directory listing and removal, durable directories, checksums.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_CHECKPOINT_CHECKPOINTFILES_H
#define KILN_RUNTIME_CHECKPOINT_CHECKPOINTFILES_H

#include "runtime/support/Fnv1a.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kiln::checkpoint {

constexpr const char *kManifestName = "manifest.json";
constexpr const char *kIndexName = "checkpoint";

/// "ckpt-<step>".
std::string checkpointName(int64_t step);

/// The step of a name "ckpt-<digits>"; false for any other name.
bool parseCheckpointName(const std::string &name, int64_t &step);

/// "model-0000I-of-0000N.safetensors".
std::string shardName(size_t index, size_t count);

/// A ckpt-<step> directory of DIR.
struct StepDirectory {
  int64_t step;
  std::string name;
  bool committed; ///< Holds manifest.json.
};

/// The ckpt-<step> directories of `directory`, by step; returns 0 or the
/// errno of the failure to list it.
int listStepDirectories(const std::string &directory,
                        std::vector<StepDirectory> &out);


/// fsyncs a directory, making the entries created in it durable; returns 0
/// or the errno of the failure.
int syncDirectory(const std::string &path);

/// Removes a checkpoint directory: its manifest first (so that a removal cut
/// short leaves it uncommitted), then its other files, then itself. Returns 0
/// or the errno of the first failure.
int removeCheckpointDirectory(const std::string &path);

bool fileExists(const std::string &path);

/// Reads the whole file at `path` into `bytes`; returns 0 or the errno of
/// the failure.
int readWholeFile(const std::string &path, std::string &bytes);

/// The manifest's per-tensor checksum (runtime/support/Fnv1a.h).
using kiln::fnv1a64;

/// `value` as 16 lowercase hex digits.
std::string hex64(uint64_t value);

/// The product of `shape` times `itemSize` in bytes; false on a negative
/// dimension or an overflow of 2^63.
bool byteSize(const std::vector<int64_t> &shape, size_t itemSize,
              uint64_t &bytes);

} // namespace kiln::checkpoint

#endif // KILN_RUNTIME_CHECKPOINT_CHECKPOINTFILES_H
