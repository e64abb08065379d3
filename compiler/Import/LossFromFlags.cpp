//===- LossFromFlags.cpp - The losses kilnc --loss adds -------------------===//

#include "compiler/Import/LossFromFlags.h"

#include "compiler/Import/BinaryLossWeights.h"
#include "compiler/Import/WeightedCrossEntropy.h"

#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Sequence.h"
#include "llvm/Support/ErrorHandling.h"

using namespace mlir;

namespace kiln {
namespace {

/// Keras' backend.epsilon(): probabilities are clipped to [eps, 1 - eps].
constexpr double kProbabilityEpsilon = 1e-7;

/// The operand of the softmax-like op that makes `value` along `axis`;
/// null when `value` is not one.
template <typename OpTy>
Value operandAlong(Value value, int64_t axis) {
  auto op = value.getDefiningOp<OpTy>();
  if (!op)
    return Value();
  auto along = static_cast<int64_t>(op.getAxis());
  if (along < 0)
    along += cast<RankedTensorType>(value.getType()).getRank();
  return along == axis ? op.getOperand() : Value();
}

/// The logits whose log-softmax along `axis` `value` is: a log_softmax's
/// operand, or a softmax's under a log; null when it is neither.
Value logitsOfLogProbabilities(Value value, int64_t axis) {
  if (Value logits = operandAlong<LogSoftmaxOp>(value, axis))
    return logits;
  if (auto log = value.getDefiningOp<LogOp>())
    return operandAlong<SoftmaxOp>(log.getOperand(), axis);
  return Value();
}

/// Keras' clip_by_value(p, eps, 1 - eps).
FailureOr<Value> clippedProbabilities(KilnOpBuilder &kiln, Value probabilities) {
  FailureOr<Value> low = kiln.splatLike(probabilities, kProbabilityEpsilon);
  FailureOr<Value> high = kiln.splatLike(probabilities, 1.0 - kProbabilityEpsilon);
  if (failed(low) || failed(high))
    return failure();
  FailureOr<Value> raised = kiln.binary<MaximumOp>(probabilities, *low);
  if (failed(raised))
    return failure();
  return kiln.binary<MinimumOp>(*raised, *high);
}

/// Keras' binary_crossentropy of probabilities not made by a sigmoid:
/// -mean(y log(c) + (1 - y) log(1 - c)) with c the clipped probabilities.
FailureOr<Value> binaryCrossEntropyOfProbabilities(KilnOpBuilder &kiln, Value probabilities,
                                                   Value targets) {
  FailureOr<Value> clipped = clippedProbabilities(kiln, probabilities);
  if (failed(clipped))
    return failure();
  FailureOr<Value> elements = binaryCrossEntropyElements(kiln, *clipped, targets);
  if (failed(elements))
    return failure();
  auto axes = llvm::to_vector(llvm::seq<int64_t>(0, KilnOpBuilder::rankOf(*elements)));
  return kiln.reduce<ReduceMeanOp>(*elements, axes, /*keepDims=*/false);
}

/// binary_crossentropy under --class-weights (Keras' class_weight of 0/1
/// labels) of a sigmoid's logits or of other probabilities.
FailureOr<Value> classWeightedBinaryCrossEntropy(KilnOpBuilder &kiln, const TrainFlags &flags,
                                                 Value output, Value targets) {
  FailureOr<Value> elements = failure();
  if (auto sigmoid = output.getDefiningOp<SigmoidOp>()) {
    elements = sigmoidCrossEntropyElements(kiln, sigmoid.getOperand(), targets, Value());
  } else {
    FailureOr<Value> clipped = clippedProbabilities(kiln, output);
    if (failed(clipped))
      return failure();
    elements = binaryCrossEntropyElements(kiln, *clipped, targets);
  }
  if (failed(elements))
    return failure();
  return classWeightedBinaryMean(kiln, *elements, targets, flags.classWeights[0],
                                 flags.classWeights[1]);
}

/// sigmoid_cross_entropy under --pos-weight: PyTorch's
/// BCEWithLogitsLoss(pos_weight=), the mean over every element.
FailureOr<Value> positiveWeightedSigmoidCrossEntropy(KilnOpBuilder &kiln,
                                                     const TrainFlags &flags, Value logits,
                                                     Value targets) {
  // One weight a label column (the last axis of [N, ..., K]; TrainFromFlags
  // checks the count), or one for every element.
  FailureOr<Value> weights = failure();
  if (KilnOpBuilder::rankOf(logits) < 2 || flags.posWeights.size() == 1) {
    weights = kiln.splatLike(logits, flags.posWeights[0]);
  } else {
    auto type = cast<FloatType>(getElementTypeOrSelf(logits.getType()));
    SmallVector<Attribute> values;
    for (double weight : flags.posWeights)
      values.push_back(FloatAttr::get(type, weight));
    auto shape = RankedTensorType::get({static_cast<int64_t>(values.size())}, type);
    weights = kiln.constant(DenseElementsAttr::get(shape, values));
  }
  if (failed(weights))
    return failure();
  FailureOr<Value> elements = sigmoidCrossEntropyElements(kiln, logits, targets, *weights);
  if (failed(elements))
    return failure();
  auto axes = llvm::to_vector(llvm::seq<int64_t>(0, KilnOpBuilder::rankOf(*elements)));
  return kiln.reduce<ReduceMeanOp>(*elements, axes, /*keepDims=*/false);
}

/// Keras' weighting for Keras' losses, PyTorch's for the others.
ClassWeighting weightingOf(const TrainFlags &flags) {
  return flags.loss == "sparse_categorical_crossentropy" ||
                 flags.loss == "categorical_crossentropy"
             ? ClassWeighting::Keras
             : ClassWeighting::PyTorch;
}

/// --class-weights as a [C] constant of `like`'s element type (classes
/// last); without them, 1 for each class.
FailureOr<Value> classWeightsLike(KilnOpBuilder &kiln, const TrainFlags &flags, Value like) {
  auto type = cast<FloatType>(getElementTypeOrSelf(like.getType()));
  SmallVector<Attribute> values;
  for (double weight : flags.classWeights)
    values.push_back(FloatAttr::get(type, weight));
  if (values.empty())
    values.assign(KilnOpBuilder::shapeOf(like).back(), FloatAttr::get(type, 1.0));
  auto shape = RankedTensorType::get({static_cast<int64_t>(values.size())}, type);
  return kiln.constant(DenseElementsAttr::get(shape, values));
}

/// The class-weighted loss of log-probabilities (the classes last) against
/// class ids.
FailureOr<Value> classWeightedLossOfIds(KilnOpBuilder &kiln, const TrainFlags &flags,
                                        Value logProbabilities, Value labels) {
  FailureOr<Value> weights = classWeightsLike(kiln, flags, logProbabilities);
  if (failed(weights))
    return failure();
  return classWeightedCrossEntropy(kiln, weightingOf(flags), logProbabilities, labels,
                                   *weights, flags.ignoreIndex,
                                   flags.labelSmoothing.value_or(0.0));
}

/// `value` with its axis `axis` moved last (PyTorch's [N, C, H, W]).
FailureOr<Value> classesLast(KilnOpBuilder &kiln, Value value, int64_t axis) {
  int64_t rank = KilnOpBuilder::rankOf(value);
  if (axis == rank - 1)
    return value;
  SmallVector<int64_t> permutation;
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis)
      permutation.push_back(d);
  permutation.push_back(axis);
  return kiln.transpose(value, permutation);
}

/// The mean over the positions of -sum(t log p) over the classes (the last
/// axis) of class probabilities `targets`, smoothed by --label-smoothing
/// to t (1 - e) + e / C as PyTorch and Keras smooth them.
FailureOr<Value> crossEntropyOfTargets(KilnOpBuilder &kiln, const TrainFlags &flags,
                                       Value logProbabilities, Value targets) {
  int64_t rank = KilnOpBuilder::rankOf(logProbabilities);
  Value unsmoothed = targets;
  if (flags.labelSmoothing && *flags.labelSmoothing != 0.0) {
    double e = *flags.labelSmoothing;
    int64_t classes = KilnOpBuilder::shapeOf(targets).back();
    FailureOr<Value> kept = kiln.splatLike(targets, 1.0 - e);
    FailureOr<Value> spread = kiln.splatLike(targets, e / static_cast<double>(classes));
    if (failed(kept) || failed(spread))
      return failure();
    FailureOr<Value> scaled = kiln.binary<MulOp>(targets, *kept);
    if (failed(scaled))
      return failure();
    FailureOr<Value> smoothed = kiln.binary<AddOp>(*scaled, *spread);
    if (failed(smoothed))
      return failure();
    targets = *smoothed;
  }
  if (!flags.classWeights.empty()) {
    FailureOr<Value> weights = classWeightsLike(kiln, flags, logProbabilities);
    if (failed(weights))
      return failure();
    return classWeightedCrossEntropyOfTargets(kiln, weightingOf(flags), logProbabilities,
                                              targets, unsmoothed, *weights);
  }
  FailureOr<Value> products = kiln.binary<MulOp>(targets, logProbabilities);
  if (failed(products))
    return failure();
  FailureOr<Value> sums = kiln.reduce<ReduceSumOp>(*products, {rank - 1}, /*keepDims=*/false);
  if (failed(sums))
    return failure();
  auto positions = llvm::to_vector(llvm::seq<int64_t>(0, rank - 1));
  FailureOr<Value> mean = kiln.reduce<ReduceMeanOp>(*sums, positions, /*keepDims=*/false);
  if (failed(mean))
    return failure();
  return kiln.unary<NegOp>(*mean);
}

/// Softmax cross-entropy of `logits` against class probabilities, both
/// with their classes on `axis`: F.cross_entropy of a float target.
FailureOr<Value> softmaxCrossEntropyOfTargets(KilnOpBuilder &kiln, const TrainFlags &flags,
                                              Value logits, Value targets, int64_t axis) {
  FailureOr<Value> movedLogits = classesLast(kiln, logits, axis);
  FailureOr<Value> movedTargets = classesLast(kiln, targets, axis);
  if (failed(movedLogits) || failed(movedTargets))
    return failure();
  FailureOr<Value> logProbabilities =
      kiln.softmax<LogSoftmaxOp>(*movedLogits, KilnOpBuilder::rankOf(*movedLogits) - 1);
  if (failed(logProbabilities))
    return failure();
  return crossEntropyOfTargets(kiln, flags, *logProbabilities, *movedTargets);
}

/// Softmax cross-entropy of `logits` with their classes on `axis`, moved
/// last first (PyTorch's [N, C, H, W]), against class ids, or class
/// probabilities under --class-probabilities.
FailureOr<Value> softmaxCrossEntropy(KilnOpBuilder &kiln, const TrainFlags &flags,
                                     Value logits, Value labels, int64_t axis) {
  if (flags.classProbabilities)
    return softmaxCrossEntropyOfTargets(kiln, flags, logits, labels, axis);
  FailureOr<Value> moved = classesLast(kiln, logits, axis);
  if (failed(moved))
    return failure();
  if (!flags.classWeights.empty()) {
    FailureOr<Value> logProbabilities =
        kiln.softmax<LogSoftmaxOp>(*moved, KilnOpBuilder::rankOf(*moved) - 1);
    if (failed(logProbabilities))
      return failure();
    return classWeightedLossOfIds(kiln, flags, *logProbabilities, labels);
  }
  return kiln.softmaxCrossEntropy(*moved, labels, flags.ignoreIndex, flags.labelSmoothing);
}

/// Keras' categorical_crossentropy of probabilities not made by a softmax:
/// each position's divided by their sum, clipped, logged.
FailureOr<Value> categoricalCrossEntropyOfProbabilities(KilnOpBuilder &kiln,
                                                        const TrainFlags &flags,
                                                        Value probabilities, Value targets,
                                                        int64_t axis) {
  FailureOr<Value> moved = classesLast(kiln, probabilities, axis);
  FailureOr<Value> movedTargets = classesLast(kiln, targets, axis);
  if (failed(moved) || failed(movedTargets))
    return failure();
  int64_t last = KilnOpBuilder::rankOf(*moved) - 1;
  FailureOr<Value> sums = kiln.reduce<ReduceSumOp>(*moved, {last}, /*keepDims=*/true);
  if (failed(sums))
    return failure();
  FailureOr<Value> normalized = kiln.binary<DivOp>(*moved, *sums);
  if (failed(normalized))
    return failure();
  FailureOr<Value> clipped = clippedProbabilities(kiln, *normalized);
  if (failed(clipped))
    return failure();
  FailureOr<Value> logs = kiln.unary<LogOp>(*clipped);
  if (failed(logs))
    return failure();
  return crossEntropyOfTargets(kiln, flags, *logs, *movedTargets);
}

} // namespace

