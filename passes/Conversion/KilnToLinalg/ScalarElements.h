//===- ScalarElements.h - One element of an elementwise op -----*- C++ -*-===//
//
// The scalar computations inside the linalg.generic of each elementwise op,
// for lowerings that compute several ops in one generic (kiln.fusion).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_CONVERSION_KILNTOLINALG_SCALARELEMENTS_H
#define KILN_PASSES_CONVERSION_KILNTOLINALG_SCALARELEMENTS_H

#include "dialects/Kiln/KilnOps.h"

#include "mlir/IR/Builders.h"

namespace kiln {

/// One element of `op` from one element of each operand, `x`: the
/// `Elementwise` kiln ops (compare, select, cast, gelu and gelu_grad among
/// them), and broadcast and stop_gradient, which pass their operand on.
/// Null for any other op.
mlir::Value elementOf(mlir::Operation *op, mlir::OpBuilder &b, mlir::Location loc,
                      mlir::ValueRange x);

/// Whether `op` is reduce_sum, reduce_mean or reduce_max.
bool isReduction(mlir::Operation *op);

/// The result of reduction `op` over the iteration shape `shape` (its
/// operand's), each element computed by `element` from `inputs` read
/// through `maps`: the plain lowering reads the operand itself, a fusion
/// computes its body there.
mlir::Value lowerReduction(mlir::Operation *op, mlir::OpBuilder &b,
                           llvm::ArrayRef<int64_t> shape, mlir::ValueRange inputs,
                           llvm::ArrayRef<mlir::AffineMap> maps,
                           llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location,
                                                          mlir::ValueRange)>
                               element);

/// d/dx gelu(x) times the incoming gradient `g`, both in f32.
mlir::Value geluDerivative(GeluGradOp op, mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value x, mlir::Value g);

} // namespace kiln

#endif // KILN_PASSES_CONVERSION_KILNTOLINALG_SCALARELEMENTS_H
