//===- OnnxPositionOps.cpp - ONNX ops over element positions --------------===//
//
// ArgMax and ArgMin (a reduction of positions where the extreme is), CumSum
// (a product with a triangular matrix of ones along the axis, so it trains),
// OneHot (kiln.one_hot scaled to the off and on values) and DepthToSpace /
// SpaceToDepth (PixelShuffle: a reshape, a transpose and a reshape).
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/Onnx/OnnxOps.h"

#include "compiler/Import/DiagnosticText.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace kiln {
namespace {

using Result = KilnOpBuilder::Result;

/// The longest axis CumSum's N x N matrix of ones is built for.
constexpr int64_t kMaxCumSumLength = 4096;

/// A constant i64 tensor of `shape` holding `values`.
Result int64Constant(KilnOpBuilder &b, ArrayRef<int64_t> shape, ArrayRef<int64_t> values) {
  auto type = RankedTensorType::get(shape, b.getBuilder().getI64Type());
  return b.constant(DenseElementsAttr::get(type, values));
}

/// `shape` without dimension `axis`.
SmallVector<int64_t> without(ArrayRef<int64_t> shape, int64_t axis) {
  SmallVector<int64_t> result(shape);
  result.erase(result.begin() + axis);
  return result;
}

/// ArgMax (or, with `minimum`, ArgMin): the first (or with
/// select_last_index the last) position of the extreme along `axis`, as
/// int64: the positions where x equals its extreme, scored so that a max
/// over them picks the wanted one.
template <bool Minimum> LogicalResult convertArgExtreme(OnnxNode &node) {
  FailureOr<int64_t> axisAttr = node.getIntAttr("axis", 0);
  FailureOr<int64_t> keepDims = node.getIntAttr("keepdims", 1);
  FailureOr<int64_t> last = node.getIntAttr("select_last_index", 0);
  if (failed(axisAttr) || failed(keepDims) || failed(last))
    return failure();
  Value x = node.getInput(0);
  if (failed(node.requireNumeric(x, "an input")))
    return failure();
  FailureOr<ArrayRef<int64_t>> shape = node.getStaticShape(x, "an input");
  if (failed(shape))
    return failure();
  FailureOr<int64_t> axis = node.normalizeAxis(*axisAttr, shape->size());
  if (failed(axis))
    return failure();
  int64_t n = (*shape)[*axis];
  if (n < 1)
    return node.emitError() << "reduces an empty dimension " << *axis;
  KilnOpBuilder &b = node.getBuilder();
  Result v = Minimum ? b.unary<NegOp>(x) : Result(x);
  Result extreme = succeeded(v) ? b.reduce<ReduceMaxOp>(*v, {*axis}, true) : v;
  Result at = succeeded(extreme) ? b.compare(ComparePredicate::eq, *v, *extreme) : extreme;
  // Scores: the position (last index wins the max) or n - 1 - position
  // (first wins); -1 where x is not the extreme.
  SmallVector<int64_t> scores, scoreShape(shape->size(), 1);
  scoreShape[*axis] = n;
  for (int64_t i = 0; i < n; ++i)
    scores.push_back(*last ? i : n - 1 - i);
  Result score = int64Constant(b, scoreShape, scores);
  Result none = int64Constant(b, {}, {-1});
  if (failed(at) || failed(score) || failed(none))
    return failure();
  Result picked = b.select(*at, *score, *none);
  Result best = succeeded(picked) ? b.reduce<ReduceMaxOp>(*picked, {*axis}, true) : picked;
  if (succeeded(best) && !*last) {
    Result top = int64Constant(b, {}, {n - 1});
    best = succeeded(top) ? b.binary<SubOp>(*top, *best) : top;
  }
  if (succeeded(best) && !*keepDims)
    best = b.reshape(*best, without(*shape, *axis));
  return node.setResult(0, best);
}

/// CumSum(x, axis): x moved to [M, N] with the axis last, times an N x N
/// matrix T (T[i][j] = 1 where row i adds into column j: i <= j, i < j
/// exclusive, i >= j reverse), moved back.
LogicalResult convertCumSum(OnnxNode &node) {
  FailureOr<int64_t> exclusive = node.getIntAttr("exclusive", 0);
  FailureOr<int64_t> reverse = node.getIntAttr("reverse", 0);
  if (failed(exclusive) || failed(reverse))
    return failure();
  Value x = node.getInput(0);
  if (failed(node.requireFloat(x, "an input")))
    return failure();
  FailureOr<ArrayRef<int64_t>> shape = node.getStaticShape(x, "an input");
  FailureOr<SmallVector<int64_t>> axisValue = node.getConstantInts(1, "axis");
  if (failed(shape) || failed(axisValue))
    return failure();
  if (axisValue->size() != 1)
    return node.emitError() << "expects one axis, got " << formatIntList(*axisValue);
  int64_t rank = static_cast<int64_t>(shape->size());
  FailureOr<int64_t> axis = node.normalizeAxis(axisValue->front(), rank);
  if (failed(axis))
    return failure();
  int64_t n = (*shape)[*axis];
  if (n < 1 || n > kMaxCumSumLength)
    return node.emitError() << "sums along a dimension of " << n << "; kiln's CumSum takes 1 to "
                            << kMaxCumSumLength;
  KilnOpBuilder &b = node.getBuilder();
  SmallVector<int64_t> toLast, fromLast(rank);
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis)
      toLast.push_back(d);
  toLast.push_back(*axis);
  for (int64_t d = 0; d < rank; ++d)
    fromLast[toLast[d]] = d;
  SmallVector<int64_t> movedShape;
  for (int64_t d : toLast)
    movedShape.push_back((*shape)[d]);
  Result moved = b.transpose(x, toLast);
  Result rows = succeeded(moved) ? b.reshape(*moved, {staticElementCount(*shape).value() / n, n})
                                 : moved;
  Type elementType = getElementTypeOrSelf(x.getType());
  SmallVector<APFloat> ones;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      bool adds = *reverse ? (*exclusive ? i > j : i >= j) : (*exclusive ? i < j : i <= j);
      APFloat one(adds ? 1.0 : 0.0);
      bool lost;
      one.convert(llvm::cast<FloatType>(elementType).getFloatSemantics(),
                  APFloat::rmNearestTiesToEven, &lost);
      ones.push_back(one);
    }
  Result triangle =
      b.constant(DenseElementsAttr::get(RankedTensorType::get({n, n}, elementType), ones));
  Result sums = succeeded(rows) && succeeded(triangle) ? b.matmul(*rows, *triangle)
                                                       : Result(failure());
  if (succeeded(sums))
    sums = b.reshape(*sums, movedShape);
  if (succeeded(sums))
    sums = b.transpose(*sums, fromLast);
  return node.setResult(0, sums);
}

