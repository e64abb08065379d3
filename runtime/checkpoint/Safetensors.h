//===- Safetensors.h - Tensor files in the safetensors layout ---*- C++ -*-===//
//
// A safetensors file (https://github.com/huggingface/safetensors): an 8-byte
// little-endian header length N, N bytes of JSON padded with spaces to a
// multiple of 8, then the tensors' bytes. The header maps each tensor's name
// to {"dtype","shape","data_offsets":[begin,end]} (offsets from the start of
// the data) and may hold a "__metadata__" object of strings. The writer lays
// tensors out back to back, so the data has no holes, as safetensors' own
// reader requires.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_CHECKPOINT_SAFETENSORS_H
#define KILN_RUNTIME_CHECKPOINT_SAFETENSORS_H

#include "runtime/checkpoint/Checkpoint.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kiln::checkpoint {

/// The header (length, JSON, padding) of a file holding `tensors` in order,
/// each of its `bytes`, with string `metadata`. Tensor names are distinct,
/// none is "__metadata__", and every string is valid UTF-8 (what
/// saveCheckpoint checks).
std::string encodeSafetensorsHeader(
    const std::vector<const TensorRef *> &tensors,
    const std::vector<std::pair<std::string, std::string>> &metadata);

/// A tensor described by a header.
struct ShardTensor {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  uint64_t offset; ///< From the start of the file.
  uint64_t bytes;
};

/// Reads a safetensors file: open() reads and checks the header against the
/// file's length, read() then reads one tensor's bytes.
class SafetensorsReader {
public:
  SafetensorsReader() = default;
  SafetensorsReader(const SafetensorsReader &) = delete;
  SafetensorsReader &operator=(const SafetensorsReader &) = delete;
  ~SafetensorsReader();

  /// On failure sets `error` to "PATH: error: PROBLEM" (the header length
  /// beyond the file, JSON at fault with its offset, an unknown dtype, a
  /// tensor's offsets out of bounds or disagreeing with its shape) and
  /// returns false.
  bool open(const std::string &path, std::string &error);

  const std::string &path() const { return path_; }
  /// The tensors in the header's order.
  const std::vector<ShardTensor> &tensors() const { return tensors_; }
  /// The tensor named `name`, or null.
  const ShardTensor *find(const std::string &name) const;

  /// Reads `tensor`'s bytes into `out`, resized to fit.
  bool read(const ShardTensor &tensor, std::vector<uint8_t> &out,
            std::string &error) const;

private:
  bool fail(const std::string &problem, std::string &error) const;
  bool readHeader(uint64_t fileSize, std::string &error);

  std::string path_;
  int fd_ = -1;
  std::vector<ShardTensor> tensors_;
};

} // namespace kiln::checkpoint

#endif // KILN_RUNTIME_CHECKPOINT_SAFETENSORS_H
