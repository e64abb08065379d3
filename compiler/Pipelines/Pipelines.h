//===- Pipelines.h - Named pass pipelines of kilnc --------------*- C++ -*-===//

#ifndef KILN_COMPILER_PIPELINES_PIPELINES_H
#define KILN_COMPILER_PIPELINES_PIPELINES_H

#include "llvm/ADT/StringRef.h"

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace kiln {

/// What runs right after import: shape refinement, canonicalization (the
/// kiln folders) and common subexpression elimination.
void buildImportCleanupPipeline(mlir::OpPassManager &pm);

/// kiln-sink-transposes in every function, then CSE: a channels-last
/// model's transposes moved below elementwise ops until the pairs cancel.
/// Before training, so the backward pass has none of them either.
void buildLayoutPipeline(mlir::OpPassManager &pm);

/// What turns a model with a train spec into a training model: autodiff,
/// gradient accumulation, the all-reduce of data-parallel training, the
/// optimizer's update, then canonicalization and CSE of the result.
void buildTrainingPipeline(mlir::OpPassManager &pm);

/// What makes the step fast before it is planned and lowered: fusion of
/// elementwise chains (kiln-fuse-elementwise) in every function.
void buildOptimizationPipeline(mlir::OpPassManager &pm);

/// kiln-mixed-precision: the matrix products in `precision` (fp32, bf16 or
/// fp16; empty: the train spec's), bf16 inputs rounded by the kernels that
/// compute them unless `roundInKernels` is false, and with bf16 the forward
/// values backward reads kept as bf16 copies unless `storeActivations` is
/// false.
void buildMixedPrecisionPipeline(mlir::OpPassManager &pm, llvm::StringRef precision,
                                 bool roundInKernels, bool storeActivations);

/// kiln-schedule on the training functions: an order of their ops that
/// lowers the peak memory and starts communication early.
void buildSchedulingPipeline(mlir::OpPassManager &pm);

/// kiln-remat on the training functions, as the train spec's remat policy
/// says (nothing under `none`).
void buildRecomputationPipeline(mlir::OpPassManager &pm);

/// Registers the pipelines above by name (`kiln-import-cleanup`,
/// `kiln-training`, `kiln-optimize`).
void registerPipelines();

} // namespace kiln

#endif // KILN_COMPILER_PIPELINES_PIPELINES_H
