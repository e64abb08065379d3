//===- TrainSpec.h - The kiln.train_spec module attribute -------*- C++ -*-===//
//
// A model's training specification travels in the IR as a dictionary on the
// module (`kiln.train_spec`). docs/graph-format.md lists its keys; importers
// fill in every default so passes read values, never re-derive them.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_KILN_TRAINSPEC_H
#define KILN_DIALECTS_KILN_TRAINSPEC_H

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace kiln {

/// Result attributes of @train_step between kiln-autodiff and
/// kiln-expand-optimizer: the dense gradient of a variable, or the two
/// halves of a sparse one (row ids [N] and rows [N, ...]).
constexpr llvm::StringLiteral kGradientAttr = "kiln.gradient";
constexpr llvm::StringLiteral kGradientIndicesAttr = "kiln.gradient_indices";
constexpr llvm::StringLiteral kGradientRowsAttr = "kiln.gradient_rows";
/// fp16 loss scaling (passes/Graph/LossScaling.h) with rows the
/// data-parallel replicas gather (kiln-insert-allreduce), of a size known
/// only at run time: the check and the division by the scale happen on each
/// replica's own rows before the gather. The rows result is marked
/// kRowsUnscaledAttr (already divided by the scale), and an f32 scalar
/// result marked kRowsCheckAttr (0, or NaN where a replica's rows were not
/// all finite) is averaged over the replicas with the gradients:
/// kiln-expand-optimizer adds it to its finite check, so every replica
/// skips alike. Both unit attributes.
constexpr llvm::StringLiteral kRowsUnscaledAttr = "kiln.loss_scale_unscaled";
constexpr llvm::StringLiteral kRowsCheckAttr = "kiln.loss_scale_rows_check";

/// The optimizer part of a train spec (its `optimizer` dictionary), with
/// the defaults kiln-expand-optimizer applies where a key is missing. The
/// parameter servers apply the same settings (the artifact's
/// ServerOptimizer).
struct OptimizerSettings {
  std::string kind = "sgd";
  double lr = 0.01, momentum = 0.9, beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8;
  double weightDecay = 0.0, initialAccumulator = 0.0, clipGlobalNorm = 0.0;
  bool nesterov = false;
  /// Embedding tables' updates: every row (dense, as torch.optim does) or
  /// only the looked-up ones (lazy).
  bool lazySparse = false;
  std::string schedule = "constant";
  int64_t warmupSteps = 0, decaySteps = 0;
  double minLr = 0.0;

  static OptimizerSettings from(mlir::DictionaryAttr optimizer);
};

/// The recomputation part of a module's train spec (its `remat`
/// dictionary): the policy as kilnc names it — none, auto (the spec's
/// memory_budget), sqrt or all — and the budget in bytes (0: none).
struct RematSettings {
  std::string policy = "none";
  int64_t budgetBytes = 0;

  static RematSettings of(mlir::ModuleOp module);
};

/// Whether the module's train spec distributes over parameter servers.
bool trainsWithParameterServers(mlir::ModuleOp module);

/// The train spec's precision ("fp32", "bf16_mixed", "fp16_mixed"); "fp32"
/// without a spec.
llvm::StringRef trainSpecPrecision(mlir::ModuleOp module);

/// The train spec's `loss` (the name of the forward output it minimizes);
/// empty without a spec.
llvm::StringRef trainSpecLoss(mlir::ModuleOp module);

/// Checks the keys, value kinds and enumerated values of a train spec, and
/// that its `loss` names a result of the module's `forward` function.
mlir::LogicalResult verifyTrainSpec(mlir::ModuleOp module, mlir::Attribute spec);

} // namespace kiln

#endif // KILN_DIALECTS_KILN_TRAINSPEC_H