bool isAddedLossKind(StringRef kind) {
  return llvm::is_contained({"softmax_cross_entropy", "sigmoid_cross_entropy", "mse", "nll",
                             "sparse_categorical_crossentropy", "categorical_crossentropy",
                             "binary_crossentropy"},
                            kind);
}

bool lossOverClasses(StringRef kind) {
  return kind == "softmax_cross_entropy" || kind == "nll" ||
         kind == "sparse_categorical_crossentropy" || kind == "categorical_crossentropy";
}

bool lossTakesClassIds(const TrainFlags &flags) {
  return lossOverClasses(flags.loss) && flags.loss != "categorical_crossentropy" &&
         !flags.classProbabilities;
}

FailureOr<Value> buildAddedLoss(KilnOpBuilder &kiln, const TrainFlags &flags, Value output,
                                StringRef outputName, Value labels, int64_t classAxis) {
  StringRef kind = flags.loss;
  if (kind == "softmax_cross_entropy") {
    if (operandAlong<SoftmaxOp>(output, classAxis))
      emitWarning(kiln.getLoc())
          << "softmax_cross_entropy reads logits, but the output '" << outputName
          << "' is a softmax's probabilities: the loss takes a second softmax of them (as "
             "F.cross_entropy would); --loss="
          << (flags.classProbabilities ? "categorical_crossentropy"
                                       : "sparse_categorical_crossentropy")
          << " (Keras' from_logits=False) is the loss of a model that ends in a softmax";
    // Log-probabilities are logits too: their log_softmax's operand gives
    // the same loss and gradient, without the log_softmax.
    Value logits = logitsOfLogProbabilities(output, classAxis);
    return softmaxCrossEntropy(kiln, flags, logits ? logits : output, labels, classAxis);
  }
  if (kind == "nll") {
    // F.nll_loss of a log_softmax's output is the fused loss of its logits
    // (unless weighted by class); of any other output it is -x[label],
    // weighted by class with --class-weights, exactly as PyTorch computes it.
    if (flags.classWeights.empty())
      if (Value logits = logitsOfLogProbabilities(output, classAxis))
        return softmaxCrossEntropy(kiln, flags, logits, labels, classAxis);
    FailureOr<Value> moved = classesLast(kiln, output, classAxis);
    if (failed(moved))
      return failure();
    return classWeightedLossOfIds(kiln, flags, *moved, labels);
  }
  // Log-probabilities given for probabilities are no loss of the model's:
  // sparse_categorical_crossentropy clips them all to 1e-7 (a constant loss,
  // no gradient); categorical_crossentropy divides them by their sum.
  if (kind == "categorical_crossentropy") {
    if (Value logits = operandAlong<SoftmaxOp>(output, classAxis))
      return softmaxCrossEntropyOfTargets(kiln, flags, logits, labels, classAxis);
    if (logitsOfLogProbabilities(output, classAxis))
      emitWarning(kiln.getLoc())
          << kind << " reads probabilities, but the output '" << outputName
          << "' is a log_softmax's log-probabilities, which it divides by their sum: no "
             "cross-entropy of the model's; --loss=softmax_cross_entropy "
             "--class-probabilities reads through the log_softmax";
    return categoricalCrossEntropyOfProbabilities(kiln, flags, output, labels, classAxis);
  }
  if (kind == "sparse_categorical_crossentropy") {
    if (Value logits = operandAlong<SoftmaxOp>(output, classAxis))
      return softmaxCrossEntropy(kiln, flags, logits, labels, classAxis);
    if (logitsOfLogProbabilities(output, classAxis))
      emitWarning(kiln.getLoc())
          << kind << " reads probabilities, but the output '" << outputName
          << "' is a log_softmax's log-probabilities, which it clips to 1e-7: a constant "
             "loss without gradient; --loss=nll (F.nll_loss) is the loss of a model that "
             "ends in a log_softmax";
    FailureOr<Value> clipped = clippedProbabilities(kiln, output);
    if (failed(clipped))
      return failure();
    FailureOr<Value> logs = kiln.unary<LogOp>(*clipped);
    if (failed(logs))
      return failure();
    return softmaxCrossEntropy(kiln, flags, *logs, labels, classAxis);
  }
  if (kind == "sigmoid_cross_entropy") {
    if (output.getDefiningOp<SigmoidOp>())
      emitWarning(kiln.getLoc())
          << "sigmoid_cross_entropy reads logits, but the output '" << outputName
          << "' is a sigmoid's probabilities: the loss takes a second sigmoid of them; "
             "--loss=binary_crossentropy (Keras' from_logits=False, PyTorch's BCELoss) is "
             "the loss of a model that ends in a sigmoid";
    if (!flags.posWeights.empty())
      return positiveWeightedSigmoidCrossEntropy(kiln, flags, output, labels);
    return kiln.sigmoidCrossEntropy(output, labels);
  }
  if (kind == "binary_crossentropy") {
    if (!flags.classWeights.empty())
      return classWeightedBinaryCrossEntropy(kiln, flags, output, labels);
    if (auto sigmoid = output.getDefiningOp<SigmoidOp>())
      return kiln.sigmoidCrossEntropy(sigmoid.getOperand(), labels);
    return binaryCrossEntropyOfProbabilities(kiln, output, labels);
  }
  if (kind == "mse")
    return kiln.meanSquaredError(output, labels);
  llvm_unreachable("kilnc checks --loss against isAddedLossKind");
}

} // namespace kiln
