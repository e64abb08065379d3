//===- KilnFolds.cpp - Folders of kiln ops --------------------------------===//
//
// The obvious simplifications, run by `canonicalize`: constants, identities
// (x * 1, reshape to the same type, ...) and chains of shape ops that compose
// into one.
//
//===----------------------------------------------------------------------===//

#include "dialects/Kiln/KilnOps.h"

#include "dialects/Kiln/KilnConstantEval.h"

#include "mlir/Dialect/CommonFolders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace kiln;

namespace {

using FloatFn = function_ref<std::optional<APFloat>(APFloat, APFloat)>;
using IntFn = function_ref<std::optional<APInt>(APInt, APInt)>;

/// Folds a binary op of type `type` whose operands are both constants. The
/// element type picks the function: the common folder reads a splat as the
/// value type it is given, whatever the attribute holds.
OpFoldResult foldConstants(Type type, ArrayRef<Attribute> operands,
                           FloatFn onFloats, IntFn onInts) {
  Type elementType = getElementTypeOrSelf(type);
  if (llvm::isa<FloatType>(elementType))
    return constFoldBinaryOpConditional<FloatAttr, APFloat, void>(operands,
                                                                  onFloats);
  if (llvm::isa<IntegerType>(elementType))
    return constFoldBinaryOpConditional<IntegerAttr, APInt, void>(operands,
                                                                  onInts);
  return {};
}

/// A splat constant of `type` holding `operand`'s splat value, or null.
Attribute resplat(Attribute operand, Type type) {
  auto splat = llvm::dyn_cast_if_present<SplatElementsAttr>(operand);
  auto shaped = llvm::dyn_cast<RankedTensorType>(type);
  if (!splat || !shaped || !shaped.hasStaticShape())
    return {};
  return SplatElementsAttr::get(shaped, splat.getSplatValue<Attribute>());
}

} // namespace

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  if (matchPattern(getRhs(), m_Zero()))
    return getLhs();
  // x + (-0.0) is x for every float x, including -0.0.
  if (matchPattern(getRhs(), m_NegZeroFloat()))
    return getLhs();
  return foldConstants(
      getType(), adaptor.getOperands(),
      [](APFloat a, APFloat b) -> std::optional<APFloat> { return a + b; },
      [](APInt a, APInt b) -> std::optional<APInt> { return a + b; });
}

OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  if (matchPattern(getRhs(), m_Zero()) || matchPattern(getRhs(), m_PosZeroFloat()))
    return getLhs();
  return foldConstants(
      getType(), adaptor.getOperands(),
      [](APFloat a, APFloat b) -> std::optional<APFloat> { return a - b; },
      [](APInt a, APInt b) -> std::optional<APInt> { return a - b; });
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  if (matchPattern(getRhs(), m_One()) || matchPattern(getRhs(), m_OneFloat()))
    return getLhs();
  return foldConstants(
      getType(), adaptor.getOperands(),
      [](APFloat a, APFloat b) -> std::optional<APFloat> { return a * b; },
      [](APInt a, APInt b) -> std::optional<APInt> { return a * b; });
}

OpFoldResult DivOp::fold(FoldAdaptor adaptor) {
  if (matchPattern(getRhs(), m_One()) || matchPattern(getRhs(), m_OneFloat()))
    return getLhs();
  return foldConstants(
      getType(), adaptor.getOperands(),
      [](APFloat a, APFloat b) -> std::optional<APFloat> { return a / b; },
      [](APInt a, APInt b) -> std::optional<APInt> {
        // As the lowering: by 0 the quotient is 0, by -1 the wrapping negation.
        if (b.isZero())
          return APInt(a.getBitWidth(), 0);
        if (b.isAllOnes())
          return -a;
        return a.sdiv(b);
      });
}

