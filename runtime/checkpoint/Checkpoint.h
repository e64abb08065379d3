//===- Checkpoint.h - Saving and restoring training state -------*- C++ -*-===//
//
// A checkpoint directory DIR holds one directory per saved step (DESIGN.md,
// Checkpoint):
//
//   DIR/checkpoint                  index: {"latest":"ckpt-S","all":[...]}
//   DIR/ckpt-S/model-00000-of-00001.safetensors   the tensors (safetensors)
//   DIR/ckpt-S/manifest.json        written last: the commit point
//
// A shard is a safetensors file: an 8-byte little-endian header length N,
// N bytes of JSON (padded with spaces to a multiple of 8) mapping each tensor
// name to {"dtype","shape","data_offsets"} plus a "__metadata__" object,
// then the tensors' bytes back to back. The manifest names the model, the
// step, a free-form map of integers (data offsets such as
// "batches_consumed"), the shards, and each tensor's dtype, shape, shard and
// FNV-1a 64-bit checksum of its bytes:
//
//   {"format":"kiln-checkpoint","version":1,"model":"mlp","step":200,
//    "data":{"batches_consumed":200},
//    "shards":["model-00000-of-00001.safetensors"],
//    "tensors":{"w":{"dtype":"F32","shape":[4,2],"shard":0,
//                    "fnv1a64":"9b2cf6a3c1f0d5e4"}}}
//
// Every file is written to a temporary name, fsynced and renamed; the
// manifest's rename (and the fsync of its directory) commits the checkpoint.
// A ckpt-S directory without manifest.json is never restored. The index's
// "latest" is the checkpoint saved last; "all" lists the committed ones by
// step. Errors are one line, "PATH: error: PROBLEM", naming the file and the
// tensor, field or offset at fault.
//
// Not thread-safe: one saver per directory at a time.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_CHECKPOINT_CHECKPOINT_H
#define KILN_RUNTIME_CHECKPOINT_CHECKPOINT_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace kiln::checkpoint {

/// Element types, spelled as safetensors spells them: F32, F16, BF16, I32,
/// I64, BOOL (one byte per element).
enum class DType { F32, F16, BF16, I32, I64, Bool };

/// "F32", "F16", "BF16", "I32", "I64", "BOOL".
const char *dtypeName(DType dtype);

/// Bytes per element.
size_t dtypeSize(DType dtype);

/// The dtype spelled `name`; false if there is none.
bool dtypeFromName(const std::string &name, DType &dtype);

/// A tensor to save; `data` is not owned and holds `bytes` bytes, C order,
/// little-endian.
struct TensorRef {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  const void *data;
  size_t bytes;
};

/// A tensor a file already written holds, as the manifest lists it.
struct SavedTensor {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  uint64_t fnv1a64 = 0;
};

/// A file of the checkpoint written by someone else (a parameter server's
/// part), already in DIR/ckpt-<step>/ when the manifest is written.
struct ExternalShard {
  std::string file;
  std::vector<SavedTensor> tensors;
};

struct SaveRequest {
  std::string directory;               ///< DIR, created if needed.
  std::string model;                   ///< The model's name.
  int64_t step;                        ///< The ckpt-<step> to write.
  std::map<std::string, int64_t> data; ///< Free-form, e.g. batches_consumed.
  std::vector<TensorRef> tensors;
  int keep = 0; ///< Committed checkpoints to keep; 0 keeps all.
  /// Start a new shard before one would grow past this many bytes of
  /// tensor data; 0 writes a single shard.
  uint64_t maxShardBytes = 0;
  /// Files others wrote into the step's directory (beginCheckpoint made
  /// it); the manifest lists them after this request's own shards.
  std::vector<ExternalShard> external = {};
  /// The step's directory was made by beginCheckpoint: keep what it holds.
  bool begun = false;
};

/// Makes DIR/ckpt-<step> for a save whose files come from several writers
/// (replacing an uncommitted leftover of that step; a committed one is
/// refused) and sets `path` to it. saveCheckpoint with `begun` set then
/// writes the request's own shards and commits.
bool beginCheckpoint(const std::string &directory, int64_t step, std::string &path,
                     std::string &error);

