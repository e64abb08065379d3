//===- OnnxNormOps.cpp - ONNX softmax, reductions and normalizations -----===//

#include "compiler/Import/Onnx/OnnxOps.h"

#include "compiler/Import/DiagnosticText.h"
#include "compiler/Import/Onnx/OnnxTensor.h"
#include "compiler/Import/WeightedCrossEntropy.h"

#include "mlir/IR/TypeUtilities.h"

#include <tuple>

using namespace mlir;

namespace kiln {
namespace {

using Result = KilnOpBuilder::Result;

/// Softmax and LogSoftmax. From opset 13 they work along one axis (default
/// -1); before, they flatten the input to 2-D around `axis` (default 1),
/// normalize each row and restore the shape.
template <typename OpTy> LogicalResult convertSoftmax(OnnxNode &node) {
  Value x = node.getInput(0);
  if (failed(node.requireFloat(x, "an input")))
    return failure();
  bool coerce2d = node.getOpset() < 13;
  FailureOr<int64_t> axisAttr = node.getIntAttr("axis", coerce2d ? 1 : -1);
  if (failed(axisAttr))
    return failure();
  int64_t rank = KilnOpBuilder::rankOf(x);
  FailureOr<int64_t> axis = node.normalizeAxis(*axisAttr, rank, coerce2d);
  if (failed(axis))
    return failure();
  KilnOpBuilder &builder = node.getBuilder();
  if (!coerce2d)
    return node.setResult(0, builder.softmax<OpTy>(x, *axis));
  FailureOr<ArrayRef<int64_t>> shape = node.getStaticShape(x, "an input");
  if (failed(shape))
    return failure();
  FailureOr<int64_t> rows = staticElementCount(shape->take_front(*axis));
  FailureOr<int64_t> cols = staticElementCount(shape->drop_front(*axis));
  if (failed(rows) || failed(cols))
    return node.emitError() << "has an input with too many elements";
  Result flat = builder.reshape(x, {*rows, *cols});
  if (failed(flat))
    return failure();
  Result normalized = builder.softmax<OpTy>(*flat, 1);
  if (failed(normalized))
    return failure();
  return node.setResult(0, builder.reshape(*normalized, *shape));
}

/// What a reduction computes around its sum or max.
enum class ReduceForm {
  Plain,     // ReduceSum, ReduceMean, ReduceMax
  Negated,   // ReduceMin: -max(-x)
  L1,        // sum(|x|)
  L2,        // sqrt(sum(x * x))
  SumSquare, // sum(x * x)
  LogSumExp, // log(sum(exp(x - max))) + max
};

/// `x` reduced over `axes` in `form`, OpTy the reduction of a Plain one.
template <typename OpTy>
Result reduceInForm(KilnOpBuilder &b, Value x, ArrayRef<int64_t> axes, bool keepDims,
                    ReduceForm form) {
  switch (form) {
  case ReduceForm::Plain:
    return b.reduce<OpTy>(x, axes, keepDims);
  case ReduceForm::Negated: {
    Result flipped = b.unary<NegOp>(x);
    if (succeeded(flipped))
      flipped = b.reduce<ReduceMaxOp>(*flipped, axes, keepDims);
    return succeeded(flipped) ? b.unary<NegOp>(*flipped) : flipped;
  }
  case ReduceForm::L1: {
    Result magnitude = b.unary<AbsOp>(x);
    return succeeded(magnitude) ? b.reduce<ReduceSumOp>(*magnitude, axes, keepDims) : magnitude;
  }
  case ReduceForm::L2:
  case ReduceForm::SumSquare: {
    Result squares = b.binary<MulOp>(x, x);
    Result sum = succeeded(squares) ? b.reduce<ReduceSumOp>(*squares, axes, keepDims) : squares;
    if (failed(sum) || form == ReduceForm::SumSquare)
      return sum;
    return b.unary<SqrtOp>(*sum);
  }
  case ReduceForm::LogSumExp: {
    // Shifted by the max where it is finite, by 0 where it is +-inf (a row
    // of -inf sums to log 0 = -inf, one with +inf to inf, not inf - inf).
    Result max = b.reduce<ReduceMaxOp>(x, axes, /*keepDims=*/true);
    Result zero = succeeded(max) ? b.splatLike(*max, 0) : max;
    Result gap = succeeded(max) ? b.binary<SubOp>(*max, *max) : max;
    Result finite = succeeded(gap) && succeeded(zero)
                        ? b.compare(ComparePredicate::eq, *gap, *zero)
                        : Result(failure());
    Result top = succeeded(finite) ? b.select(*finite, *max, *zero) : finite;
    Result shifted = succeeded(top) ? b.binary<SubOp>(x, *top) : top;
    Result e = succeeded(shifted) ? b.unary<ExpOp>(*shifted) : shifted;
    Result sum = succeeded(e) ? b.reduce<ReduceSumOp>(*e, axes, /*keepDims=*/true) : e;
    Result logged = succeeded(sum) ? b.unary<LogOp>(*sum) : sum;
    Result total = succeeded(logged) ? b.binary<AddOp>(*logged, *top) : logged;
    if (failed(total) || keepDims)
      return total;
    SmallVector<int64_t> shape;
    for (auto [d, size] : llvm::enumerate(KilnOpBuilder::shapeOf(x)))
      if (!llvm::is_contained(axes, static_cast<int64_t>(d)))
        shape.push_back(size);
    return b.reshape(*total, shape);
  }
  }
  llvm_unreachable("reduce form");
}

/// ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceL1, ReduceL2,
/// ReduceSumSquare and ReduceLogSumExp: axes are an attribute before
/// `axesInputSince` and an optional input from then on. No axes reduce all
/// of them, or nothing with noop_with_empty_axes.
template <typename OpTy>
LogicalResult convertReduce(OnnxNode &node, int64_t axesInputSince,
                            bool floatOnly, ReduceForm form = ReduceForm::Plain) {
  Value x = node.getInput(0);
  if (failed(floatOnly ? node.requireFloat(x, "an input")
                       : node.requireNumeric(x, "an input")))
    return failure();
  FailureOr<int64_t> keepDims = node.getIntAttr("keepdims", 1);
  if (failed(keepDims))
    return failure();
  std::optional<SmallVector<int64_t>> axes;
  bool noopWithEmptyAxes = false;
  if (node.getOpset() < axesInputSince) {
    if (node.getNumInputs() > 1)
      return node.emitError()
             << "takes axes as an attribute before opset " << axesInputSince
             << ", got " << node.getNumInputs() << " inputs";
    if (failed(node.refuseAttr("noop_with_empty_axes",
                               "it arrived with axes as an input")))
      return failure();
    FailureOr<std::optional<SmallVector<int64_t>>> attr =
        node.getIntsAttr("axes");
    if (failed(attr))
      return failure();
    axes = std::move(*attr);
  } else {
    if (failed(node.refuseAttr("axes", "axes are input #1 from opset " +
                                           std::to_string(axesInputSince))))
      return failure();
    FailureOr<int64_t> noop = node.getIntAttr("noop_with_empty_axes", 0);
    if (failed(noop))
      return failure();
    noopWithEmptyAxes = *noop != 0;
    if (node.hasInput(1)) {
      FailureOr<SmallVector<int64_t>> input = node.getConstantInts(1, "axes");
      if (failed(input))
        return failure();
      axes = std::move(*input);
    }
  }
  int64_t rank = KilnOpBuilder::rankOf(x);
  SmallVector<int64_t> reduced;
  if (!axes || axes->empty()) {
    // Nothing reduced: what the reduction does to each element alone
    // (|x|, x * x; onnxruntime's and onnx's reference's reading).
    if (noopWithEmptyAxes && (form == ReduceForm::L1 || form == ReduceForm::L2))
      return node.setResult(0, node.getBuilder().unary<AbsOp>(x));
    if (noopWithEmptyAxes && form == ReduceForm::SumSquare)
      return node.setResult(0, node.getBuilder().binary<MulOp>(x, x));
    if (noopWithEmptyAxes)
      return node.setResult(0, x);
    for (int64_t d = 0; d < rank; ++d)
      reduced.push_back(d);
  } else {
    FailureOr<SmallVector<int64_t>> normalized =
        node.normalizeAxes(*axes, rank);
    if (failed(normalized))
      return failure();
    reduced = std::move(*normalized);
  }
  return node.setResult(
      0, reduceInForm<OpTy>(node.getBuilder(), x, reduced, *keepDims != 0, form));
}

LogicalResult convertReduceSum(OnnxNode &node) {
  return convertReduce<ReduceSumOp>(node, 13, /*floatOnly=*/false);
}
LogicalResult convertReduceMean(OnnxNode &node) {
  return convertReduce<ReduceMeanOp>(node, 18, /*floatOnly=*/true);
}
LogicalResult convertReduceMax(OnnxNode &node) {
  return convertReduce<ReduceMaxOp>(node, 18, /*floatOnly=*/false);
}
LogicalResult convertReduceMin(OnnxNode &node) {
  return convertReduce<ReduceMaxOp>(node, 18, /*floatOnly=*/false, ReduceForm::Negated);
}
template <ReduceForm Form> LogicalResult convertReduceFloat(OnnxNode &node) {
  return convertReduce<ReduceSumOp>(node, 18, /*floatOnly=*/true, Form);
}

/// Scale and bias broadcast (one way) to the normalized dimensions.
Result broadcastParam(OnnxNode &node, Value param, ArrayRef<int64_t> normalized,
                      StringRef what) {
  ArrayRef<int64_t> shape = KilnOpBuilder::shapeOf(param);
  FailureOr<SmallVector<int64_t>> joined = broadcastShapes(shape, normalized);
  if (failed(joined) || ArrayRef<int64_t>(*joined) != normalized)
    return node.emitError()
           << "expects " << what << " of a shape that broadcasts to "
           << formatIntList(normalized)
           << " (the normalized dimensions), got " << formatIntList(shape);
  return node.getBuilder().broadcastTo(param, normalized);
}

/// LayerNormalization's Mean and InvStdDev outputs are refused when used
/// (OnnxOps.cpp checks that for every output a conversion leaves unset).
LogicalResult convertLayerNorm(OnnxNode &node) {
  FailureOr<int64_t> axisAttr = node.getIntAttr("axis", -1);
  FailureOr<float> epsilon = node.getFloatAttr("epsilon", 1e-5f);
  FailureOr<int64_t> stashType = node.getIntAttr("stash_type", 1);
  if (failed(axisAttr) || failed(epsilon) || failed(stashType))
    return failure();
  // stash_type picks the precision of the statistics; kiln's lowering
  // computes them in f32 whatever it says.
  Value x = node.getInput(0);
  if (failed(node.requireFloat(x, "an input")))
    return failure();
  FailureOr<int64_t> axis =
      node.normalizeAxis(*axisAttr, KilnOpBuilder::rankOf(x));
  if (failed(axis))
    return failure();
  ArrayRef<int64_t> normalized = KilnOpBuilder::shapeOf(x).drop_front(*axis);
  Result scale = broadcastParam(node, node.getInput(1), normalized, "Scale");
  if (failed(scale))
    return failure();
  Value bias;
  if (node.hasInput(2)) {
    Result b = broadcastParam(node, node.getInput(2), normalized, "B");
    if (failed(b))
      return failure();
    bias = *b;
  }
  return node.setResult(
      0, node.getBuilder().layerNorm(x, *scale, bias, *axis, *epsilon));
}

/// `x` [N, C, D...] normalized over each of `groups` groups of C / groups
/// channels and all of D (mean 0, variance 1, no scale; `groups` 0: one per
/// channel): a layer norm of [N * groups, C / groups * prod(D)] with a
/// scale of ones.
Result normalizeGroups(OnnxNode &node, Value x, int64_t groups, float epsilon) {
  if (failed(node.requireFloat(x, "an input")))
    return failure();
  FailureOr<ArrayRef<int64_t>> shape = node.getStaticShape(x, "an input");
  if (failed(shape))
    return failure();
  if (shape->size() < 3)
    return node.emitError() << "expects an input of rank 3 or more ([N, C, D...]), got "
                            << formatIntList(*shape);
  int64_t channels = (*shape)[1];
  if (groups == 0)
    groups = channels;
  if (groups < 1 || channels % groups != 0)
    return node.emitError() << "expects num_groups dividing the input's " << channels
                            << " channels, got " << groups;
  FailureOr<int64_t> perGroup = staticElementCount(shape->drop_front(2));
  FailureOr<int64_t> total = staticElementCount(*shape);
  if (failed(perGroup) || failed(total) || *total == 0)
    return node.emitError() << "has an input of shape " << formatIntList(*shape)
                            << ", which has no elements to normalize or too many";
  int64_t width = *perGroup * (channels / groups);
  KilnOpBuilder &b = node.getBuilder();
  Result rows = b.reshape(x, {(*shape)[0] * groups, width});
  if (failed(rows))
    return failure();
  Result ones = b.constant(DenseElementsAttr::get(
      RankedTensorType::get({width}, getElementTypeOrSelf(x.getType())),
      FloatAttr::get(getElementTypeOrSelf(x.getType()), 1.0)));
  Result normalized = succeeded(ones) ? b.layerNorm(*rows, *ones, Value(), 1, epsilon) : ones;
  if (failed(normalized))
    return failure();
  return b.reshape(*normalized, *shape);
}

/// `y * scale + bias` with scale and bias [C] applied along dimension 1 of
/// y [N, C, D...].
Result perChannelAffine(OnnxNode &node, Value y, Value scale, Value bias) {
  ArrayRef<int64_t> shape = KilnOpBuilder::shapeOf(y);
  SmallVector<int64_t> channelShape(shape.size() - 1, 1);
  channelShape[0] = shape[1];
  KilnOpBuilder &b = node.getBuilder();
  Result result = y;
  for (auto [value, what, isScale] : {std::tuple(scale, "scale", true),
                                      std::tuple(bias, "bias", false)}) {
    ArrayRef<int64_t> given = KilnOpBuilder::shapeOf(value);
    if (given != ArrayRef<int64_t>(shape[1]))
      return node.emitError() << "expects " << what << " of shape [" << shape[1]
                              << "] (one per channel), got " << formatIntList(given);
    Result shaped = b.reshape(value, channelShape);
    if (failed(shaped))
      return failure();
    result = isScale ? b.binary<MulOp>(*result, *shaped) : b.binary<AddOp>(*result, *shaped);
    if (failed(result))
      return failure();
  }
  return result;
}

/// InstanceNormalization: each channel of each example normalized over its
/// spatial dimensions, then scaled and shifted per channel.
LogicalResult convertInstanceNorm(OnnxNode &node) {
  FailureOr<float> epsilon = node.getFloatAttr("epsilon", 1e-5f);
  if (failed(epsilon))
    return failure();
  Result y = normalizeGroups(node, node.getInput(0), 0, *epsilon);
  if (failed(y))
    return failure();
  return node.setResult(0, perChannelAffine(node, *y, node.getInput(1), node.getInput(2)));
}

/// GroupNormalization: channels normalized by groups. Opset 21 scales per
/// channel; opsets 18 to 20 per group (each group's value repeated over its
/// channels here).
LogicalResult convertGroupNorm(OnnxNode &node) {
  FailureOr<float> epsilon = node.getFloatAttr("epsilon", 1e-5f);
  FailureOr<int64_t> groups = node.getIntAttr("num_groups", 0);
  FailureOr<int64_t> stashType = node.getIntAttr("stash_type", 1);
  if (failed(epsilon) || failed(groups) || failed(stashType))
    return failure();
  if (*groups < 1)
    return node.emitError() << "expects attribute 'num_groups' of at least 1, got " << *groups;
  // stash_type picks the statistics' precision; kiln's are f32 whatever it says.
  Value x = node.getInput(0);
  Result y = normalizeGroups(node, x, *groups, *epsilon);
  if (failed(y))
    return failure();
  Value scale = node.getInput(1), bias = node.getInput(2);
  if (node.getOpset() < 21) {
    KilnOpBuilder &b = node.getBuilder();
    int64_t channels = KilnOpBuilder::shapeOf(x)[1];
    for (Value *param : {&scale, &bias}) {
      ArrayRef<int64_t> given = KilnOpBuilder::shapeOf(*param);
      if (given != ArrayRef<int64_t>(*groups))
        return node.emitError() << "expects " << (param == &scale ? "scale" : "bias")
                                << " of shape [" << *groups << "] (one per group before opset "
                                   "21), got "
                                << formatIntList(given);
      Result perChannel = b.reshape(*param, {*groups, 1});
      if (succeeded(perChannel))
        perChannel = b.broadcastTo(*perChannel, {*groups, channels / *groups});
      if (succeeded(perChannel))
        perChannel = b.reshape(*perChannel, {channels});
      if (failed(perChannel))
        return failure();
      *param = *perChannel;
    }
  }
  return node.setResult(0, perChannelAffine(node, *y, scale, bias));
}

/// The mean cross-entropy of `scores` [N, C, d...] against `labels` [N,
/// d...] under the node's attributes (SoftmaxCrossEntropyLoss's and
/// NegativeLogLikelihoodLoss's): over the positions whose label is not
/// ignore_index, the classes moved last. `scores` are logits, or with
/// `logProbabilities` their log-softmax already (-scores[label] is the
/// loss: NegativeLogLikelihoodLoss of any input). With class weights (input
/// 2, [C]), PyTorch's weighted mean (WeightedCrossEntropy.h); without them
/// over logits, the fused kiln.softmax_cross_entropy. The reductions 'sum'
/// and 'none' are refused.
LogicalResult convertMeanCrossEntropy(OnnxNode &node, Value scores, Value labels,
                                      bool logProbabilities) {
  if (failed(node.requireFloat(scores, "scores")))
    return failure();
  auto labelType = llvm::cast<RankedTensorType>(labels.getType()).getElementType();
  if (!labelType.isInteger(32) && !labelType.isInteger(64))
    return node.emitError() << "expects int32 or int64 labels, got " << labelType;
  FailureOr<std::string> reduction = node.getStringAttr("reduction", "mean");
  if (failed(reduction))
    return failure();
  if (*reduction != "mean")
    return node.emitError() << "has reduction '" << *reduction
                            << "'; kiln supports 'mean' (PyTorch's default)";
  std::optional<int64_t> ignoreIndex;
  if (node.hasAttribute("ignore_index")) {
    FailureOr<int64_t> value = node.getIntAttr("ignore_index", 0);
    if (failed(value))
      return failure();
    // One that int32 labels cannot hold matches none of them.
    if (labelType.isInteger(64) || llvm::isInt<32>(*value))
      ignoreIndex = *value;
  }
  int64_t rank = KilnOpBuilder::rankOf(scores);
  if (rank < 2)
    return node.emitError() << "expects scores of rank 2 or more ([N, C, ...]), got rank "
                            << rank;
  int64_t classes = KilnOpBuilder::shapeOf(scores)[1];
  Value weights = node.hasInput(2) ? node.getInput(2) : Value();
  if (weights && (KilnOpBuilder::shapeOf(weights) != ArrayRef<int64_t>(classes) ||
                  getElementTypeOrSelf(weights.getType()) !=
                      getElementTypeOrSelf(scores.getType())))
    return node.emitError() << "expects class weights (input '"
                            << (node.getOpType() == "NegativeLogLikelihoodLoss" ? "weight"
                                                                                : "weights")
                            << "') of shape [" << classes << "] and the scores' type "
                            << getElementTypeOrSelf(scores.getType()) << ", got "
                            << weights.getType();
  KilnOpBuilder &b = node.getBuilder();
  Value moved = scores;
  if (rank > 2) {
    SmallVector<int64_t> permutation = {0};
    for (int64_t d = 2; d < rank; ++d)
      permutation.push_back(d);
    permutation.push_back(1);
    Result transposed = b.transpose(scores, permutation);
    if (failed(transposed))
      return failure();
    moved = *transposed;
  }
  if (!weights && !logProbabilities)
    return node.setResult(0, b.softmaxCrossEntropy(moved, labels, ignoreIndex));
  Result logProbs = logProbabilities ? Result(moved) : b.softmax<LogSoftmaxOp>(moved, rank - 1);
  Result classWeights = Result(weights);
  if (!weights) { // Every class weighs 1: the plain mean over the kept positions.
    auto type = RankedTensorType::get({classes}, getElementTypeOrSelf(scores.getType()));
    classWeights = b.constant(DenseElementsAttr::get(
        type, FloatAttr::get(type.getElementType(), 1.0)));
  }
  if (failed(logProbs) || failed(classWeights))
    return failure();
  return node.setResult(0, classWeightedCrossEntropy(b, ClassWeighting::PyTorch, *logProbs,
                                                     labels, *classWeights, ignoreIndex, 0.0));
}

/// SoftmaxCrossEntropyLoss (opset 12), what torch.onnx writes for
/// F.cross_entropy in a model that computes its own loss (transformers'
/// models given labels), with its class weights where it has them. A used
/// log_prob output is refused.
LogicalResult convertSoftmaxCrossEntropyLoss(OnnxNode &node) {
  return convertMeanCrossEntropy(node, node.getInput(0), node.getInput(1), false);
}

/// NegativeLogLikelihoodLoss (opset 12), what torch.onnx writes for
/// F.nll_loss: -input[label] of log-probabilities [N, C, d...], weighted
/// by class where it has weights. Those of a LogSoftmax over the classes
/// without weights are the fused softmax cross-entropy of its operand.
LogicalResult convertNegativeLogLikelihoodLoss(OnnxNode &node) {
  auto logSoftmax = node.getInput(0).getDefiningOp<LogSoftmaxOp>();
  if (logSoftmax && logSoftmax.getAxis() == 1 && !node.hasInput(2))
    return convertMeanCrossEntropy(node, logSoftmax.getOperand(), node.getInput(1), false);
  return convertMeanCrossEntropy(node, node.getInput(0), node.getInput(1), true);
}

constexpr OnnxOpConversion kNormOps[] = {
    {"Softmax", 1, 1, 1, "axis", convertSoftmax<SoftmaxOp>},
    {"LogSoftmax", 1, 1, 1, "axis", convertSoftmax<LogSoftmaxOp>},
    {"SoftmaxCrossEntropyLoss", 2, 3, 2, "ignore_index reduction",
     convertSoftmaxCrossEntropyLoss, 12},
    {"NegativeLogLikelihoodLoss", 2, 3, 1, "ignore_index reduction",
     convertNegativeLogLikelihoodLoss, 12},
    {"ReduceSum", 1, 2, 1, "axes keepdims noop_with_empty_axes",
     convertReduceSum},
    {"ReduceMean", 1, 2, 1, "axes keepdims noop_with_empty_axes",
     convertReduceMean},
    {"ReduceMax", 1, 2, 1, "axes keepdims noop_with_empty_axes",
     convertReduceMax},
    {"ReduceMin", 1, 2, 1, "axes keepdims noop_with_empty_axes",
     convertReduceMin},
    {"ReduceL1", 1, 2, 1, "axes keepdims noop_with_empty_axes",
     convertReduceFloat<ReduceForm::L1>},
    {"ReduceL2", 1, 2, 1, "axes keepdims noop_with_empty_axes",
     convertReduceFloat<ReduceForm::L2>},
    {"ReduceSumSquare", 1, 2, 1, "axes keepdims noop_with_empty_axes",
     convertReduceFloat<ReduceForm::SumSquare>},
    {"ReduceLogSumExp", 1, 2, 1, "axes keepdims noop_with_empty_axes",
     convertReduceFloat<ReduceForm::LogSumExp>},
    {"LayerNormalization", 2, 3, 3, "axis epsilon stash_type", convertLayerNorm,
     17},
    {"InstanceNormalization", 3, 3, 1, "epsilon", convertInstanceNorm, 6},
    {"GroupNormalization", 3, 3, 1, "epsilon num_groups stash_type", convertGroupNorm, 18},
};

} // namespace

ArrayRef<OnnxOpConversion> getOnnxNormOps() { return kNormOps; }

} // namespace kiln
