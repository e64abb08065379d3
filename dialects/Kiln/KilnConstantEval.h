//===- KilnConstantEval.h - kiln ops evaluated on constants -----*- C++ -*-===//
//
// What the folders of data-moving ops (gather, concat, slice, transpose,
// broadcast) and of casts, comparisons and selects compute when every
// operand is a constant. Importers rely on it: ONNX and TensorFlow graphs
// compute shapes at run time (Shape -> Gather -> Concat -> Reshape) that are
// static once the input shapes are, and folding them gives a static program.
//
// Each function returns null when an operand is not a dense constant or the
// result would hold more than kMaxFoldedElements elements (folding copies
// every element as an attribute: it is for shapes and masks, not weights).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_KILN_KILNCONSTANTEVAL_H
#define KILN_DIALECTS_KILN_KILNCONSTANTEVAL_H

#include "dialects/Kiln/KilnOps.h"

#include "mlir/IR/BuiltinAttributes.h"

namespace kiln {

constexpr int64_t kMaxFoldedElements = 1 << 16;

mlir::DenseElementsAttr evalCast(mlir::Attribute operand,
                                 mlir::RankedTensorType type);
mlir::DenseElementsAttr evalCompare(ComparePredicate predicate,
                                    mlir::Attribute lhs, mlir::Attribute rhs,
                                    mlir::RankedTensorType type);
mlir::DenseElementsAttr evalSelect(mlir::Attribute condition,
                                   mlir::Attribute onTrue,
                                   mlir::Attribute onFalse,
                                   mlir::RankedTensorType type);
mlir::DenseElementsAttr evalGather(mlir::Attribute table,
                                   mlir::Attribute indices, int64_t axis,
                                   mlir::RankedTensorType type);
mlir::DenseElementsAttr evalConcat(llvm::ArrayRef<mlir::Attribute> inputs,
                                   int64_t axis, mlir::RankedTensorType type);
mlir::DenseElementsAttr evalSlice(mlir::Attribute operand,
                                  llvm::ArrayRef<int64_t> start,
                                  llvm::ArrayRef<int64_t> step,
                                  mlir::RankedTensorType type);
mlir::DenseElementsAttr evalTranspose(mlir::Attribute operand,
                                      llvm::ArrayRef<int64_t> permutation,
                                      mlir::RankedTensorType type);
mlir::DenseElementsAttr evalBroadcast(mlir::Attribute operand,
                                      mlir::RankedTensorType type);
/// reduce_sum, reduce_max (and reduce_min as `min`) over integer constants.
mlir::DenseElementsAttr evalIntReduce(mlir::Attribute operand,
                                      llvm::ArrayRef<int64_t> axes,
                                      mlir::RankedTensorType type,
                                      llvm::function_ref<llvm::APInt(
                                          const llvm::APInt &, const llvm::APInt &)>
                                          combine);
/// An elementwise map of one integer or float constant.
mlir::DenseElementsAttr
evalUnary(mlir::Attribute operand, mlir::RankedTensorType type,
          llvm::function_ref<std::optional<llvm::APInt>(const llvm::APInt &)> onInt,
          llvm::function_ref<std::optional<llvm::APFloat>(const llvm::APFloat &)>
              onFloat);

} // namespace kiln

#endif // KILN_DIALECTS_KILN_KILNCONSTANTEVAL_H
