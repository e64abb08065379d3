//===- GradientRules.h - Reverse-mode rule of each kiln op ------*- C++ -*-===//
//
// Given the gradient of an op's result, a rule builds the gradient of each
// of its operands (null where an operand has none: integer and boolean
// operands, labels). Rules are split by op family: elementwise and shape ops
// in GradientRules.cpp, convolution and pooling in GradientRulesConv.cpp,
// the rest in GradientRulesNN.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_GRAPH_GRADIENTRULES_H
#define KILN_PASSES_GRAPH_GRADIENTRULES_H

#include "passes/Graph/GradientBuilder.h"

namespace kiln {

/// Fills `operandGrads` (one entry per operand) from `resultGrad`. Emits an
/// error at `op` and fails where no rule exists.
mlir::LogicalResult buildOperandGradients(mlir::Operation *op, mlir::Value resultGrad,
                                          GradientBuilder &gb,
                                          llvm::SmallVectorImpl<mlir::Value> &operandGrads);

/// The family rules; each returns failure() without a diagnostic when `op`
/// is not one of its ops (so the next family is tried).
mlir::FailureOr<bool> elementwiseGradients(mlir::Operation *op, mlir::Value g,
                                           GradientBuilder &gb,
                                           llvm::SmallVectorImpl<mlir::Value> &grads);
mlir::FailureOr<bool> shapeGradients(mlir::Operation *op, mlir::Value g,
                                     GradientBuilder &gb,
                                     llvm::SmallVectorImpl<mlir::Value> &grads);
mlir::FailureOr<bool> networkGradients(mlir::Operation *op, mlir::Value g,
                                       GradientBuilder &gb,
                                       llvm::SmallVectorImpl<mlir::Value> &grads);
mlir::FailureOr<bool> windowGradients(mlir::Operation *op, mlir::Value g,
                                      GradientBuilder &gb,
                                      llvm::SmallVectorImpl<mlir::Value> &grads);

/// The dense gradient of an axis-0 gather's table: the rows of `values`
/// (N ids' worth, any leading shape) scattered by `ids` ([N]) and summed:
/// a kiln.scatter_add_rows (one_hot(ids)^T x values, without the product).
mlir::Value scatterRowsDense(GradientBuilder &gb, mlir::Value ids, mlir::Value values,
                             mlir::RankedTensorType tableType);

/// The gradient of each id's row of an embedding bag (`[ids..., row...]`):
/// its list's gradient times the id's weight (0 for padding).
mlir::Value embeddingBagRowGradients(EmbeddingBagOp bag, mlir::Value g, GradientBuilder &gb);

} // namespace kiln

#endif // KILN_PASSES_GRAPH_GRADIENTRULES_H
