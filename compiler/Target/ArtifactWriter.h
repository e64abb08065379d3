//===- ArtifactWriter.h - ExecutionPlan + kernels → .kiln file --*- C++ -*-===//

#ifndef KILN_COMPILER_TARGET_ARTIFACTWRITER_H
#define KILN_COMPILER_TARGET_ARTIFACTWRITER_H

#include "compiler/Target/CpuCodegen.h"
#include "compiler/Target/ExecutionPlan.h"

#include <vector>

namespace kiln {

/// Format version this compiler writes (artifact.fbs).
/// The format version kilnc writes: 1, or 2 where a SparseApply has `when`
/// (fp16 loss scaling of row updates), which a version-1 runtime would
/// ignore, or 3 where a program pushes to parameter servers under fp16 loss
/// scaling (its pushes are the gradients times the scale, which the runtime
/// sends for the servers to divide, or a skip marker: a version-2 runtime
/// would do neither); so other artifacts still run on older runtimes.
constexpr uint32_t kArtifactFormatVersion = 1;
constexpr uint32_t kArtifactFormatVersionWithWhen = 2;
constexpr uint32_t kArtifactFormatVersionWithSkipMarkers = 3;

/// Serializes the artifact: the plan's buffers, variables, the `init`
/// program (one InitVariable per variable), the planned programs
/// (`forward`, `train_step`), the training facts and the kernels' shared
/// object.
std::vector<uint8_t> serializeArtifact(const ExecutionPlan &plan,
                                       const std::vector<uint8_t> &kernelObject,
                                       const HostTarget &host,
                                       llvm::StringRef modelName);

/// Writes an artifact file (the FlatBuffer and its footer) to `path`, whole
/// or not at all; emits one error at `loc` on failure.
mlir::LogicalResult writeArtifactFile(const std::vector<uint8_t> &flatbuffer,
                                      llvm::StringRef path, mlir::Location loc);

} // namespace kiln

#endif // KILN_COMPILER_TARGET_ARTIFACTWRITER_H
