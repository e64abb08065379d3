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

#include "mlir/IR/TypeUtilities.h"

#include <limits>

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

/// A comparison, broadcast, giving booleans: Equal (and NotEqual) also of
/// booleans; ordering needs numbers.
template <ComparePredicate Predicate, typename NodeT>
mlir::LogicalResult convertCompare(NodeT &node) {
  mlir::Value lhs = node.getInput(0), rhs = node.getInput(1);
  if (Predicate != ComparePredicate::eq && Predicate != ComparePredicate::ne &&
      (mlir::failed(node.requireNumeric(lhs, "inputs")) ||
       mlir::failed(node.requireNumeric(rhs, "inputs"))))
    return mlir::failure();
  return node.setResult(0, node.getBuilder().compare(Predicate, lhs, rhs));
}

/// Errors unless `v` holds booleans.
template <typename NodeT> mlir::LogicalResult requireBool(NodeT &node, mlir::Value v) {
  mlir::Type type = mlir::getElementTypeOrSelf(v.getType());
  if (type.isInteger(1))
    return mlir::success();
  return node.emitError() << "expects BOOL inputs, got " << type;
}

/// Not (ONNX), LogicalNot (TensorFlow): x == false.
template <typename NodeT> mlir::LogicalResult convertLogicalNot(NodeT &node) {
  mlir::Value x = node.getInput(0);
  if (mlir::failed(requireBool(node, x)))
    return mlir::failure();
  KilnOpBuilder &b = node.getBuilder();
  KilnOpBuilder::Result no = b.splatLike(x, 0.0);
  if (mlir::failed(no))
    return mlir::failure();
  return node.setResult(0, b.compare(ComparePredicate::eq, x, *no));
}

enum class LogicalKind { And, Or, Xor };

/// And, Or, Xor of booleans, broadcast (ONNX And/Or/Xor, TensorFlow
/// LogicalAnd/LogicalOr).
template <LogicalKind Kind, typename NodeT> mlir::LogicalResult convertLogical(NodeT &node) {
  mlir::Value lhs = node.getInput(0), rhs = node.getInput(1);
  if (mlir::failed(requireBool(node, lhs)) || mlir::failed(requireBool(node, rhs)))
    return mlir::failure();
  KilnOpBuilder &b = node.getBuilder();
  if (Kind == LogicalKind::Xor)
    return node.setResult(0, b.compare(ComparePredicate::ne, lhs, rhs));
  KilnOpBuilder::Result constant = b.splatLike(lhs, Kind == LogicalKind::And ? 0.0 : 1.0);
  if (mlir::failed(constant))
    return mlir::failure();
  // And: rhs where lhs, else false. Or: true where lhs, else rhs.
  if (Kind == LogicalKind::And)
    return node.setResult(0, b.select(lhs, rhs, *constant));
  return node.setResult(0, b.select(lhs, *constant, rhs));
}

/// condition ? x : y elementwise, broadcast (ONNX Where, TF SelectV2).
template <typename NodeT> mlir::LogicalResult convertWhere(NodeT &node) {
  mlir::Value condition = node.getInput(0);
  mlir::Type conditionType = mlir::getElementTypeOrSelf(condition.getType());
  if (!conditionType.isInteger(1))
    return node.emitError() << "expects a BOOL condition, got " << conditionType;
  return node.setResult(0, node.getBuilder().select(condition, node.getInput(1),
                                                    node.getInput(2)));
}

/// Sign: 1 above 0, -1 below, x itself at 0 and NaN (as TensorFlow and
/// numpy, ONNX's reference; torch.sign gives 0 for NaN); it takes no
/// gradient (theirs is zero).
template <typename NodeT> mlir::LogicalResult convertSign(NodeT &node) {
  using Result = KilnOpBuilder::Result;
  mlir::Value x = node.getInput(0);
  if (mlir::failed(node.requireNumeric(x, "an input")))
    return mlir::failure();
  KilnOpBuilder &b = node.getBuilder();
  Result zero = b.splatLike(x, 0), one = b.splatLike(x, 1), minusOne = b.splatLike(x, -1);
  Result held = b.template unary<StopGradientOp>(x);
  if (mlir::failed(zero) || mlir::failed(one) || mlir::failed(minusOne) || mlir::failed(held))
    return mlir::failure();
  Result below = b.compare(ComparePredicate::lt, x, *zero);
  Result above = b.compare(ComparePredicate::gt, x, *zero);
  Result rest = mlir::succeeded(below) ? b.select(*below, *minusOne, *held) : below;
  return node.setResult(0, mlir::succeeded(above) && mlir::succeeded(rest)
                               ? b.select(*above, *one, *rest)
                               : Result(mlir::failure()));
}

/// IsFinite: x - x is 0 exactly for a finite x, NaN for an infinity or NaN.
template <typename NodeT> mlir::LogicalResult convertIsFinite(NodeT &node) {
  mlir::Value x = node.getInput(0);
  if (mlir::failed(node.requireFloat(x, "an input")))
    return mlir::failure();
  KilnOpBuilder &b = node.getBuilder();
  KilnOpBuilder::Result difference = b.template binary<SubOp>(x, x);
  KilnOpBuilder::Result zero = b.splatLike(x, 0);
  if (mlir::failed(difference) || mlir::failed(zero))
    return mlir::failure();
  return node.setResult(0, b.compare(ComparePredicate::eq, *difference, *zero));
}

/// IsNaN: x != x, true only for NaN.
template <typename NodeT> mlir::LogicalResult convertIsNaN(NodeT &node) {
  mlir::Value x = node.getInput(0);
  if (mlir::failed(node.requireFloat(x, "an input")))
    return mlir::failure();
  return node.setResult(0, node.getBuilder().compare(ComparePredicate::ne, x, x));
}

/// IsInf: x equal to +infinity (when `positive`) or -infinity (when
/// `negative`); |x| == infinity for both; x == NaN, never true, for neither.
template <typename NodeT>
mlir::LogicalResult buildIsInf(NodeT &node, bool positive, bool negative) {
  mlir::Value x = node.getInput(0);
  if (mlir::failed(node.requireFloat(x, "an input")))
    return mlir::failure();
  KilnOpBuilder &b = node.getBuilder();
  double infinity = std::numeric_limits<double>::infinity();
  double target = positive ? infinity : negative ? -infinity
                                                 : std::numeric_limits<double>::quiet_NaN();
  KilnOpBuilder::Result compared =
      positive && negative ? b.template unary<AbsOp>(x) : KilnOpBuilder::Result(x);
  KilnOpBuilder::Result splat = b.splatLike(x, target);
  if (mlir::failed(compared) || mlir::failed(splat))
    return mlir::failure();
  return node.setResult(0, b.compare(ComparePredicate::eq, *compared, *splat));
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