/// OneHot(indices, depth, values): kiln.one_hot of the indices (negative
/// ones counted from the end, as ONNX wraps them) along a new axis, then
/// off + onehot * (on - off) in the values' type.
LogicalResult convertOneHot(OnnxNode &node) {
  FailureOr<int64_t> axisAttr = node.getIntAttr("axis", -1);
  if (failed(axisAttr))
    return failure();
  Value indices = node.getInput(0);
  Type indexType = getElementTypeOrSelf(indices.getType());
  if (!indexType.isInteger(32) && !indexType.isInteger(64))
    return node.emitError() << "expects int32 or int64 indices, got " << indexType;
  FailureOr<SmallVector<int64_t>> depthValue = node.getConstantInts(1, "depth");
  if (failed(depthValue))
    return failure();
  DenseElementsAttr values = node.getConstantInput(2);
  if (depthValue->size() != 1 || depthValue->front() < 1 ||
      depthValue->front() > (int64_t(1) << 24))
    return node.emitError() << "expects a depth in [1, 2^24], got "
                            << formatIntList(*depthValue);
  if (!values || values.getNumElements() != 2)
    return node.emitError() << "expects input #2 (values) to be [off, on] known at import time";
  int64_t depth = depthValue->front();
  FailureOr<ArrayRef<int64_t>> shape = node.getStaticShape(indices, "indices");
  if (failed(shape))
    return failure();
  int64_t rank = static_cast<int64_t>(shape->size()) + 1;
  FailureOr<int64_t> axis = node.normalizeAxis(*axisAttr, rank);
  if (failed(axis))
    return failure();
  Type valueType = values.getElementType();
  double off, on;
  if (auto floatType = llvm::dyn_cast<FloatType>(valueType)) {
    off = values.getValues<APFloat>()[0].convertToDouble();
    on = values.getValues<APFloat>()[1].convertToDouble();
  } else if (valueType.isInteger(32) || valueType.isInteger(64)) {
    off = static_cast<double>(values.getValues<APInt>()[0].getSExtValue());
    on = static_cast<double>(values.getValues<APInt>()[1].getSExtValue());
  } else {
    return node.emitError() << "expects float or integer values, got " << valueType;
  }
  KilnOpBuilder &b = node.getBuilder();
  // Indices in [-depth, 0) count from the end.
  auto splat = [&](Type type, double value) -> Result {
    auto tensorType = RankedTensorType::get(*shape, type);
    Attribute element = llvm::isa<FloatType>(type) ? Attribute(FloatAttr::get(type, value))
                                                   : Attribute(IntegerAttr::get(type, int64_t(value)));
    return b.constant(SplatElementsAttr::get(tensorType, element));
  };
  Result zero = splat(indexType, 0), wrap = splat(indexType, double(depth));
  if (failed(zero) || failed(wrap))
    return failure();
  Result negative = b.compare(ComparePredicate::lt, indices, *zero);
  Result shifted = b.binary<AddOp>(indices, *wrap);
  Result wrapped = succeeded(negative) && succeeded(shifted)
                       ? b.select(*negative, *shifted, indices)
                       : Result(failure());
  if (failed(wrapped))
    return failure();
  SmallVector<int64_t> hotShape(*shape);
  hotShape.push_back(depth);
  auto hotType = RankedTensorType::get(hotShape, b.getBuilder().getF32Type());
  Value hot = b.getBuilder().create<OneHotOp>(b.getLoc(), hotType, *wrapped);
  Result scaled = hot;
  if (on - off != 1.0 || off != 0.0) {
    Result scale = b.splatLike(hot, on - off), bias = b.splatLike(hot, off);
    scaled = succeeded(scale) ? b.binary<MulOp>(hot, *scale) : scale;
    if (succeeded(scaled) && succeeded(bias))
      scaled = b.binary<AddOp>(*scaled, *bias);
  }
  if (succeeded(scaled) && valueType != b.getBuilder().getF32Type())
    scaled = b.cast(*scaled, valueType);
  if (succeeded(scaled) && *axis != rank - 1) {
    SmallVector<int64_t> perm;
    for (int64_t d = 0; d < rank - 1; ++d) {
      if (d == *axis)
        perm.push_back(rank - 1);
      perm.push_back(d);
    }
    scaled = b.transpose(*scaled, perm);
  }
  return node.setResult(0, scaled);
}

