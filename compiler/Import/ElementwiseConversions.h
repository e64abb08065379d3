//===- ElementwiseConversions.h - Shared conversions ------------*- C++ -*-===//
//
// Elementwise op conversions that ONNX and TensorFlow define alike. Each is
// a template over the node type (OnnxNode, TfNode), so that it fits either
// importer's table: `convertFloatUnary<TanhOp>` takes the node type its
// table entry asks for.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORT_ELEMENTWISECONVERSIONS_H
#define KILN_COMPILER_IMPORT_ELEMENTWISECONVERSIONS_H

#include "compiler/Import/ImportNode.h"

namespace kiln {

/// A unary op of a float input (Sigmoid, Tanh, Exp, ...).
template <typename OpTy, typename NodeT>
mlir::LogicalResult convertFloatUnary(NodeT &node) {
  mlir::Value x = node.getInput(0);
  if (mlir::failed(node.requireFloat(x, "an input")))
    return mlir::failure();
  return node.setResult(0, node.getBuilder().template unary<OpTy>(x));
}

/// A unary op of a numeric input (Relu, Neg, Abs).
template <typename OpTy, typename NodeT>
mlir::LogicalResult convertNumericUnary(NodeT &node) {
  mlir::Value x = node.getInput(0);
  if (mlir::failed(node.requireNumeric(x, "an input")))
    return mlir::failure();
  return node.setResult(0, node.getBuilder().template unary<OpTy>(x));
}

/// A binary op of numeric inputs, broadcast (Add, Sub, Mul, Div, ...).
template <typename OpTy, typename NodeT>
mlir::LogicalResult convertArithmetic(NodeT &node) {
  mlir::Value lhs = node.getInput(0), rhs = node.getInput(1);
  if (mlir::failed(node.requireNumeric(lhs, "inputs")) ||
      mlir::failed(node.requireNumeric(rhs, "inputs")))
    return mlir::failure();
  return node.setResult(0, node.getBuilder().template binary<OpTy>(lhs, rhs));
}

/// Reciprocal: 1 / x of a float input.
template <typename NodeT> mlir::LogicalResult convertReciprocal(NodeT &node) {
  mlir::Value x = node.getInput(0);
  if (mlir::failed(node.requireFloat(x, "an input")))
    return mlir::failure();
  KilnOpBuilder &b = node.getBuilder();
  KilnOpBuilder::Result one = b.splatLike(x, 1.0);
  if (mlir::failed(one))
    return mlir::failure();
  return node.setResult(0, b.binary<DivOp>(*one, x));
}

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_ELEMENTWISECONVERSIONS_H