OpFoldResult MaximumOp::fold(FoldAdaptor adaptor) {
  if (getLhs() == getRhs())
    return getLhs();
  return foldConstants(
      getType(), adaptor.getOperands(),
      [](APFloat a, APFloat b) -> std::optional<APFloat> {
        return llvm::maximum(a, b);
      },
      [](APInt a, APInt b) -> std::optional<APInt> {
        return a.sge(b) ? a : b;
      });
}

OpFoldResult MinimumOp::fold(FoldAdaptor adaptor) {
  if (getLhs() == getRhs())
    return getLhs();
  return foldConstants(
      getType(), adaptor.getOperands(),
      [](APFloat a, APFloat b) -> std::optional<APFloat> {
        return llvm::minimum(a, b);
      },
      [](APInt a, APInt b) -> std::optional<APInt> {
        return a.sle(b) ? a : b;
      });
}

OpFoldResult SelectOp::fold(FoldAdaptor adaptor) {
  if (getOnTrue() == getOnFalse() && getOnTrue().getType() == getType())
    return getOnTrue();
  auto condition = llvm::dyn_cast_if_present<SplatElementsAttr>(
      adaptor.getCondition());
  if (!condition)
    return evalSelect(adaptor.getCondition(), adaptor.getOnTrue(),
                      adaptor.getOnFalse(), getType());
  Value chosen = condition.getSplatValue<bool>() ? getOnTrue() : getOnFalse();
  return chosen.getType() == getType() ? chosen : Value();
}

OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  if (getOperand().getType() == getType())
    return getOperand();
  return evalCast(adaptor.getOperand(), getType());
}

OpFoldResult CompareOp::fold(FoldAdaptor adaptor) {
  return evalCompare(getPredicate(), adaptor.getLhs(), adaptor.getRhs(), getType());
}

OpFoldResult NegOp::fold(FoldAdaptor adaptor) {
  return evalUnary(
      adaptor.getOperand(), getType(),
      [](const APInt &x) -> std::optional<APInt> { return -x; },
      [](const APFloat &x) -> std::optional<APFloat> { return -x; });
}

namespace {

/// Folds a float unary op rounding its constant operand to an integer.
OpFoldResult foldRounding(Attribute operand, RankedTensorType type,
                          APFloat::roundingMode mode) {
  return evalUnary(
      operand, type, [](const APInt &) -> std::optional<APInt> { return std::nullopt; },
      [mode](const APFloat &x) -> std::optional<APFloat> {
        APFloat r = x;
        r.roundToIntegral(mode);
        return r;
      });
}

} // namespace

OpFoldResult FloorOp::fold(FoldAdaptor adaptor) {
  return foldRounding(adaptor.getOperand(), getType(), APFloat::rmTowardNegative);
}

OpFoldResult CeilOp::fold(FoldAdaptor adaptor) {
  return foldRounding(adaptor.getOperand(), getType(), APFloat::rmTowardPositive);
}

OpFoldResult RoundOp::fold(FoldAdaptor adaptor) {
  return foldRounding(adaptor.getOperand(), getType(), APFloat::rmNearestTiesToEven);
}

OpFoldResult ModOp::fold(FoldAdaptor adaptor) {
  bool truncated = getFmod();
  return foldConstants(
      getType(), adaptor.getOperands(),
      [&](APFloat a, APFloat b) -> std::optional<APFloat> {
        APFloat r = a;
        if (r.mod(b) & APFloat::opInvalidOp)
          return std::nullopt;
        if (!truncated && !r.isZero() && r.isNegative() != b.isNegative())
          r.add(b, APFloat::rmNearestTiesToEven);
        if (!truncated && r.isZero())
          r = APFloat::getZero(r.getSemantics(), b.isNegative());
        return r;
      },
      [&](APInt a, APInt b) -> std::optional<APInt> {
        if (b.isZero())
          return APInt(a.getBitWidth(), 0);
        if (a.isMinSignedValue() && b.isAllOnes())
          return APInt(a.getBitWidth(), 0);
        APInt r = a.srem(b);
        if (!truncated && !r.isZero() && r.isNegative() != b.isNegative())
          r += b;
        return r;
      });
}

