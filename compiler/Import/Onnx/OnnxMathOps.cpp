//===- OnnxMathOps.cpp - ONNX elementwise and matrix ops ------------------===//
//
// Unary and binary math, comparisons and logic, Where, Cast, Clip, Pow,
// Mod, Gelu, Gemm and MatMul. Binary ops broadcast numpy-style through
// KilnOpBuilder.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/Onnx/OnnxOps.h"

#include "compiler/Import/DiagnosticText.h"
#include "compiler/Import/ElementwiseConversions.h"
#include "compiler/Import/Onnx/OnnxTensor.h"

#include "mlir/IR/TypeUtilities.h"

#include <cmath>

using namespace mlir;

namespace kiln {
namespace {

using Result = KilnOpBuilder::Result;

/// Max and Min take one or more inputs, broadcast together.
template <typename OpTy> LogicalResult convertVariadicMinMax(OnnxNode &node) {
  for (unsigned i = 0, e = node.getNumInputs(); i < e; ++i)
    if (!node.hasInput(i))
      return node.emitError()
             << "expects input #" << i << " to be given, got an empty name";
  Value result = node.getInput(0);
  if (failed(node.requireNumeric(result, "inputs")))
    return failure();
  for (unsigned i = 1, e = node.getNumInputs(); i < e; ++i) {
    Value next = node.getInput(i);
    if (failed(node.requireNumeric(next, "inputs")))
      return failure();
    Result combined = node.getBuilder().binary<OpTy>(result, next);
    if (failed(combined))
      return failure();
    result = *combined;
  }
  return node.setResult(0, result);
}

/// Pow with a float base. A constant exponent of 1, 2, 3, 0.5, -0.5 or -1
/// becomes multiplications, sqrt, rsqrt or a division (what the exporters'
/// x ** 2 and variance computations mean, exactly); any other exponent is
/// kiln.pow, the exponent cast to the base's type.
LogicalResult convertPow(OnnxNode &node) {
  Value x = node.getInput(0);
  if (failed(node.requireFloat(x, "a base")))
    return failure();
  KilnOpBuilder &b = node.getBuilder();
  Type elementType = getElementTypeOrSelf(x.getType());
  DenseElementsAttr constant = node.getConstantInput(1);
  if (constant && constant.isSplat() && !constant.getElementType().isInteger(1)) {
    double e = llvm::isa<FloatType>(constant.getElementType())
                   ? constant.getSplatValue<APFloat>().convertToDouble()
                   : static_cast<double>(constant.getSplatValue<APInt>().getSExtValue());
    bool scalarShape = constant.getType().getNumElements() == 1;
    if (scalarShape && (e == 1.0 || e == 2.0 || e == 3.0 || e == 0.5 || e == -0.5 ||
                        e == -1.0)) {
      // The exponent may broadcast the base to a larger rank.
      Result base = b.broadcastTo(x, *broadcastShapes(KilnOpBuilder::shapeOf(x),
                                                      constant.getType().getShape()));
      if (failed(base))
        return failure();
      Value v = *base;
      if (e == 1.0)
        return node.setResult(0, v);
      if (e == 2.0)
        return node.setResult(0, b.binary<MulOp>(v, v));
      if (e == 3.0) {
        Result square = b.binary<MulOp>(v, v);
        return node.setResult(0, failed(square) ? square : b.binary<MulOp>(*square, v));
      }
      if (e == 0.5)
        return node.setResult(0, b.unary<SqrtOp>(v));
      if (e == -0.5)
        return node.setResult(0, b.unary<RsqrtOp>(v));
      Result one = b.splatLike(v, 1.0);
      return node.setResult(0, failed(one) ? one : b.binary<DivOp>(*one, v));
    }
  }
  FailureOr<Value> given = node.getInputAsConstant(1);
  if (failed(given))
    return failure();
  Value exponent = *given;
  if (failed(node.requireNumeric(exponent, "an exponent")))
    return failure();
  if (getElementTypeOrSelf(exponent.getType()) != elementType) {
    Result cast = b.cast(exponent, elementType);
    if (failed(cast))
      return failure();
    exponent = *cast;
  }
  return node.setResult(0, b.binary<PowOp>(x, exponent));
}

/// Clip(x, min, max) = min(max(x, min), max): bounds are attributes before
/// opset 11, optional scalar inputs from then on.
LogicalResult convertClip(OnnxNode &node) {
  Value x = node.getInput(0);
  if (failed(node.requireNumeric(x, "an input")))
    return failure();
  KilnOpBuilder &b = node.getBuilder();
  Value low, high;
  if (node.getOpset() < 11) {
    if (node.getNumInputs() > 1)
      return node.emitError() << "takes min and max as attributes before opset 11, got "
                              << node.getNumInputs() << " inputs";
    FailureOr<float> minAttr = node.getFloatAttr("min", -INFINITY);
    FailureOr<float> maxAttr = node.getFloatAttr("max", INFINITY);
    if (failed(minAttr) || failed(maxAttr))
      return failure();
    if (node.hasAttribute("min")) {
      Result v = b.splatLike(x, *minAttr);
      if (failed(v))
        return failure();
      low = *v;
    }
    if (node.hasAttribute("max")) {
      Result v = b.splatLike(x, *maxAttr);
      if (failed(v))
        return failure();
      high = *v;
    }
  } else {
    if (failed(node.refuseAttr("min", "bounds are inputs from opset 11")) ||
        failed(node.refuseAttr("max", "bounds are inputs from opset 11")))
      return failure();
    for (unsigned i : {1u, 2u}) {
      if (!node.hasInput(i))
        continue;
      FailureOr<Value> given = node.getInputAsConstant(i);
      if (failed(given))
        return failure();
      Value bound = *given;
      if (KilnOpBuilder::rankOf(bound) != 0 &&
          staticElementCount(KilnOpBuilder::shapeOf(bound)).value_or(0) != 1)
        return node.emitError() << "expects input #" << i << " ("
                                << (i == 1 ? "min" : "max")
                                << ") to be a scalar, got shape "
                                << formatIntList(KilnOpBuilder::shapeOf(bound));
      (i == 1 ? low : high) = bound;
    }
  }
  Value y = x;
  if (low) {
    Result clipped = b.binary<MaximumOp>(y, low);
    if (failed(clipped))
      return failure();
    y = *clipped;
  }
  if (high) {
    Result clipped = b.binary<MinimumOp>(y, high);
    if (failed(clipped))
      return failure();
    y = *clipped;
  }
  if (KilnOpBuilder::shapeOf(y) != KilnOpBuilder::shapeOf(x))
    return node.emitError() << "expects min and max that do not broadcast the input";
  return node.setResult(0, y);
}

/// Not, And, Or and Xor over booleans.
LogicalResult convertMod(OnnxNode &node) {
  FailureOr<int64_t> fmod = node.getIntAttr("fmod", 0);
  if (failed(fmod))
    return failure();
  if (*fmod != 0 && *fmod != 1)
    return node.emitError() << "expects fmod 0 or 1, got " << *fmod;
  Value lhs = node.getInput(0), rhs = node.getInput(1);
  if (failed(node.requireNumeric(lhs, "inputs")) ||
      failed(node.requireNumeric(rhs, "inputs")))
    return failure();
  if (*fmod == 0 && llvm::isa<FloatType>(getElementTypeOrSelf(lhs.getType())))
    return node.emitError() << "expects fmod 1 for float inputs (the specification's "
                               "rule; fmod 0 is the integer floored remainder)";
  return node.setResult(0, node.getBuilder().mod(lhs, rhs, *fmod != 0));
}

/// IsInf: +infinity when detect_positive (default 1), -infinity when
/// detect_negative (default 1).
LogicalResult convertIsInf(OnnxNode &node) {
  FailureOr<int64_t> negative = node.getIntAttr("detect_negative", 1);
  FailureOr<int64_t> positive = node.getIntAttr("detect_positive", 1);
  if (failed(negative) || failed(positive))
    return failure();
  return buildIsInf(node, *positive != 0, *negative != 0);
}

LogicalResult convertCast(OnnxNode &node) {
  const onnx::AttributeProto *to = node.getAttribute("to");
  if (!to)
    return node.emitError() << "expects attribute 'to'";
  FailureOr<int64_t> dataType = node.getIntAttr("to", 0);
  if (failed(dataType))
    return failure();
  FailureOr<Type> elementType =
      getSupportedElementType(*node.getContext(), *dataType, node.getLoc());
  if (failed(elementType))
    return failure();
  // `saturate` only changes casts to float8 types, which kiln refuses.
  Value x = node.getInput(0);
  if (getElementTypeOrSelf(x.getType()) == *elementType)
    return node.setResult(0, x);
  return node.setResult(0, node.getBuilder().cast(x, *elementType));
}

/// CastLike: Cast to the element type of input #1.
LogicalResult convertCastLike(OnnxNode &node) {
  Value x = node.getInput(0);
  Type elementType = getElementTypeOrSelf(node.getInput(1).getType());
  if (getElementTypeOrSelf(x.getType()) == elementType)
    return node.setResult(0, x);
  return node.setResult(0, node.getBuilder().cast(x, elementType));
}

LogicalResult convertGelu(OnnxNode &node) {
  FailureOr<std::string> approximate =
      node.getStringAttr("approximate", "none");
  if (failed(approximate))
    return failure();
  GeluApproximation approximation;
  if (*approximate == "none")
    approximation = GeluApproximation::exact;
  else if (*approximate == "tanh")
    approximation = GeluApproximation::tanh;
  else
    return node.emitError() << "expects approximate 'none' or 'tanh', got '"
                            << printable(*approximate) << "'";
  Value x = node.getInput(0);
  if (failed(node.requireFloat(x, "an input")))
    return failure();
  return node.setResult(0, node.getBuilder().gelu(x, approximation));
}

/// `value * factor`, or `value` itself when the factor is 1.
Result scale(OnnxNode &node, Value value, float factor) {
  if (factor == 1.0f)
    return value;
  KilnOpBuilder &b = node.getBuilder();
  Result splat = b.splatLike(value, factor);
  if (failed(splat))
    return failure();
  return b.binary<MulOp>(value, *splat);
}

/// Y = alpha * A' B' + beta * C, with C broadcast to [M, N].
LogicalResult convertGemm(OnnxNode &node) {
  FailureOr<float> alpha = node.getFloatAttr("alpha", 1.0f);
  FailureOr<float> beta = node.getFloatAttr("beta", 1.0f);
  FailureOr<int64_t> transA = node.getIntAttr("transA", 0);
  FailureOr<int64_t> transB = node.getIntAttr("transB", 0);
  if (failed(alpha) || failed(beta) || failed(transA) || failed(transB))
    return failure();
  Value a = node.getInput(0), b = node.getInput(1);
  if (KilnOpBuilder::rankOf(a) != 2 || KilnOpBuilder::rankOf(b) != 2)
    return node.emitError()
           << "expects A and B of rank 2, got shapes "
           << formatIntList(KilnOpBuilder::shapeOf(a)) << " and "
           << formatIntList(KilnOpBuilder::shapeOf(b));
  if (failed(node.requireNumeric(a, "A")) ||
      failed(node.requireNumeric(b, "B")))
    return failure();
  bool isFloat = llvm::isa<FloatType>(getElementTypeOrSelf(a.getType()));
  bool useC = node.hasInput(2) && *beta != 0.0f;
  if (!isFloat && (*alpha != 1.0f || (useC && *beta != 1.0f)))
    return node.emitError() << "expects alpha and beta of 1 for an integer "
                               "Gemm, got alpha "
                            << *alpha << " and beta " << *beta;
  KilnOpBuilder &builder = node.getBuilder();
  Result product = builder.matmul(a, b, *transA != 0, *transB != 0);
  if (failed(product))
    return failure();
  Result y = scale(node, *product, *alpha);
  if (failed(y) || !useC)
    return node.setResult(0, y);
  Value c = node.getInput(2);
  ArrayRef<int64_t> outShape = KilnOpBuilder::shapeOf(*y);
  FailureOr<SmallVector<int64_t>> joined =
      broadcastShapes(KilnOpBuilder::shapeOf(c), outShape);
  if (failed(joined) || ArrayRef<int64_t>(*joined) != outShape)
    return node.emitError() << "expects C of a shape that broadcasts to "
                            << formatIntList(outShape) << ", got "
                            << formatIntList(KilnOpBuilder::shapeOf(c));
  Result scaledC = scale(node, c, *beta);
  if (failed(scaledC))
    return failure();
  return node.setResult(0, builder.binary<AddOp>(*y, *scaledC));
}

/// numpy matmul: 1-D operands are promoted to matrices (and the added
/// dimension removed again), batch dimensions broadcast. kiln.matmul takes
/// equal batch dimensions or a matrix rhs, so operands are broadcast first.
LogicalResult convertMatMul(OnnxNode &node) {
  Value a = node.getInput(0), b = node.getInput(1);
  if (failed(node.requireNumeric(a, "inputs")) ||
      failed(node.requireNumeric(b, "inputs")))
    return failure();
  SmallVector<int64_t> aShape(KilnOpBuilder::shapeOf(a));
  SmallVector<int64_t> bShape(KilnOpBuilder::shapeOf(b));
  if (aShape.empty() || bShape.empty())
    return node.emitError()
           << "expects inputs of rank >= 1, got shapes "
           << formatIntList(aShape) << " and " << formatIntList(bShape);
  bool vectorA = aShape.size() == 1, vectorB = bShape.size() == 1;
  if (vectorA)
    aShape.insert(aShape.begin(), 1);
  if (vectorB)
    bShape.push_back(1);
  int64_t kA = aShape.back(), kB = bShape[bShape.size() - 2];
  if (kA != kB && !ShapedType::isDynamic(kA) && !ShapedType::isDynamic(kB))
    return node.emitError()
           << "expects the inner dimensions to agree, got shapes "
           << formatIntList(KilnOpBuilder::shapeOf(a)) << " and "
           << formatIntList(KilnOpBuilder::shapeOf(b)) << " (" << kA << " vs "
           << kB << ")";

  KilnOpBuilder &builder = node.getBuilder();
  ArrayRef<int64_t> aBatch = ArrayRef<int64_t>(aShape).drop_back(2);
  ArrayRef<int64_t> bBatch = ArrayRef<int64_t>(bShape).drop_back(2);
  SmallVector<int64_t> batch(aBatch);
  Result lhs = builder.reshape(a, aShape);
  Result rhs = builder.reshape(b, bShape);
  if (failed(lhs) || failed(rhs))
    return failure();
  if (!bBatch.empty()) {
    FailureOr<SmallVector<int64_t>> joined = broadcastShapes(aBatch, bBatch);
    if (failed(joined))
      return node.emitError()
             << "cannot broadcast the batch dimensions "
             << formatIntList(aBatch) << " and " << formatIntList(bBatch);
    batch = *joined;
    SmallVector<int64_t> lhsShape(batch), rhsShape(batch);
    llvm::append_range(lhsShape, ArrayRef<int64_t>(aShape).take_back(2));
    llvm::append_range(rhsShape, ArrayRef<int64_t>(bShape).take_back(2));
    lhs = builder.broadcastTo(*lhs, lhsShape);
    rhs = builder.broadcastTo(*rhs, rhsShape);
    if (failed(lhs) || failed(rhs))
      return failure();
  }
  Result product = builder.matmul(*lhs, *rhs);
  if (failed(product))
    return failure();
  SmallVector<int64_t> resultShape(batch);
  if (!vectorA)
    resultShape.push_back(aShape[aShape.size() - 2]);
  if (!vectorB)
    resultShape.push_back(bShape.back());
  return node.setResult(0, builder.reshape(*product, resultShape));
}

constexpr OnnxOpConversion kMathOps[] = {
    {"Relu", 1, 1, 1, "", convertNumericUnary<ReluOp>},
    {"Neg", 1, 1, 1, "", convertNumericUnary<NegOp>},
    {"Sigmoid", 1, 1, 1, "", convertFloatUnary<SigmoidOp>},
    {"Tanh", 1, 1, 1, "", convertFloatUnary<TanhOp>},
    {"Exp", 1, 1, 1, "", convertFloatUnary<ExpOp>},
    {"Log", 1, 1, 1, "", convertFloatUnary<LogOp>},
    {"Sqrt", 1, 1, 1, "", convertFloatUnary<SqrtOp>},
    {"Erf", 1, 1, 1, "", convertFloatUnary<ErfOp>},
    {"Abs", 1, 1, 1, "", convertNumericUnary<AbsOp>},
    {"Sin", 1, 1, 1, "", convertFloatUnary<SinOp>, 7},
    {"Cos", 1, 1, 1, "", convertFloatUnary<CosOp>, 7},
    {"Atan", 1, 1, 1, "", convertFloatUnary<AtanOp>, 7},
    {"Floor", 1, 1, 1, "", convertFloatUnary<FloorOp>},
    {"Ceil", 1, 1, 1, "", convertFloatUnary<CeilOp>},
    {"Round", 1, 1, 1, "", convertFloatUnary<RoundOp>, 11},
    {"Sign", 1, 1, 1, "", convertSign, 9},
    {"IsNaN", 1, 1, 1, "", convertIsNaN, 9},
    {"IsInf", 1, 1, 1, "detect_negative detect_positive", convertIsInf, 10},
    {"Reciprocal", 1, 1, 1, "", convertReciprocal},
    {"Pow", 2, 2, 1, "", convertPow},
    {"Clip", 1, 3, 1, "min max", convertClip},
    {"Mod", 2, 2, 1, "fmod", convertMod, 10},
    {"Not", 1, 1, 1, "", convertLogicalNot},
    {"And", 2, 2, 1, "", convertLogical<LogicalKind::And>},
    {"Or", 2, 2, 1, "", convertLogical<LogicalKind::Or>},
    {"Xor", 2, 2, 1, "", convertLogical<LogicalKind::Xor>},
    {"CastLike", 2, 2, 1, "saturate", convertCastLike, 15},
    {"Gelu", 1, 1, 1, "approximate", convertGelu, 20},
    {"Add", 2, 2, 1, "", convertArithmetic<AddOp>},
    {"Sub", 2, 2, 1, "", convertArithmetic<SubOp>},
    {"Mul", 2, 2, 1, "", convertArithmetic<MulOp>},
    {"Div", 2, 2, 1, "", convertArithmetic<DivOp>},
    {"Max", 1, OnnxOpConversion::kVariadic, 1, "",
     convertVariadicMinMax<MaximumOp>},
    {"Min", 1, OnnxOpConversion::kVariadic, 1, "",
     convertVariadicMinMax<MinimumOp>},
    {"Equal", 2, 2, 1, "", convertCompare<ComparePredicate::eq>},
    {"Less", 2, 2, 1, "", convertCompare<ComparePredicate::lt>},
    {"LessOrEqual", 2, 2, 1, "", convertCompare<ComparePredicate::le>},
    {"Greater", 2, 2, 1, "", convertCompare<ComparePredicate::gt>},
    {"GreaterOrEqual", 2, 2, 1, "", convertCompare<ComparePredicate::ge>},
    {"Where", 3, 3, 1, "", convertWhere},
    {"Cast", 1, 1, 1, "to saturate", convertCast},
    {"Gemm", 2, 3, 1, "alpha beta transA transB", convertGemm},
    {"MatMul", 2, 2, 1, "", convertMatMul},
};

} // namespace

ArrayRef<OnnxOpConversion> getOnnxMathOps() { return kMathOps; }

} // namespace kiln