/// DepthToSpace (DCR or CRD) and SpaceToDepth of [N, C, H, W] by
/// `blocksize`: a reshape, a transpose and a reshape.
template <bool ToSpace> LogicalResult convertDepthSpace(OnnxNode &node) {
  FailureOr<int64_t> block = node.getIntAttr("blocksize", 0);
  FailureOr<std::string> mode = node.getStringAttr("mode", "DCR");
  if (failed(block) || failed(mode))
    return failure();
  Value x = node.getInput(0);
  FailureOr<ArrayRef<int64_t>> shape = node.getStaticShape(x, "an input");
  if (failed(shape))
    return failure();
  if (shape->size() != 4)
    return node.emitError() << "expects an input [N, C, H, W], got " << formatIntList(*shape);
  int64_t n = (*shape)[0], c = (*shape)[1], h = (*shape)[2], w = (*shape)[3], s = *block;
  if (s < 1 || (ToSpace ? c % (s * s) != 0 : h % s != 0 || w % s != 0))
    return node.emitError() << "expects a blocksize of at least 1 dividing "
                            << (ToSpace ? "the channels by its square" : "H and W") << ", got "
                            << s << " for " << formatIntList(*shape);
  if (ToSpace && *mode != "DCR" && *mode != "CRD")
    return node.emitError() << "mode '" << printable(*mode) << "' is not DCR or CRD";
  SmallVector<int64_t> split, perm, merged;
  if (!ToSpace) {
    split = {n, c, h / s, s, w / s, s};
    perm = {0, 3, 5, 1, 2, 4};
    merged = {n, c * s * s, h / s, w / s};
  } else if (*mode == "DCR") {
    split = {n, s, s, c / (s * s), h, w};
    perm = {0, 3, 4, 1, 5, 2};
    merged = {n, c / (s * s), h * s, w * s};
  } else {
    split = {n, c / (s * s), s, s, h, w};
    perm = {0, 1, 4, 2, 5, 3};
    merged = {n, c / (s * s), h * s, w * s};
  }
  KilnOpBuilder &b = node.getBuilder();
  Result y = b.reshape(x, split);
  if (succeeded(y))
    y = b.transpose(*y, perm);
  if (succeeded(y))
    y = b.reshape(*y, merged);
  return node.setResult(0, y);
}

constexpr OnnxOpConversion kPositionOps[] = {
    {"ArgMax", 1, 1, 1, "axis keepdims select_last_index", convertArgExtreme<false>},
    {"ArgMin", 1, 1, 1, "axis keepdims select_last_index", convertArgExtreme<true>},
    {"CumSum", 2, 2, 1, "exclusive reverse", convertCumSum, 11},
    {"OneHot", 3, 3, 1, "axis", convertOneHot, 9},
    {"DepthToSpace", 1, 1, 1, "blocksize mode", convertDepthSpace<true>},
    {"SpaceToDepth", 1, 1, 1, "blocksize", convertDepthSpace<false>},
};

} // namespace

ArrayRef<OnnxOpConversion> getOnnxPositionOps() { return kPositionOps; }

} // namespace kiln
