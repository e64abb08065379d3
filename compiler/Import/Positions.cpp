//===- Positions.cpp - Ops over element positions, shared -----------------===//

#include "compiler/Import/Positions.h"

#include "mlir/IR/TypeUtilities.h"

#include <limits>

using namespace mlir;

namespace kiln {
namespace {

using Result = KilnOpBuilder::Result;

/// Ones of `like`'s shape and type.
Result one(KilnOpBuilder &b, Value like) { return b.splatLike(like, 1.0); }

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

} // namespace

// Scores the positions where x equals its extreme so that a max over them
// picks the wanted one.
Result buildArgExtreme(KilnOpBuilder &b, Value x, int64_t axis, bool minimum,
                       bool lastIndex, bool keepDims) {
  ArrayRef<int64_t> shape = KilnOpBuilder::shapeOf(x);
  int64_t n = shape[axis];
  // ArgMin is ArgMax of an order-reversed x: -x for floats, -1 - x for
  // integers (which, unlike -x, never wraps).
  Result v = x;
  if (minimum) {
    bool isFloat = llvm::isa<FloatType>(getElementTypeOrSelf(x.getType()));
    Result minusOne = isFloat ? Result(Value()) : b.splatLike(x, -1);
    v = isFloat ? b.unary<NegOp>(x)
                : (succeeded(minusOne) ? b.binary<SubOp>(*minusOne, x) : minusOne);
  }
  // NaNs count as the lowest value (onnxruntime's choice: a row of NaNs
  // gives position 0).
  if (succeeded(v) && llvm::isa<FloatType>(getElementTypeOrSelf(x.getType()))) {
    Result lowest = b.splatLike(*v, -std::numeric_limits<double>::infinity());
    Result isNan = b.compare(ComparePredicate::ne, *v, *v);
    v = succeeded(lowest) && succeeded(isNan) ? b.select(*isNan, *lowest, *v)
                                              : Result(failure());
  }
  Result extreme = succeeded(v) ? b.reduce<ReduceMaxOp>(*v, {axis}, true) : v;
  Result at = succeeded(extreme) ? b.compare(ComparePredicate::eq, *v, *extreme) : extreme;
  // Scores: the position (last index wins the max) or n - 1 - position
  // (first wins); -1 where x is not the extreme.
  SmallVector<int64_t> scores, scoreShape(shape.size(), 1);
  scoreShape[axis] = n;
  for (int64_t i = 0; i < n; ++i)
    scores.push_back(lastIndex ? i : n - 1 - i);
  Result score = int64Constant(b, scoreShape, scores);
  Result none = int64Constant(b, {}, {-1});
  if (failed(at) || failed(score) || failed(none))
    return failure();
  Result picked = b.select(*at, *score, *none);
  Result best = succeeded(picked) ? b.reduce<ReduceMaxOp>(*picked, {axis}, true) : picked;
  // A row where nothing equals its extreme (a NaN made it NaN) gives -1:
  // position 0, in range.
  Result zero = int64Constant(b, {}, {0});
  Result unmatched =
      succeeded(best) && succeeded(zero) ? b.compare(ComparePredicate::lt, *best, *zero)
                                         : Result(failure());
  if (succeeded(best) && !lastIndex) {
    Result top = int64Constant(b, {}, {n - 1});
    best = succeeded(top) ? b.binary<SubOp>(*top, *best) : top;
  }
  if (succeeded(best) && succeeded(unmatched))
    best = b.select(*unmatched, *zero, *best);
  if (succeeded(best) && !keepDims)
    best = b.reshape(*best, without(shape, axis));
  return best;
}

FailureOr<std::pair<Value, Value>> buildTopK(KilnOpBuilder &b, Value x, int64_t axis,
                                             int64_t k, bool largest) {
  ArrayRef<int64_t> shape = KilnOpBuilder::shapeOf(x);
  int64_t n = shape[axis];
  // Two keys per element: its class (NaN or number), then its value.
  Result isNan = b.compare(ComparePredicate::ne, x, x);
  Result zeros = b.splatLike(x, 0.0), ones = b.splatLike(x, largest ? 1.0 : -1.0);
  Result nanKey = succeeded(isNan) && succeeded(zeros) && succeeded(ones)
                      ? b.select(*isNan, *ones, *zeros) : Result(failure());
  Result signedX = largest ? Result(x) : b.unary<NegOp>(x);
  Result valueKey = succeeded(signedX) && succeeded(isNan) && succeeded(zeros)
                        ? b.select(*isNan, *zeros, *signedX) : Result(failure());
  SmallVector<int64_t> positionShape(shape.size(), 1), scores, positions;
  positionShape[axis] = n;
  for (int64_t i = 0; i < n; ++i) {
    scores.push_back(n - 1 - i);
    positions.push_back(i);
  }
  Result score = int64Constant(b, positionShape, scores);
  Result position = int64Constant(b, positionShape, positions);
  Result none = int64Constant(b, {}, {-1}), last = int64Constant(b, {}, {n - 1});
  Result below = b.splatLike(x, -2.0);
  Result lowest = b.splatLike(x, -std::numeric_limits<double>::infinity());
  if (failed(nanKey) || failed(valueKey) || failed(score) || failed(position) ||
      failed(none) || failed(last) || failed(below) || failed(lowest))
    return failure();
  Value taken = *zeros;
  SmallVector<Value> picks;
  for (int64_t round = 0; round < k; ++round) {
    // Among the elements not taken: the highest class, then the highest
    // value in it, then the first position.
    Result available = b.compare(ComparePredicate::eq, taken, *zeros);
    Result classes = succeeded(available) ? b.select(*available, *nanKey, *below) : available;
    Result topClass = succeeded(classes) ? b.reduce<ReduceMaxOp>(*classes, {axis}, true)
                                         : classes;
    Result inClass = succeeded(topClass) ? b.compare(ComparePredicate::eq, *classes, *topClass)
                                         : topClass;
    Result values = succeeded(inClass) ? b.select(*inClass, *valueKey, *lowest) : inClass;
    Result top = succeeded(values) ? b.reduce<ReduceMaxOp>(*values, {axis}, true) : values;
    Result atTop = succeeded(top) ? b.compare(ComparePredicate::eq, *values, *top) : top;
    Result atTopF = succeeded(atTop) ? b.select(*atTop, *one(b, x), *zeros) : atTop;
    Result inClassF = succeeded(inClass) && succeeded(atTopF)
                          ? b.select(*inClass, *atTopF, *zeros) : Result(failure());
    Result hit = succeeded(inClassF) ? b.compare(ComparePredicate::ne, *inClassF, *zeros)
                                     : inClassF;
    Result picked = succeeded(hit) ? b.select(*hit, *score, *none) : hit;
    Result best = succeeded(picked) ? b.reduce<ReduceMaxOp>(*picked, {axis}, true) : picked;
    Result at = succeeded(best) ? b.binary<SubOp>(*last, *best) : best;
    Result now = succeeded(at) ? b.compare(ComparePredicate::eq, *position, *at) : at;
    Result mark = succeeded(now) ? b.select(*now, *one(b, x), *zeros) : now;
    Result next = succeeded(mark) ? b.binary<AddOp>(taken, *mark) : mark;
    if (failed(next))
      return failure();
    taken = *next;
    picks.push_back(*at);
  }
  Result indices = picks.size() == 1 ? Result(picks.front()) : b.concat(picks, axis);
  Result gathered = succeeded(indices) ? b.gatherElements(x, *indices, axis) : indices;
  if (failed(gathered))
    return failure();
  return std::make_pair(*gathered, *indices);
}

Result buildOneHot(KilnOpBuilder &b, Value indices, int64_t depth, int64_t axis,
                   Attribute onValue, Attribute offValue, bool wrapNegative) {
  ArrayRef<int64_t> shape = KilnOpBuilder::shapeOf(indices);
  Type indexType = getElementTypeOrSelf(indices.getType());
  int64_t rank = static_cast<int64_t>(shape.size()) + 1;
  int64_t elements = depth;
  for (int64_t size : shape) {
    if (size > 0 && elements > (int64_t(1) << 31) / size)
      return b.emitError() << "would make a one-hot tensor of more than 2^31 elements ("
                           << depth << " per index)";
    elements *= size;
  }
  // Indices in [-depth, 0) count from the end.
  auto splat = [&](Type type, double value) -> Result {
    auto tensorType = RankedTensorType::get(shape, type);
    Attribute element = llvm::isa<FloatType>(type) ? Attribute(FloatAttr::get(type, value))
                                                   : Attribute(IntegerAttr::get(type, int64_t(value)));
    return b.constant(SplatElementsAttr::get(tensorType, element));
  };
  Result wrapped = indices;
  if (wrapNegative) {
    Result zero = splat(indexType, 0), wrap = splat(indexType, double(depth));
    if (failed(zero) || failed(wrap))
      return failure();
    Result negative = b.compare(ComparePredicate::lt, indices, *zero);
    Result shifted = b.binary<AddOp>(indices, *wrap);
    wrapped = succeeded(negative) && succeeded(shifted)
                  ? b.select(*negative, *shifted, indices)
                  : Result(failure());
    if (failed(wrapped))
      return failure();
  }
  SmallVector<int64_t> hotShape(shape);
  hotShape.push_back(depth);
  auto hotType = RankedTensorType::get(hotShape, b.getBuilder().getF32Type());
  Value hot = b.getBuilder().create<OneHotOp>(b.getLoc(), hotType, *wrapped);
  // on where hot, else off, in the values' own type (exact for any value).
  auto valueAt = [&](Attribute value) -> Result {
    auto type = RankedTensorType::get(hotShape, llvm::cast<TypedAttr>(value).getType());
    return b.constant(SplatElementsAttr::get(type, value));
  };
  Result half = b.splatLike(hot, 0.5), off = valueAt(offValue), on = valueAt(onValue);
  Result isOn = succeeded(half) ? b.compare(ComparePredicate::gt, hot, *half) : half;
  Result scaled = succeeded(isOn) && succeeded(on) && succeeded(off)
                      ? b.select(*isOn, *on, *off)
                      : Result(failure());
  if (succeeded(scaled) && axis != rank - 1) {
    SmallVector<int64_t> perm;
    for (int64_t d = 0; d < rank - 1; ++d) {
      if (d == axis)
        perm.push_back(rank - 1);
      perm.push_back(d);
    }
    scaled = b.transpose(*scaled, perm);
  }
  return scaled;
}

Result buildCumSum(KilnOpBuilder &b, Value x, int64_t axis, bool exclusive, bool reverse) {
  Result y = b.cumulativeSum(x, axis, reverse);
  if (failed(y) || !exclusive)
    return y;
  if (KilnOpBuilder::shapeOf(x)[axis] == 1)
    return b.splatLike(x, 0);
  return b.shifted(*y, axis, 1, reverse);
}

} // namespace kiln
