//===- VerifiedArtifact.h - An artifact the executor can trust --*- C++ -*-===//
//
// Loading an artifact checks, in this order: the file's length against its
// footer, the checksum, the FlatBuffer's identifier, the FlatBuffers
// verifier, the format version, and then every cross-reference
// (ArtifactValidator.h). A VerifiedArtifact exists only if all of them pass,
// so the executor indexes buffers, kernels and variables without checking.
// Loading runs no code from the artifact; placing its kernels is
// runtime/cpu's job.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_ARTIFACT_VERIFIEDARTIFACT_H
#define KILN_RUNTIME_ARTIFACT_VERIFIEDARTIFACT_H

#include "proto/kiln/artifact_generated.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::artifact {

/// The format versions this runtime runs: 1, 2 (a SparseApply may have
/// `when`, which a version-1 runtime would ignore) and 3 (parameter-server
/// pushes under fp16 loss scaling: gradients times the scale, sent with it,
/// and skip markers, which a version-2 runtime would not send).
constexpr uint32_t kOldestFormatVersion = 1;
constexpr uint32_t kFormatVersion = 3;

/// Where a buffer lives, computed once by the validator.
struct BufferLayout {
  Region region;
  uint64_t offset;       ///< Bytes from the start of the region.
  uint64_t byteSize;     ///< Element count times element size.
  uint64_t elementCount; ///< Product of the shape (1 for a scalar).
};

class VerifiedArtifact {
public:
  /// Reads and checks the artifact file at `path`. On failure sets `error` to
  /// one line, "PATH: error: WHAT", naming the field, index or offset, and
  /// returns null.
  static std::unique_ptr<VerifiedArtifact> load(const std::string &path,
                                                std::string &error);

  /// Checks `fileBytes`, the contents of an artifact file (FlatBuffer and
  /// footer); `path` names it in messages.
  static std::unique_ptr<VerifiedArtifact>
  fromFileBytes(std::string path, std::vector<uint8_t> fileBytes,
                std::string &error);

  const std::string &path() const { return path_; }
  const Artifact &root() const { return *root_; }
  /// Size in bytes of the whole file (FlatBuffer and footer).
  size_t fileSize() const { return fileBytes_.size(); }
  /// The footer's FNV-1a 64 of the FlatBuffer: the tasks of a cluster
  /// compare it to check they run the same artifact.
  uint64_t checksum() const;

  size_t bufferCount() const { return buffers_.size(); }
  const BufferLayout &buffer(uint32_t index) const { return buffers_[index]; }
  /// Size of a region: arena_bytes, state_bytes, or the constants' length.
  uint64_t regionSize(Region region) const;

  /// The program named `name`, or null.
  const Program *findProgram(std::string_view name) const;

private:
  VerifiedArtifact() = default;

  std::string path_;
  std::vector<uint8_t> fileBytes_;
  const Artifact *root_ = nullptr;
  std::vector<BufferLayout> buffers_;
};

} // namespace kiln::artifact

#endif // KILN_RUNTIME_ARTIFACT_VERIFIEDARTIFACT_H
