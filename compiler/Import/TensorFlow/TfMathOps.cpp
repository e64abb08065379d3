//===- TfMathOps.cpp - TensorFlow elementwise, matrix and reduction ops ---===//
//
// Unary and binary math, logic, AddN, Cast, Softmax, MatMul, BatchMatMul,
// Einsum, BiasAdd and the reductions (Any and All of booleans too). Binary ops broadcast numpy-style through
// KilnOpBuilder, as TensorFlow's do.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/TensorFlow/TfOps.h"

#include "compiler/Import/Activations.h"
#include "compiler/Import/DiagnosticText.h"
#include "compiler/Import/Einsum.h"
#include "compiler/Import/ElementwiseConversions.h"
#include "compiler/Import/TensorFlow/TfTensor.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace kiln {
namespace {

using Result = KilnOpBuilder::Result;

/// RealDiv, and Div, which truncates integers toward zero as kiln.div does.
LogicalResult convertDiv(TfNode &node) {
  return convertArithmetic<DivOp>(node);
}

/// (x - y)^2.
LogicalResult convertSquaredDifference(TfNode &node) {
  Value lhs = node.getInput(0), rhs = node.getInput(1);
  if (failed(node.requireNumeric(lhs, "inputs")) ||
      failed(node.requireNumeric(rhs, "inputs")))
    return failure();
  KilnOpBuilder &b = node.getBuilder();
  Result difference = b.binary<SubOp>(lhs, rhs);
  if (failed(difference))
    return failure();
  return node.setResult(0, b.binary<MulOp>(*difference, *difference));
}

LogicalResult convertSquare(TfNode &node) {
  Value x = node.getInput(0);
  if (failed(node.requireNumeric(x, "an input")))
    return failure();
  return node.setResult(0, node.getBuilder().binary<MulOp>(x, x));
}

/// min(relu(x), 6).
LogicalResult convertRelu6(TfNode &node) {
  Value x = node.getInput(0);
  if (failed(node.requireNumeric(x, "an input")))
    return failure();
  KilnOpBuilder &b = node.getBuilder();
  Result relu = b.unary<ReluOp>(x);
  Result six = b.splatLike(x, 6.0);
  if (failed(relu) || failed(six))
    return failure();
  return node.setResult(0, b.binary<MinimumOp>(*relu, *six));
}

/// Erfc: 1 - erf(x) (Keras' default gelu writes it; it loses precision
/// where erf(x) nears 1, beyond x of about 4, which gelu multiplies by x).
LogicalResult convertErfc(TfNode &node) {
  Value x = node.getInput(0);
  if (failed(node.requireFloat(x, "an input")))
    return failure();
  KilnOpBuilder &b = node.getBuilder();
  Result erf = b.unary<ErfOp>(x);
  Result one = b.splatLike(x, 1.0);
  if (failed(erf) || failed(one))
    return failure();
  return node.setResult(0, b.binary<SubOp>(*one, *erf));
}

/// Minimum; min(max(v, a), b) of integer scalars with a >= b known at
/// import time is b whatever v is: tf.math.bincount's output size with
/// minlength == maxlength (Keras' CategoryEncoding), which DenseBincount
/// needs known. (Not floats: a NaN v gives NaN.)
LogicalResult convertMinimum(TfNode &node) {
  auto scalarOf = [](Value value) -> std::optional<int64_t> {
    DenseElementsAttr constant = KilnOpBuilder::constantValueOf(value);
    if (!constant || constant.getType().getRank() != 0)
      return std::nullopt;
    auto i = llvm::dyn_cast<IntegerAttr>(*constant.value_begin<Attribute>());
    if (!i || i.getType().isInteger(1))
      return std::nullopt;
    return i.getValue().getSExtValue();
  };
  for (unsigned k : {0u, 1u}) {
    Value bound = node.getInput(k), other = node.getInput(1 - k);
    auto maximum = other.getDefiningOp<MaximumOp>();
    std::optional<int64_t> upper = scalarOf(bound);
    if (!maximum || !upper || KilnOpBuilder::rankOf(other) != 0)
      continue;
    for (Value operand : maximum->getOperands())
      if (std::optional<int64_t> lower = scalarOf(operand); lower && *lower >= *upper) {
        node.setConstantResult(0, KilnOpBuilder::constantValueOf(bound));
        return success();
      }
  }
  return convertArithmetic<MinimumOp>(node);
}

/// Softsign: x / (1 + |x|).
LogicalResult convertSoftsign(TfNode &node) {
  Value x = node.getInput(0);
  if (failed(node.requireFloat(x, "an input")))
    return failure();
  KilnOpBuilder &b = node.getBuilder();
  Result magnitude = b.unary<AbsOp>(x);
  Result one = b.splatLike(x, 1.0);
  Result denominator = succeeded(magnitude) && succeeded(one)
                           ? b.binary<AddOp>(*one, *magnitude) : Result(failure());
  return node.setResult(0, succeeded(denominator) ? b.binary<DivOp>(x, *denominator)
                                                  : denominator);
}

/// IsInf: either infinity.
LogicalResult convertIsInf(TfNode &node) { return buildIsInf(node, true, true); }

/// Round: halves to even; integers are their own rounding.
LogicalResult convertRound(TfNode &node) {
  Value x = node.getInput(0);
  if (failed(node.requireNumeric(x, "an input")))
    return failure();
  if (!llvm::isa<FloatType>(getElementTypeOrSelf(x.getType())))
    return node.setResult(0, x);
  return node.setResult(0, node.getBuilder().unary<RoundOp>(x));
}

/// FloorMod (Python's %: the sign of the divisor) and TruncateMod (C's
/// fmod: the sign of the dividend), of integers or floats.
template <bool Truncated> LogicalResult convertRemainder(TfNode &node) {
  Value lhs = node.getInput(0), rhs = node.getInput(1);
  if (failed(node.requireNumeric(lhs, "inputs")) || failed(node.requireNumeric(rhs, "inputs")))
    return failure();
  return node.setResult(0, node.getBuilder().mod(lhs, rhs, Truncated));
}

/// FloorDiv (Python's //): floor(x / y) of floats; of integers the
/// truncated quotient less 1 where the truncated remainder is nonzero and
/// of the other sign than y, which cannot overflow (x - x mod y can:
/// INT_MIN // 3).
LogicalResult convertFloorDiv(TfNode &node) {
  Value lhs = node.getInput(0), rhs = node.getInput(1);
  if (failed(node.requireNumeric(lhs, "inputs")) || failed(node.requireNumeric(rhs, "inputs")))
    return failure();
  KilnOpBuilder &b = node.getBuilder();
  Result quotient = b.binary<DivOp>(lhs, rhs);
  if (failed(quotient) || llvm::isa<FloatType>(getElementTypeOrSelf(lhs.getType())))
    return node.setResult(0, succeeded(quotient) ? b.unary<FloorOp>(*quotient) : quotient);
  Result remainder = b.mod(lhs, rhs, true);
  Result zero = b.splatLike(*quotient, 0), one = b.splatLike(*quotient, 1);
  if (failed(remainder) || failed(zero) || failed(one))
    return failure();
  Result inexact = b.compare(ComparePredicate::ne, *remainder, *zero);
  Result remainderBelow = b.compare(ComparePredicate::lt, *remainder, *zero);
  Result divisorBelow = b.compare(ComparePredicate::lt, rhs, *zero);
  Result lower = b.binary<SubOp>(*quotient, *one);
  if (failed(inexact) || failed(remainderBelow) || failed(divisorBelow) || failed(lower))
    return failure();
  Result signsDiffer = b.compare(ComparePredicate::ne, *remainderBelow, *divisorBelow);
  Result down = succeeded(signsDiffer) ? b.select(*inexact, *signsDiffer, *inexact) : signsDiffer;
  return node.setResult(0, succeeded(down) ? b.select(*down, *lower, *quotient) : down);
}

/// Expm1 (exp(x) - 1) and Log1p (log(1 + x)) without the cancellation near
/// 0: for |x| < 0.5 Kahan's forms, (e - 1) x / log(e) with e = exp(x) and
/// log(u) x / (u - 1) with u = 1 + x (x itself where e or u rounds to 1);
/// the plain forms elsewhere. The unused branch sees 2 for e or u, so no
/// gradient divides by zero.
template <bool Exp> Result buildNearZero(KilnOpBuilder &b, Value x) {
  Result one = b.splatLike(x, 1), two = b.splatLike(x, 2), half = b.splatLike(x, 0.5);
  Result magnitude = b.unary<AbsOp>(x);
  if (failed(one) || failed(two) || failed(half) || failed(magnitude))
    return failure();
  Result e = Exp ? b.unary<ExpOp>(x) : b.binary<AddOp>(*one, x);
  Result near = b.compare(ComparePredicate::lt, *magnitude, *half);
  Result unit = succeeded(e) ? b.compare(ComparePredicate::eq, *e, *one) : e;
  if (failed(e) || failed(near) || failed(unit))
    return failure();
  Result nearE = b.select(*near, *e, *two);
  Result safe = succeeded(nearE) ? b.select(*unit, *two, *nearE) : nearE;
  Result safeLog = succeeded(safe) ? b.unary<LogOp>(*safe) : safe;
  Result safeLess = succeeded(safe) ? b.binary<SubOp>(*safe, *one) : safe;
  Result scaled = succeeded(safeLog) && succeeded(safeLess)
                      ? b.binary<DivOp>(Exp ? *safeLess : *safeLog, Exp ? *safeLog : *safeLess)
                      : Result(failure());
  Result kahan = succeeded(scaled) ? b.binary<MulOp>(*scaled, x) : scaled;
  Result plain = Exp ? b.binary<SubOp>(*e, *one) : b.unary<LogOp>(*e);
  Result chosen = succeeded(kahan) && succeeded(plain) ? b.select(*near, *kahan, *plain)
                                                       : Result(failure());
  return succeeded(chosen) ? b.select(*unit, x, *chosen) : chosen;
}

template <bool Exp> LogicalResult convertNearZero(TfNode &node) {
  Value x = node.getInput(0);
  if (failed(node.requireFloat(x, "an input")))
    return failure();
  return node.setResult(0, buildNearZero<Exp>(node.getBuilder(), x));
}

/// Sinh as (expm1(x) - expm1(-x)) / 2, every digit near 0 (e^x - e^-x
/// cancels there); Cosh as (e^x + e^-x) / 2.
template <bool Sinh> LogicalResult convertHyperbolic(TfNode &node) {
  Value x = node.getInput(0);
  if (failed(node.requireFloat(x, "an input")))
    return failure();
  KilnOpBuilder &b = node.getBuilder();
  Result negated = b.unary<NegOp>(x), half = b.splatLike(x, 0.5);
  if (failed(negated) || failed(half))
    return failure();
  Result up = Sinh ? buildNearZero<true>(b, x) : b.unary<ExpOp>(x);
  Result down = Sinh ? buildNearZero<true>(b, *negated) : b.unary<ExpOp>(*negated);
  if (failed(up) || failed(down))
    return failure();
  Result sum = Sinh ? b.binary<SubOp>(*up, *down) : b.binary<AddOp>(*up, *down);
  return node.setResult(0, succeeded(sum) ? b.binary<MulOp>(*sum, *half) : sum);
}

/// Select (TF1): as SelectV2 where the condition has the values' shape or
/// is a scalar; a vector condition choosing whole rows is refused.
LogicalResult convertSelect(TfNode &node) {
  auto condition = llvm::cast<RankedTensorType>(node.getInput(0).getType());
  auto values = llvm::cast<RankedTensorType>(node.getInput(1).getType());
  if (condition.getRank() != 0 && condition.getShape() != values.getShape())
    return node.emitError() << "a condition of shape " << formatShape(condition.getShape())
                            << " choosing rows of " << formatShape(values.getShape())
                            << " is not supported (SelectV2's broadcasting is)";
  return convertWhere(node);
}

/// x where x > 0, else alpha * x.
LogicalResult convertLeakyRelu(TfNode &node) {
  Value x = node.getInput(0);
  FailureOr<float> alpha = node.getFloatAttr("alpha", 0.2f);
  if (failed(alpha) || failed(node.requireFloat(x, "an input")))
    return failure();
  return node.setResult(0, buildLeakyRelu(node.getBuilder(), x, *alpha));
}

/// Elu (alpha 1) and Selu (TensorFlow's fixed alpha and scale).
template <bool Scaled> LogicalResult convertElu(TfNode &node) {
  Value x = node.getInput(0);
  if (failed(node.requireFloat(x, "an input")))
    return failure();
  if (!Scaled)
    return node.setResult(0, buildElu(node.getBuilder(), x, 1.0));
  return node.setResult(0, buildElu(node.getBuilder(), x, 1.6732632423543772848170429916717,
                                    1.0507009873554804934193349852946));
}

LogicalResult convertSoftplus(TfNode &node) {
  Value x = node.getInput(0);
  if (failed(node.requireFloat(x, "an input")))
    return failure();
  return node.setResult(0, buildSoftplus(node.getBuilder(), x));
}

/// Pow with a float base; a constant exponent 2 is x * x and 0.5 is
/// sqrt(x), exactly what they mean.
LogicalResult convertPow(TfNode &node) {
  Value x = node.getInput(0), y = node.getInput(1);
  if (failed(node.requireFloat(x, "a base")) ||
      failed(node.requireFloat(y, "an exponent")))
    return failure();
  KilnOpBuilder &b = node.getBuilder();
  DenseElementsAttr exponent = node.getConstantInput(1);
  if (exponent && exponent.getNumElements() == 1 &&
      exponent.getType().getRank() == 0) {
    double e = (*exponent.getValues<APFloat>().begin()).convertToDouble();
    if (e == 2.0)
      return node.setResult(0, b.binary<MulOp>(x, x));
    if (e == 0.5)
      return node.setResult(0, b.unary<SqrtOp>(x));
  }
  return node.setResult(0, b.binary<PowOp>(x, y));
}

/// AddN: the sum of its inputs, of one shape.
LogicalResult convertAddN(TfNode &node) {
  Value sum = node.getInput(0);
  if (failed(node.requireNumeric(sum, "inputs")))
    return failure();
  for (unsigned i = 1, e = node.getNumInputs(); i < e; ++i) {
    Result next = node.getBuilder().binary<AddOp>(sum, node.getInput(i));
    if (failed(next))
      return failure();
    sum = *next;
  }
  return node.setResult(0, sum);
}

LogicalResult convertCast(TfNode &node) {
  FailureOr<int> target = node.getTypeAttr("DstT");
  FailureOr<bool> truncate = node.getBoolAttr("Truncate", false);
  if (failed(target) || failed(truncate))
    return failure();
  FailureOr<Type> elementType =
      getSupportedTfElementType(*node.getContext(), *target, node.getLoc());
  if (failed(elementType))
    return failure();
  Value x = node.getInput(0);
  if (getElementTypeOrSelf(x.getType()) == *elementType)
    return node.setResult(0, x);
  return node.setResult(0, node.getBuilder().cast(x, *elementType));
}

/// Softmax and LogSoftmax along the last axis.
template <typename OpTy> LogicalResult convertSoftmax(TfNode &node) {
  Value x = node.getInput(0);
  if (failed(node.requireFloat(x, "logits")))
    return failure();
  int64_t rank = KilnOpBuilder::rankOf(x);
  if (rank < 1)
    return node.emitError() << "expects logits of rank >= 1, got a scalar";
  return node.setResult(0, node.getBuilder().softmax<OpTy>(x, rank - 1));
}

LogicalResult convertMatMul(TfNode &node) {
  Value a = node.getInput(0), b = node.getInput(1);
  FailureOr<bool> transposeA = node.getBoolAttr("transpose_a", false);
  FailureOr<bool> transposeB = node.getBoolAttr("transpose_b", false);
  if (failed(transposeA) || failed(transposeB) ||
      failed(node.requireRank(a, 2, "a matrix a")) ||
      failed(node.requireRank(b, 2, "a matrix b")) ||
      failed(node.requireNumeric(a, "inputs")))
    return failure();
  return node.setResult(
      0, node.getBuilder().matmul(a, b, *transposeA, *transposeB));
}

/// BatchMatMul, V2 and V3: matrices in the last two dimensions, the batch
/// dimensions broadcast (V2, V3); adj_x and adj_y transpose (real types).
LogicalResult convertBatchMatMul(TfNode &node) {
  Value a = node.getInput(0), b = node.getInput(1);
  FailureOr<bool> adjX = node.getBoolAttr("adj_x", false);
  FailureOr<bool> adjY = node.getBoolAttr("adj_y", false);
  if (failed(adjX) || failed(adjY) || failed(node.requireNumeric(a, "inputs")))
    return failure();
  ArrayRef<int64_t> aShape = KilnOpBuilder::shapeOf(a);
  ArrayRef<int64_t> bShape = KilnOpBuilder::shapeOf(b);
  if (aShape.size() < 2 || bShape.size() < 2)
    return node.emitError()
           << "expects inputs of rank >= 2, got shapes "
           << formatIntList(aShape) << " and " << formatIntList(bShape);
  ArrayRef<int64_t> aBatch = aShape.drop_back(2), bBatch = bShape.drop_back(2);
  FailureOr<SmallVector<int64_t>> batch = broadcastShapes(aBatch, bBatch);
  if (failed(batch))
    return node.emitError()
           << "cannot broadcast the batch dimensions " << formatIntList(aBatch)
           << " and " << formatIntList(bBatch);
  KilnOpBuilder &builder = node.getBuilder();
  SmallVector<int64_t> lhsShape(*batch), rhsShape(*batch);
  llvm::append_range(lhsShape, aShape.take_back(2));
  llvm::append_range(rhsShape, bShape.take_back(2));
  Result lhs = builder.broadcastTo(a, lhsShape);
  // A matrix rhs needs no copies: kiln.matmul takes it as it is.
  Result rhs =
      bShape.size() == 2 ? Result(b) : builder.broadcastTo(b, rhsShape);
  if (failed(lhs) || failed(rhs))
    return failure();
  return node.setResult(0, builder.matmul(*lhs, *rhs, *adjX, *adjY));
}

/// BiasAdd: a bias [C] added along the channels, the last dimension (NHWC)
/// or dimension 1 (NCHW).
LogicalResult convertBiasAdd(TfNode &node) {
  Value x = node.getInput(0), bias = node.getInput(1);
  FailureOr<std::string> format = node.getStringAttr("data_format", "NHWC");
  if (failed(format) || failed(node.requireNumeric(x, "an input")))
    return failure();
  if (*format != "NHWC" && *format != "NCHW")
    return node.emitError()
           << "expects data_format NHWC or NCHW, got '" << *format << "'";
  ArrayRef<int64_t> shape = KilnOpBuilder::shapeOf(x);
  if (shape.size() < 2)
    return node.emitError() << "expects an input of rank >= 2, got shape "
                            << formatIntList(shape);
  int64_t channelAxis = *format == "NHWC" ? shape.size() - 1 : 1;
  ArrayRef<int64_t> biasShape = KilnOpBuilder::shapeOf(bias);
  if (biasShape.size() != 1 || biasShape[0] != shape[channelAxis])
    return node.emitError()
           << "expects a bias of shape [" << shape[channelAxis]
           << "] (the input's channels), got " << formatIntList(biasShape);
  KilnOpBuilder &b = node.getBuilder();
  Result aligned = bias;
  if (channelAxis != static_cast<int64_t>(shape.size()) - 1) {
    SmallVector<int64_t> target(shape.size() - channelAxis, 1);
    target[0] = shape[channelAxis];
    aligned = b.reshape(bias, target);
  }
  if (failed(aligned))
    return failure();
  return node.setResult(0, b.binary<AddOp>(x, *aligned));
}

/// Mean, Sum, Max and Min over constant axes (reduction_indices); no axes
/// leave the input as it is. Min is -max(-x).
template <typename OpTy, bool FloatOnly, bool Negated = false>
LogicalResult convertReduce(TfNode &node) {
  Value x = node.getInput(0);
  if (failed(FloatOnly ? node.requireFloat(x, "an input")
                       : node.requireNumeric(x, "an input")))
    return failure();
  FailureOr<bool> keepDims = node.getBoolAttr("keep_dims", false);
  FailureOr<SmallVector<int64_t>> axes = node.getConstantInts(1, "axes");
  if (failed(keepDims) || failed(axes))
    return failure();
  FailureOr<SmallVector<int64_t>> reduced =
      node.normalizeAxes(*axes, KilnOpBuilder::rankOf(x));
  if (failed(reduced))
    return failure();
  if (reduced->empty())
    return node.setResult(0, x);
  KilnOpBuilder &b = node.getBuilder();
  if (!Negated)
    return node.setResult(0, b.reduce<OpTy>(x, *reduced, *keepDims));
  Result flipped = b.unary<NegOp>(x);
  if (succeeded(flipped))
    flipped = b.reduce<OpTy>(*flipped, *reduced, *keepDims);
  if (succeeded(flipped))
    flipped = b.unary<NegOp>(*flipped);
  return node.setResult(0, flipped);
}

/// Any and All of booleans: cast to integers, reduced by max (All: min, as
/// -max(-x)), compared with 0. Keras' Masking layer writes Any.
template <bool All> LogicalResult convertAnyAll(TfNode &node) {
  Value x = node.getInput(0);
  FailureOr<bool> keepDims = node.getBoolAttr("keep_dims", false);
  FailureOr<SmallVector<int64_t>> axes = node.getConstantInts(1, "axes");
  if (failed(requireBool(node, x)) || failed(keepDims) || failed(axes))
    return failure();
  FailureOr<SmallVector<int64_t>> reduced = node.normalizeAxes(*axes, KilnOpBuilder::rankOf(x));
  if (failed(reduced))
    return failure();
  if (reduced->empty())
    return node.setResult(0, x);
  KilnOpBuilder &b = node.getBuilder();
  Result n = b.cast(x, b.getBuilder().getI32Type());
  if (All && succeeded(n))
    n = b.unary<NegOp>(*n);
  if (succeeded(n))
    n = b.reduce<ReduceMaxOp>(*n, *reduced, *keepDims);
  Result zero = succeeded(n) ? b.splatLike(*n, 0.0) : n;
  if (failed(zero))
    return failure();
  // Any: max(x) != 0. All: max(-x) is -1 when every element is 1, 0 when
  // one is 0: != 0 too.
  return node.setResult(0, b.compare(ComparePredicate::ne, *n, *zero));
}

/// Einsum (Keras' MultiHeadAttention and EinsumDense).
LogicalResult convertEinsum(TfNode &node) {
  FailureOr<std::string> equation = node.getStringAttr("equation", "");
  if (failed(equation))
    return failure();
  return buildEinsum(node, *equation, node.getNumInputs());
}

constexpr TfOpConversion kMathOps[] = {
    {"AddV2", 2, 2, "T", convertArithmetic<AddOp>},
    {"Add", 2, 2, "T", convertArithmetic<AddOp>},
    {"Sub", 2, 2, "T", convertArithmetic<SubOp>},
    {"Mul", 2, 2, "T", convertArithmetic<MulOp>},
    {"RealDiv", 2, 2, "T", convertDiv},
    {"Div", 2, 2, "T", convertDiv},
    {"Maximum", 2, 2, "T", convertArithmetic<MaximumOp>},
    {"Minimum", 2, 2, "T", convertMinimum},
    {"SquaredDifference", 2, 2, "T", convertSquaredDifference},
    {"Pow", 2, 2, "T", convertPow},
    {"AddN", 1, TfOpConversion::kVariadic, "N T", convertAddN},
    {"Neg", 1, 1, "T", convertNumericUnary<NegOp>},
    {"Abs", 1, 1, "T", convertNumericUnary<AbsOp>},
    {"Relu", 1, 1, "T", convertNumericUnary<ReluOp>},
    {"Relu6", 1, 1, "T", convertRelu6},
    {"LeakyRelu", 1, 1, "T alpha", convertLeakyRelu},
    {"Elu", 1, 1, "T", convertElu<false>},
    {"Selu", 1, 1, "T", convertElu<true>},
    {"Softplus", 1, 1, "T", convertSoftplus},
    {"Sigmoid", 1, 1, "T", convertFloatUnary<SigmoidOp>},
    {"Tanh", 1, 1, "T", convertFloatUnary<TanhOp>},
    {"Exp", 1, 1, "T", convertFloatUnary<ExpOp>},
    {"Log", 1, 1, "T", convertFloatUnary<LogOp>},
    {"Sqrt", 1, 1, "T", convertFloatUnary<SqrtOp>},
    {"Rsqrt", 1, 1, "T", convertFloatUnary<RsqrtOp>},
    {"Erf", 1, 1, "T", convertFloatUnary<ErfOp>},
    {"Erfc", 1, 1, "T", convertErfc},
    {"Softsign", 1, 1, "T", convertSoftsign},
    {"Sign", 1, 1, "T", convertSign},
    {"IsFinite", 1, 1, "T", convertIsFinite},
    {"IsNan", 1, 1, "T", convertIsNaN},
    {"IsInf", 1, 1, "T", convertIsInf},
    {"Sin", 1, 1, "T", convertFloatUnary<SinOp>},
    {"Cos", 1, 1, "T", convertFloatUnary<CosOp>},
    {"Atan", 1, 1, "T", convertFloatUnary<AtanOp>},
    {"Sinh", 1, 1, "T", convertHyperbolic<true>},
    {"Cosh", 1, 1, "T", convertHyperbolic<false>},
    {"Floor", 1, 1, "T", convertFloatUnary<FloorOp>},
    {"Ceil", 1, 1, "T", convertFloatUnary<CeilOp>},
    {"Round", 1, 1, "T", convertRound},
    {"Rint", 1, 1, "T", convertFloatUnary<RoundOp>},
    {"FloorMod", 2, 2, "T", convertRemainder<false>},
    {"TruncateMod", 2, 2, "T", convertRemainder<true>},
    {"FloorDiv", 2, 2, "T", convertFloorDiv},
    {"Expm1", 1, 1, "T", convertNearZero<true>},
    {"Log1p", 1, 1, "T", convertNearZero<false>},
    {"Less", 2, 2, "T", convertCompare<ComparePredicate::lt>},
    {"LessEqual", 2, 2, "T", convertCompare<ComparePredicate::le>},
    {"Greater", 2, 2, "T", convertCompare<ComparePredicate::gt>},
    {"GreaterEqual", 2, 2, "T", convertCompare<ComparePredicate::ge>},
    {"Equal", 2, 2, "T incompatible_shape_error", convertCompare<ComparePredicate::eq>},
    {"NotEqual", 2, 2, "T incompatible_shape_error", convertCompare<ComparePredicate::ne>},
    {"LogicalAnd", 2, 2, "", convertLogical<LogicalKind::And>},
    {"LogicalOr", 2, 2, "", convertLogical<LogicalKind::Or>},
    {"LogicalNot", 1, 1, "", convertLogicalNot},
    {"SelectV2", 3, 3, "T", convertWhere},
    {"Select", 3, 3, "T", convertSelect},
    {"Square", 1, 1, "T", convertSquare},
    {"Reciprocal", 1, 1, "T", convertReciprocal},
    {"Inv", 1, 1, "T", convertReciprocal},
    {"Cast", 1, 1, "SrcT DstT Truncate", convertCast},
    {"Softmax", 1, 1, "T", convertSoftmax<SoftmaxOp>},
    {"LogSoftmax", 1, 1, "T", convertSoftmax<LogSoftmaxOp>},
    {"MatMul", 2, 2, "T transpose_a transpose_b grad_a grad_b", convertMatMul},
    {"BatchMatMul", 2, 2, "T adj_x adj_y", convertBatchMatMul},
    {"BatchMatMulV2", 2, 2, "T adj_x adj_y grad_x grad_y", convertBatchMatMul},
    {"BatchMatMulV3", 2, 2, "Ta Tb Tout adj_x adj_y grad_x grad_y",
     convertBatchMatMul},
    {"BiasAdd", 2, 2, "T data_format", convertBiasAdd},
    {"Mean", 2, 2, "T Tidx keep_dims", convertReduce<ReduceMeanOp, true>},
    {"Sum", 2, 2, "T Tidx keep_dims", convertReduce<ReduceSumOp, false>},
    {"Max", 2, 2, "T Tidx keep_dims", convertReduce<ReduceMaxOp, false>},
    {"Any", 2, 2, "Tidx keep_dims", convertAnyAll<false>},
    {"All", 2, 2, "Tidx keep_dims", convertAnyAll<true>},
    {"Einsum", 1, TfOpConversion::kVariadic, "N T equation", convertEinsum},
    {"Min", 2, 2, "T Tidx keep_dims", convertReduce<ReduceMaxOp, false, true>},
};

} // namespace

ArrayRef<TfOpConversion> getTfMathOps() { return kMathOps; }

} // namespace kiln
