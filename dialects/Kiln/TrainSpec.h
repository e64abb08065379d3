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

namespace kiln {

/// Result attributes of @train_step between kiln-autodiff and
/// kiln-expand-optimizer: the dense gradient of a variable, or the two
/// halves of a sparse one (row ids [N] and rows [N, ...]).
constexpr llvm::StringLiteral kGradientAttr = "kiln.gradient";
constexpr llvm::StringLiteral kGradientIndicesAttr = "kiln.gradient_indices";
constexpr llvm::StringLiteral kGradientRowsAttr = "kiln.gradient_rows";

/// Checks the keys, value kinds and enumerated values of a train spec, and
/// that its `loss` names a result of the module's `forward` function.
mlir::LogicalResult verifyTrainSpec(mlir::ModuleOp module, mlir::Attribute spec);

} // namespace kiln

#endif // KILN_DIALECTS_KILN_TRAINSPEC_H