OpFoldResult GatherOp::fold(FoldAdaptor adaptor) {
  return evalGather(adaptor.getTable(), adaptor.getIndices(), getAxis(), getType());
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getOperand().getType() == getType())
    return getOperand();
  if (auto inner = getOperand().getDefiningOp<ReshapeOp>()) {
    getOperandMutable().assign(inner.getOperand());
    return getResult();
  }
  auto dense = llvm::dyn_cast_if_present<DenseElementsAttr>(adaptor.getOperand());
  if (dense && getType().hasStaticShape())
    return dense.reshape(getType());
  return {};
}

OpFoldResult BroadcastOp::fold(FoldAdaptor adaptor) {
  if (getOperand().getType() == getType())
    return getOperand();
  if (auto inner = getOperand().getDefiningOp<BroadcastOp>()) {
    getOperandMutable().assign(inner.getOperand());
    return getResult();
  }
  if (Attribute splat = resplat(adaptor.getOperand(), getType()))
    return splat;
  return evalBroadcast(adaptor.getOperand(), getType());
}

OpFoldResult TransposeOp::fold(FoldAdaptor adaptor) {
  ArrayRef<int64_t> perm = getPermutation();
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())) &&
      getOperand().getType() == getType())
    return getOperand();
  if (auto inner = getOperand().getDefiningOp<TransposeOp>()) {
    ArrayRef<int64_t> innerPerm = inner.getPermutation();
    SmallVector<int64_t> composed;
    for (int64_t p : perm)
      composed.push_back(innerPerm[p]);
    setPermutation(composed);
    getOperandMutable().assign(inner.getOperand());
    return getResult();
  }
  if (Attribute splat = resplat(adaptor.getOperand(), getType()))
    return splat;
  return evalTranspose(adaptor.getOperand(), perm, getType());
}

OpFoldResult ConcatOp::fold(FoldAdaptor adaptor) {
  if (getInputs().size() == 1 && getInputs().front().getType() == getType())
    return getInputs().front();
  if (!getType().hasStaticShape())
    return {};
  return evalConcat(adaptor.getInputs(), getAxis(), getType());
}

OpFoldResult SliceOp::fold(FoldAdaptor adaptor) {
  if (getOperand().getType() == getType() && getType().hasStaticShape() &&
      llvm::all_of(getStart(), [](int64_t s) { return s == 0; }) &&
      llvm::all_of(getStep(), [](int64_t s) { return s == 1; }))
    return getOperand();
  if (Attribute splat = resplat(adaptor.getOperand(), getType()))
    return splat;
  if (!getType().hasStaticShape())
    return {};
  return evalSlice(adaptor.getOperand(), getStart(), getStep(), getType());
}

template <typename ReduceOp>
static OpFoldResult foldEmptyReduction(ReduceOp op) {
  if (op.getAxes().empty() && op.getOperand().getType() == op.getType())
    return op.getOperand();
  return {};
}

OpFoldResult ReduceSumOp::fold(FoldAdaptor adaptor) {
  if (OpFoldResult same = foldEmptyReduction(*this))
    return same;
  return evalIntReduce(adaptor.getOperand(), getAxes(), getType(),
                       [](const APInt &a, const APInt &b) { return a + b; });
}
OpFoldResult ReduceMeanOp::fold(FoldAdaptor) {
  return foldEmptyReduction(*this);
}
OpFoldResult ReduceMaxOp::fold(FoldAdaptor adaptor) {
  if (OpFoldResult same = foldEmptyReduction(*this))
    return same;
  return evalIntReduce(adaptor.getOperand(), getAxes(), getType(),
                       [](const APInt &a, const APInt &b) { return a.sge(b) ? a : b; });
}
