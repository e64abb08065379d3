//===- LossScaling.h - Dynamic loss scaling of fp16 training ----*- C++ -*-===//
//
// With the train spec's precision fp16_mixed, the backward pass starts from
// the loss scale instead of 1 (kiln-autodiff), so the output gradients the
// f16 products read do not flush to zero; kiln-expand-optimizer divides the
// gradients by it again, skips the update of a step whose gradients are not
// all finite, and moves the scale as PyTorch's GradScaler does: halved
// after a skipped step, doubled after kGrowthInterval finite steps in a row.
// Rows the data-parallel replicas gather are checked and divided before the
// gather (kiln-insert-allreduce; TrainSpec.h, kRowsUnscaledAttr). With
// parameter servers (kiln-insert-ps-ops) the step checks what it pushes,
// times the scale (the servers divide), and updates its own scale; the
// runtime sends the servers a skip marker instead of a step's gradients
// that are not finite.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_GRAPH_LOSSSCALING_H
#define KILN_PASSES_GRAPH_LOSSSCALING_H

#include "dialects/Kiln/TrainSpec.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace kiln {

/// The f32 scalar variable holding the scale (checkpointed with the rest).
inline constexpr llvm::StringLiteral kLossScaleVariable = "loss_scale";
/// The f32 scalar count of finite steps since the scale last moved.
inline constexpr llvm::StringLiteral kGoodStepsVariable = "loss_scale/good_steps";
/// train_step's outputs: the scale for the next step (as it moved after
/// this one), and 1 when the step skipped its update (0 otherwise).
inline constexpr llvm::StringLiteral kLossScaleOutput = "loss_scale";
inline constexpr llvm::StringLiteral kSkippedStepOutput = "skipped_step";


inline constexpr double kInitialLossScale = 65536.0; // 2^16, GradScaler's.
inline constexpr double kGrowthInterval = 2000.0;

/// Whether the module's train spec asks for fp16 with loss scaling.
inline bool usesLossScaling(mlir::ModuleOp module) {
  return trainSpecPrecision(module) == "fp16_mixed";
}

class GradientBuilder;

/// An i1 scalar (built at `gb`'s point): whether every one of `gradients`,
/// and every one of `checks` (values that are 0, or NaN for rows checked
/// elsewhere), is finite.
mlir::Value allFinite(GradientBuilder &gb, mlir::ValueRange gradients,
                      mlir::ValueRange checks = {});

/// Replaces each of `gradients` by itself divided by `lossScale`.
void unscaleGradients(GradientBuilder &gb, mlir::Value lossScale,
                      llvm::MutableArrayRef<mlir::Value> gradients);

/// The scale's move after a step that used `lossScale` and whose gradients
/// were `finite`: assigns it and its counter of finite steps (the variable
/// kGoodStepsVariable, added here) at `gb`'s point, and appends the step's
/// outputs kLossScaleOutput and kSkippedStepOutput to `results` and
/// `resultAttrs`.
void updateLossScale(GradientBuilder &gb, mlir::ModuleOp module, mlir::func::FuncOp train,
                     mlir::Value lossScale, mlir::Value finite,
                     llvm::SmallVectorImpl<mlir::Value> &results,
                     llvm::SmallVectorImpl<mlir::DictionaryAttr> &resultAttrs);

} // namespace kiln

#endif // KILN_PASSES_GRAPH_LOSSSCALING_H
