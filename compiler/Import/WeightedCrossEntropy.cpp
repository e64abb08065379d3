//===- WeightedCrossEntropy.cpp - Cross-entropy with class weights --------===//

#include "compiler/Import/WeightedCrossEntropy.h"

#include "dialects/Kiln/FeedAttrs.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/Sequence.h"

#include <algorithm>

using namespace mlir;

namespace kiln {
namespace {

/// The sum of every element of `value`: a scalar.
FailureOr<Value> sumOfAll(KilnOpBuilder &kiln, Value value) {
  auto axes = llvm::to_vector(llvm::seq<int64_t>(0, KilnOpBuilder::rankOf(value)));
  return kiln.reduce<ReduceSumOp>(value, axes, /*keepDims=*/false);
}

/// -sum(weightedTargets * logProbabilities) / denominator, or over
/// `positions` when `denominator` is null.
FailureOr<Value> negativeWeightedSum(KilnOpBuilder &kiln, Value weightedTargets,
                                     Value logProbabilities, Value denominator,
                                     int64_t positions) {
  FailureOr<Value> products = kiln.binary<MulOp>(weightedTargets, logProbabilities);
  if (failed(products))
    return failure();
  FailureOr<Value> sum = sumOfAll(kiln, *products);
  if (failed(sum))
    return failure();
  if (!denominator) {
    FailureOr<Value> count = kiln.splatLike(*sum, static_cast<double>(positions));
    if (failed(count))
      return failure();
    denominator = *count;
  }
  FailureOr<Value> mean = kiln.binary<DivOp>(*sum, denominator);
  if (failed(mean))
    return failure();
  return kiln.unary<NegOp>(*mean);
}

/// The number of positions of [P..., C]: all but the classes.
int64_t positionsOf(Value logProbabilities) {
  int64_t count = 1;
  for (int64_t d : KilnOpBuilder::shapeOf(logProbabilities).drop_back())
    count *= d;
  return count;
}

/// one_hot(labels) [P..., C] of `type`, a row of zeros where the label is
/// `ignoreIndex` (one_hot gives them for labels outside [0, C) already).
FailureOr<Value> keptOneHot(KilnOpBuilder &kiln, Value labels, int64_t classes, Type type,
                            std::optional<int64_t> ignoreIndex) {
  FailureOr<Value> rows = kiln.oneHot(labels, classes, type);
  if (failed(rows) || !ignoreIndex || *ignoreIndex < 0 || *ignoreIndex >= classes)
    return rows;
  FailureOr<Value> ignored = kiln.splatLike(labels, static_cast<double>(*ignoreIndex));
  if (failed(ignored))
    return failure();
  FailureOr<Value> kept = kiln.compare(ComparePredicate::ne, labels, *ignored);
  if (failed(kept))
    return failure();
  FailureOr<Value> keptValues = kiln.cast(*kept, type);
  if (failed(keptValues))
    return failure();
  SmallVector<int64_t> shape(KilnOpBuilder::shapeOf(labels));
  shape.push_back(1);
  FailureOr<Value> column = kiln.reshape(*keptValues, shape);
  if (failed(column))
    return failure();
  return kiln.binary<MulOp>(*rows, *column);
}

/// Marks `labels`, where it is an argument of the function, with its
/// classes and ignored label: the runtime then refuses training data
/// outside them, as it does for the fused loss's labels (which it finds
/// from the loss op; one_hot's are fused away).
void markClassIds(Value labels, int64_t classes, std::optional<int64_t> ignoreIndex) {
  // Back through the ops that keep the ids' values (a reshape or cast of
  // the labels, a slice of shifted ones) to the input.
  while (Operation *op = labels.getDefiningOp()) {
    if (!isa<ReshapeOp, TransposeOp, SliceOp, CastOp>(op))
      return;
    labels = op->getOperand(0);
  }
  auto argument = cast<BlockArgument>(labels);
  auto function = dyn_cast<func::FuncOp>(argument.getOwner()->getParentOp());
  if (!function)
    return;
  Builder b(labels.getContext());
  unsigned index = argument.getArgNumber();
  // A second loss of the same labels: the fewer classes bound them both, and
  // an ignored label only if both ignore it.
  auto marked = function.getArgAttrOfType<IntegerAttr>(index, kClassCountAttr);
  auto ignored = function.getArgAttrOfType<IntegerAttr>(index, kIgnoredLabelAttr);
  function.setArgAttr(index, kClassCountAttr,
                      b.getI64IntegerAttr(marked ? std::min(marked.getInt(), classes) : classes));
  if (ignoreIndex && (!marked || (ignored && ignored.getInt() == *ignoreIndex)))
    function.setArgAttr(index, kIgnoredLabelAttr, b.getI64IntegerAttr(*ignoreIndex));
  else
    function.removeArgAttr(index, kIgnoredLabelAttr);
}

} // namespace

FailureOr<Value> classWeightedCrossEntropy(KilnOpBuilder &kiln, ClassWeighting weighting,
                                           Value logProbabilities, Value labels, Value weights,
                                           std::optional<int64_t> ignoreIndex,
                                           double smoothing) {
  Type type = getElementTypeOrSelf(logProbabilities.getType());
  int64_t classes = KilnOpBuilder::shapeOf(logProbabilities).back();
  markClassIds(labels, classes, ignoreIndex);
  FailureOr<Value> oneHot = keptOneHot(kiln, labels, classes, type, ignoreIndex);
  if (failed(oneHot))
    return failure();
  // w[y] at each position's class: PyTorch's terms and denominator.
  FailureOr<Value> weighted = kiln.binary<MulOp>(*oneHot, weights);
  if (failed(weighted))
    return failure();
  FailureOr<Value> denominator =
      sumOfAll(kiln, weighting == ClassWeighting::PyTorch ? *weighted : *oneHot);
  if (failed(denominator))
    return failure();
  if (weighting == ClassWeighting::Keras) {
    // Keras' loss of a batch whose every label is ignored is 0 (PyTorch's
    // NaN): its count of kept positions, at least 1.
    FailureOr<Value> one = kiln.splatLike(*denominator, 1.0);
    if (failed(one))
      return failure();
    denominator = kiln.binary<MaximumOp>(*denominator, *one);
    if (failed(denominator))
      return failure();
  }
  Value targets = *weighted;
  if (smoothing != 0.0) {
    // (1 - e) w[y] at the label's class, e / C w_c at every class of a
    // position not ignored.
    FailureOr<Value> kept = kiln.reduce<ReduceSumOp>(*oneHot, {KilnOpBuilder::rankOf(*oneHot) - 1},
                                                     /*keepDims=*/true);
    FailureOr<Value> keep = kiln.splatLike(*weighted, 1.0 - smoothing);
    if (failed(kept) || failed(keep))
      return failure();
    FailureOr<Value> spread = kiln.binary<MulOp>(*kept, weights);
    if (failed(spread))
      return failure();
    FailureOr<Value> share = kiln.splatLike(*spread, smoothing / static_cast<double>(classes));
    FailureOr<Value> scaled = kiln.binary<MulOp>(*weighted, *keep);
    if (failed(share) || failed(scaled))
      return failure();
    FailureOr<Value> spreadShare = kiln.binary<MulOp>(*spread, *share);
    if (failed(spreadShare))
      return failure();
    FailureOr<Value> smoothed = kiln.binary<AddOp>(*scaled, *spreadShare);
    if (failed(smoothed))
      return failure();
    targets = *smoothed;
  }
  return negativeWeightedSum(kiln, targets, logProbabilities, *denominator, 0);
}

FailureOr<Value> classWeightedCrossEntropyOfTargets(KilnOpBuilder &kiln,
                                                    ClassWeighting weighting,
                                                    Value logProbabilities, Value targets,
                                                    Value unsmoothed, Value weights) {
  FailureOr<Value> weighted = failure();
  if (weighting == ClassWeighting::PyTorch) {
    weighted = kiln.binary<MulOp>(targets, weights);
  } else {
    FailureOr<Value> classWeights = kiln.binary<MulOp>(unsmoothed, weights);
    if (failed(classWeights))
      return failure();
    FailureOr<Value> perPosition = kiln.reduce<ReduceSumOp>(
        *classWeights, {KilnOpBuilder::rankOf(*classWeights) - 1}, /*keepDims=*/true);
    if (failed(perPosition))
      return failure();
    weighted = kiln.binary<MulOp>(targets, *perPosition);
  }
  if (failed(weighted))
    return failure();
  return negativeWeightedSum(kiln, *weighted, logProbabilities, Value(),
                             positionsOf(logProbabilities));
}

} // namespace kiln
