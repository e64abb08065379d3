//===- BinaryLossWeights.cpp - Weighted binary cross-entropy --------------===//

#include "compiler/Import/BinaryLossWeights.h"

#include "compiler/Import/Activations.h"

#include "llvm/ADT/Sequence.h"

using namespace mlir;

namespace kiln {

FailureOr<Value> sigmoidCrossEntropyElements(KilnOpBuilder &kiln, Value logits, Value targets,
                                             Value positiveWeights) {
  FailureOr<Value> one = kiln.splatLike(logits, 1.0);
  FailureOr<Value> negated = kiln.unary<NegOp>(logits);
  if (failed(one) || failed(negated))
    return failure();
  // softplus(-x), overflow-free and with sigmoid's gradient at 0 (a form
  // of max and abs would give the tie's whole gradient to one side).
  FailureOr<Value> softplus = buildSoftplus(kiln, *negated);
  if (failed(softplus))
    return failure();
  FailureOr<Value> negatives = kiln.binary<SubOp>(*one, targets);
  if (failed(softplus) || failed(negatives))
    return failure();
  FailureOr<Value> negativeTerm = kiln.binary<MulOp>(*negatives, logits);
  if (failed(negativeTerm))
    return failure();
  // The positive term's weight: 1 + (p - 1) y (1 without pos_weight).
  Value factor = *one;
  if (positiveWeights) {
    FailureOr<Value> ones = kiln.splatLike(positiveWeights, 1.0);
    if (failed(ones))
      return failure();
    FailureOr<Value> extra = kiln.binary<SubOp>(positiveWeights, *ones);
    if (failed(extra))
      return failure();
    FailureOr<Value> scaled = kiln.binary<MulOp>(targets, *extra);
    if (failed(scaled))
      return failure();
    FailureOr<Value> weighted = kiln.binary<AddOp>(*one, *scaled);
    if (failed(weighted))
      return failure();
    factor = *weighted;
  }
  FailureOr<Value> positiveTerm = kiln.binary<MulOp>(factor, *softplus);
  if (failed(positiveTerm))
    return failure();
  return kiln.binary<AddOp>(*negativeTerm, *positiveTerm);
}

FailureOr<Value> binaryCrossEntropyElements(KilnOpBuilder &kiln, Value clipped,
                                            Value targets) {
  FailureOr<Value> one = kiln.splatLike(clipped, 1.0);
  if (failed(one))
    return failure();
  FailureOr<Value> rest = kiln.binary<SubOp>(*one, clipped);
  FailureOr<Value> otherTargets = kiln.binary<SubOp>(*one, targets);
  if (failed(rest) || failed(otherTargets))
    return failure();
  FailureOr<Value> logPositive = kiln.unary<LogOp>(clipped);
  FailureOr<Value> logNegative = kiln.unary<LogOp>(*rest);
  if (failed(logPositive) || failed(logNegative))
    return failure();
  FailureOr<Value> positive = kiln.binary<MulOp>(targets, *logPositive);
  FailureOr<Value> negative = kiln.binary<MulOp>(*otherTargets, *logNegative);
  if (failed(positive) || failed(negative))
    return failure();
  FailureOr<Value> sum = kiln.binary<AddOp>(*positive, *negative);
  if (failed(sum))
    return failure();
  return kiln.unary<NegOp>(*sum);
}

FailureOr<Value> classWeightedBinaryMean(KilnOpBuilder &kiln, Value elements, Value targets,
                                         double w0, double w1) {
  // [N, 1] (TrainFromFlags checks): an example's loss is its element.
  FailureOr<Value> base = kiln.splatLike(targets, w0);
  FailureOr<Value> step = kiln.splatLike(targets, w1 - w0);
  if (failed(base) || failed(step))
    return failure();
  FailureOr<Value> scaled = kiln.binary<MulOp>(targets, *step);
  if (failed(scaled))
    return failure();
  FailureOr<Value> weights = kiln.binary<AddOp>(*base, *scaled);
  if (failed(weights))
    return failure();
  FailureOr<Value> weighted = kiln.binary<MulOp>(elements, *weights);
  if (failed(weighted))
    return failure();
  auto axes = llvm::to_vector(llvm::seq<int64_t>(0, KilnOpBuilder::rankOf(*weighted)));
  return kiln.reduce<ReduceMeanOp>(*weighted, axes, /*keepDims=*/false);
}

} // namespace kiln
