//===- SavedActivations.h - Forward values kept in 16 bits for backward ---===//

#ifndef KILN_PASSES_OPTIMIZE_SAVEDACTIVATIONS_H
#define KILN_PASSES_OPTIMIZE_SAVEDACTIVATIONS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace kiln {

/// Gives the readers in `func`'s backward sweep of each f32 value its
/// forward pass computes (the ops its results are computed from: its loss,
/// named `lossName`, and outputs such as predictions, which keep reading
/// f32) a copy of the value in `type` (bf16), widened as they read it: a
/// kiln.cast after the value (or the one a product reads already) and a
/// kiln.cast back before each reader. Only values of 4,096 elements or
/// more computed from the step's inputs (not from weights and constants
/// alone), not broadcasts, whose kernel can write the copy (elementwise
/// ops, or a product's input) and whose backward readers can
/// each widen it in their own kernel (elementwise ops of its shape,
/// reductions) are kept so. Returns how many.
int storeSavedActivations(mlir::func::FuncOp func, llvm::StringRef lossName, mlir::Type type);

} // namespace kiln

#endif // KILN_PASSES_OPTIMIZE_SAVEDACTIVATIONS_H