/// Writes `tensors` as the safetensors file `path` (temp + fsync + rename),
/// with string `metadata`, and describes them in `saved` (checksums
/// included). On failure sets `error` to "PATH: error: cannot write: ..."
/// and returns false.
bool writeTensorFile(const std::string &path, const std::vector<TensorRef> &tensors,
                     const std::vector<std::pair<std::string, std::string>> &metadata,
                     std::vector<SavedTensor> &saved, std::string &error);

/// Writes and commits DIR/ckpt-<step>, updates the index, then deletes the
/// committed checkpoints beyond `keep` (never the one just written; the
/// lowest steps first) and any uncommitted ckpt-* directory of a lower step
/// (what a crash leaves). An uncommitted ckpt-<step> of the same step is
/// replaced; a committed one is refused. On failure sets `error` to
/// "DIR: error: cannot write checkpoint: REASON", leaves no new checkpoint
/// visible and returns false. Failing to delete old checkpoints is not a
/// failure: the next save tries again.
bool saveCheckpoint(const SaveRequest &request, std::string &error);

/// Creates `directory` (mkdir -p) and checks that files can be written in
/// it and that it holds no committed checkpoint of a step in
/// (firstStep, lastStep], one the run would have to save again: so a run
/// refuses an unusable --save directory before it trains. On failure sets
/// `error` as saveCheckpoint would and returns false.
bool checkCheckpointDirectory(const std::string &directory, int64_t firstStep,
                              int64_t lastStep, std::string &error);

struct LoadedTensor {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;
};

struct Checkpoint {
  std::string path; ///< The ckpt-<step> directory restored.
  std::string model;
  int64_t step = 0;
  std::map<std::string, int64_t> data;
  std::vector<LoadedTensor> tensors; ///< In the manifest's order.
};

/// Restores a checkpoint. `path` is either a checkpoint directory DIR (the
/// index's latest if it is committed, else the committed ckpt-* of the
/// highest step) or one ckpt-<step> directory. Every size is checked against
/// its file's length before anything is allocated, and every tensor against
/// its checksum. With `wanted`, only the shards it accepts (by file name) are
/// read. On failure sets `error` and returns false.
bool loadCheckpoint(const std::string &path, Checkpoint &out, std::string &error,
                    const std::function<bool(const std::string &)> &wanted = nullptr);

/// The committed checkpoint loadCheckpoint(directory) would restore, as a
/// path. On failure (none committed, unreadable directory) sets `error` and
/// returns false.
bool findLatestCheckpoint(const std::string &directory, std::string &path,
                          std::string &error);

/// A tensor a model expects.
struct TensorSpec {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
};

/// Tensors that may be on one side only, each an F32 scalar: fp16 loss
/// scaling's state, which an artifact of another precision does not have.
struct OptionalTensors {
  /// The model's tensors the checkpoint may lack (they keep their first
  /// values), and tensors the checkpoint may hold that the model lacks
  /// (not restored).
  std::vector<std::string> mayLack, mayHaveExtra;
  /// Set by checkMatches: those it found so.
  std::vector<std::string> missing, ignored;
};

/// Whether `checkpoint` is of `model` and holds exactly the `expected`
/// tensors (any order), but for `optional` ones. Otherwise sets `error` to
/// "PATH: error: PROBLEM" naming the model mismatch or the first missing,
/// mismatched or extra tensor, and returns false.
bool checkMatches(const Checkpoint &checkpoint,
                  const std::vector<TensorSpec> &expected,
                  const std::string &model, std::string &error,
                  OptionalTensors *optional = nullptr);

/// "F32 [2, 3]" ("F32 []" for a scalar).
std::string tensorTypeString(DType dtype, const std::vector<int64_t> &shape);

} // namespace kiln::checkpoint

#endif // KILN_RUNTIME_CHECKPOINT_CHECKPOINT_H
