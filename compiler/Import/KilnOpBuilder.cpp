//===- KilnOpBuilder.cpp - Builds kiln ops from untrusted input -----------===//

#include "compiler/Import/KilnOpBuilder.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace kiln {

int64_t KilnOpBuilder::rankOf(Value value) {
  return llvm::cast<RankedTensorType>(value.getType()).getRank();
}

ArrayRef<int64_t> KilnOpBuilder::shapeOf(Value value) {
  return llvm::cast<RankedTensorType>(value.getType()).getShape();
}

DenseElementsAttr KilnOpBuilder::constantValueOf(Value value) {
  if (auto constant = value ? value.getDefiningOp<ConstantOp>() : ConstantOp())
    return llvm::dyn_cast<DenseElementsAttr>(constant.getValue());
  return {};
}

Value KilnOpBuilder::foldOverConstants(Operation *op) {
  Value result = op->getResult(0);
  if (op->getNumOperands() == 0 || op->getNumResults() != 1 ||
      !llvm::all_of(op->getOperands(),
                    [](Value v) { return matchPattern(v, m_Constant()); }))
    return result;
  SmallVector<OpFoldResult> folded;
  if (failed(op->fold(folded)) || folded.size() != 1)
    return result;
  // An identity (x * 1, x + 0) folds to its operand, itself a constant
  // here: the TorchScript exporter's torch.chunk bounds multiply by 1.
  if (auto same = llvm::dyn_cast_if_present<Value>(folded.front())) {
    if (same == result || same.getType() != result.getType())
      return result;
    op->erase();
    return same;
  }
  auto value = llvm::dyn_cast_if_present<ElementsAttr>(
      llvm::dyn_cast_if_present<Attribute>(folded.front()));
  if (!value || value.getType() != result.getType())
    return result;
  Value constant = builder.create<ConstantOp>(loc, value);
  op->erase();
  return constant;
}

KilnOpBuilder::Result KilnOpBuilder::constant(ElementsAttr value) {
  return create<ConstantOp>(value);
}

KilnOpBuilder::Result KilnOpBuilder::splatLike(Value like, double value) {
  auto type = llvm::cast<RankedTensorType>(like.getType());
  Type elementType = type.getElementType();
  Attribute element;
  if (auto floatType = llvm::dyn_cast<FloatType>(elementType)) {
    element = builder.getFloatAttr(floatType, value);
  } else {
    element = builder.getIntegerAttr(elementType, static_cast<int64_t>(value));
  }
  return constant(SplatElementsAttr::get(type, element));
}

FailureOr<SmallVector<Value>>
KilnOpBuilder::broadcastOperands(StringRef opName, ValueRange operands) {
  SmallVector<int64_t> shape;
  Type elementType = getElementTypeOrSelf(operands.front().getType());
  for (Value operand : operands) {
    Type other = getElementTypeOrSelf(operand.getType());
    if (other != elementType)
      return diag(opName).fail("expects operands of one element type, got ",
                               elementType, " and ", other);
    FailureOr<SmallVector<int64_t>> joined =
        broadcastShapes(shape, shapeOf(operand));
    if (failed(joined)) {
      InFlightDiagnostic error = emitError();
      error << "'" << opName << "' op cannot broadcast operand shapes ";
      llvm::interleave(
          operands, error,
          [&](Value v) {
            error << "[";
            llvm::interleaveComma(shapeOf(v), error);
            error << "]";
          },
          " and ");
      return failure();
    }
    shape = std::move(*joined);
  }
  SmallVector<Value> result;
  for (Value operand : operands) {
    Result broadcast = broadcastTo(operand, shape);
    if (failed(broadcast))
      return failure();
    result.push_back(*broadcast);
  }
  return result;
}

KilnOpBuilder::Result KilnOpBuilder::gelu(Value operand,
                                          GeluApproximation approximation) {
  return create<GeluOp>(operand.getType(), operand, approximation);
}

KilnOpBuilder::Result KilnOpBuilder::compare(ComparePredicate predicate,
                                             Value lhs, Value rhs) {
  FailureOr<SmallVector<Value>> operands =
      broadcastOperands(CompareOp::getOperationName(), {lhs, rhs});
  if (failed(operands))
    return failure();
  InferredType type = inferCompareType(diag(CompareOp::getOperationName()),
                                       (*operands)[0].getType(),
                                       (*operands)[1].getType());
  if (failed(type))
    return failure();
  return create<CompareOp>(*type, predicate, (*operands)[0], (*operands)[1]);
}

KilnOpBuilder::Result KilnOpBuilder::select(Value condition, Value onTrue,
                                            Value onFalse) {
  StringRef name = SelectOp::getOperationName();
  FailureOr<SmallVector<Value>> values =
      broadcastOperands(name, {onTrue, onFalse});
  if (failed(values))
    return failure();
  // The condition is i1, the values are not: broadcast shapes separately.
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShapes(shapeOf(condition), shapeOf((*values)[0]));
  if (failed(shape))
    return diag(name).fail("cannot broadcast the condition to the values");
  Result cond = broadcastTo(condition, *shape);
  Result t = broadcastTo((*values)[0], *shape);
  Result f = broadcastTo((*values)[1], *shape);
  if (failed(cond) || failed(t) || failed(f))
    return failure();
  InferredType type = inferSelectType(diag(name), cond->getType(),
                                      t->getType(), f->getType());
  if (failed(type))
    return failure();
  return create<SelectOp>(*type, *cond, *t, *f);
}

KilnOpBuilder::Result KilnOpBuilder::cast(Value operand, Type elementType) {
  auto type = RankedTensorType::get(shapeOf(operand), elementType);
  return create<CastOp>(type, operand);
}

KilnOpBuilder::Result KilnOpBuilder::matmul(Value lhs, Value rhs,
                                            bool transposeA, bool transposeB) {
  InferredType type =
      inferMatmulType(diag(MatmulOp::getOperationName()), lhs.getType(),
                      rhs.getType(), transposeA, transposeB);
  if (failed(type))
    return failure();
  return create<MatmulOp>(*type, lhs, rhs, transposeA, transposeB);
}

KilnOpBuilder::Result KilnOpBuilder::reshape(Value operand,
                                             ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(
      shape, getElementTypeOrSelf(operand.getType()));
  if (failed(verifyReshape(diag(ReshapeOp::getOperationName()),
                           operand.getType(), type)))
    return failure();
  if (type == operand.getType())
    return operand;
  return create<ReshapeOp>(type, operand);
}

KilnOpBuilder::Result KilnOpBuilder::broadcastTo(Value operand,
                                                 ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(
      shape, getElementTypeOrSelf(operand.getType()));
  if (type == operand.getType())
    return operand;
  if (failed(verifyBroadcast(diag(BroadcastOp::getOperationName()),
                             operand.getType(), type)))
    return failure();
  return create<BroadcastOp>(type, operand);
}

KilnOpBuilder::Result KilnOpBuilder::transpose(Value operand,
                                               ArrayRef<int64_t> permutation) {
  InferredType type = inferTransposeType(diag(TransposeOp::getOperationName()),
                                         operand.getType(), permutation);
  if (failed(type))
    return failure();
  return create<TransposeOp>(*type, operand,
                             builder.getDenseI64ArrayAttr(permutation));
}

KilnOpBuilder::Result KilnOpBuilder::concat(ValueRange inputs, int64_t axis) {
  InferredType type = inferConcatType(diag(ConcatOp::getOperationName()),
                                      inputs.getTypes(), axis);
  if (failed(type))
    return failure();
  return create<ConcatOp>(*type, inputs, builder.getI64IntegerAttr(axis));
}

KilnOpBuilder::Result KilnOpBuilder::slice(Value operand,
                                           ArrayRef<int64_t> start,
                                           ArrayRef<int64_t> limit,
                                           ArrayRef<int64_t> step) {
  InferredType type = inferSliceType(diag(SliceOp::getOperationName()),
                                     operand.getType(), start, limit, step);
  if (failed(type))
    return failure();
  return create<SliceOp>(*type, operand, builder.getDenseI64ArrayAttr(start),
                         builder.getDenseI64ArrayAttr(limit),
                         builder.getDenseI64ArrayAttr(step));
}

KilnOpBuilder::Result KilnOpBuilder::layerNorm(Value input, Value scale,
                                               Value bias, int64_t axis,
                                               double epsilon) {
  InferredType type = inferLayerNormType(
      diag(LayerNormOp::getOperationName()), input.getType(), scale.getType(),
      bias ? bias.getType() : Type(), axis, epsilon);
  if (failed(type))
    return failure();
  return create<LayerNormOp>(*type, input, scale, bias,
                             builder.getI64IntegerAttr(axis),
                             builder.getF64FloatAttr(epsilon));
}

KilnOpBuilder::Result KilnOpBuilder::gather(Value table, Value indices,
                                            int64_t axis) {
  InferredType type = inferGatherType(diag(GatherOp::getOperationName()),
                                      table.getType(), indices.getType(), axis);
  if (failed(type))
    return failure();
  return create<GatherOp>(*type, table, indices,
                          builder.getI64IntegerAttr(axis));
}

KilnOpBuilder::Result KilnOpBuilder::oneHot(Value indices, int64_t depth, Type elementType) {
  SmallVector<int64_t> shape(shapeOf(indices));
  shape.push_back(depth);
  return create<OneHotOp>(RankedTensorType::get(shape, elementType), indices);
}

KilnOpBuilder::Result KilnOpBuilder::embeddingBag(Value table, Value ids,
                                                  EmbeddingCombiner combiner) {
  InferredType type = inferEmbeddingBagType(diag(EmbeddingBagOp::getOperationName()),
                                            table.getType(), ids.getType());
  if (failed(type))
    return failure();
  return create<EmbeddingBagOp>(*type, table, ids,
                                combiner);
}

KilnOpBuilder::Result KilnOpBuilder::scatterAddRows(Value rows, Value ids, int64_t numRows) {
  auto rowsType = llvm::cast<RankedTensorType>(rows.getType());
  SmallVector<int64_t> shape(rowsType.getShape());
  shape[0] = numRows;
  return create<ScatterAddRowsOp>(RankedTensorType::get(shape, rowsType.getElementType()), rows,
                                  ids);
}

KilnOpBuilder::Result KilnOpBuilder::shifted(Value y, int64_t axis, int64_t k, bool backward) {
  ArrayRef<int64_t> shape = shapeOf(y);
  int64_t n = shape[axis];
  SmallVector<int64_t> start(shape.size(), 0), limit(shape), step(shape.size(), 1);
  if (backward)
    start[axis] = k;
  else
    limit[axis] = n - k;
  SmallVector<int64_t> zerosShape(shape);
  zerosShape[axis] = k;
  auto type = RankedTensorType::get(zerosShape, getElementTypeOrSelf(y.getType()));
  Result zeros =
      constant(SplatElementsAttr::get(type, builder.getZeroAttr(type.getElementType())));
  Result kept = slice(y, start, limit, step);
  if (failed(zeros) || failed(kept))
    return failure();
  return backward ? concat({*kept, *zeros}, axis) : concat({*zeros, *kept}, axis);
}

KilnOpBuilder::Result KilnOpBuilder::cumulativeSum(Value x, int64_t axis, bool reverse) {
  int64_t n = shapeOf(x)[axis];
  Value y = x;
  for (int64_t k = 1; k < n; k *= 2) {
    Result moved = shifted(y, axis, k, reverse);
    Result sum = succeeded(moved) ? binary<AddOp>(y, *moved) : moved;
    if (failed(sum))
      return failure();
    y = *sum;
  }
  return y;
}

KilnOpBuilder::Result KilnOpBuilder::reverse(Value operand, int64_t axis) {
  int64_t size = shapeOf(operand)[axis];
  SmallVector<int64_t> indices;
  for (int64_t i = size - 1; i >= 0; --i)
    indices.push_back(i);
  auto type = RankedTensorType::get({size}, builder.getI64Type());
  Result ids =
      constant(DenseElementsAttr::get(type, ArrayRef<int64_t>(indices)));
  if (failed(ids))
    return failure();
  return gather(operand, *ids, axis);
}

KilnOpBuilder::Result KilnOpBuilder::gatherElements(Value input, Value indices,
                                                    int64_t axis) {
  InferredType type = inferGatherElementsType(
      diag(GatherElementsOp::getOperationName()), input.getType(),
      indices.getType(), axis);
  if (failed(type))
    return failure();
  return create<GatherElementsOp>(*type, input, indices,
                                  builder.getI64IntegerAttr(axis));
}

KilnOpBuilder::Result KilnOpBuilder::mod(Value lhs, Value rhs, bool fmod) {
  FailureOr<SmallVector<Value>> operands =
      broadcastOperands(ModOp::getOperationName(), {lhs, rhs});
  if (failed(operands))
    return failure();
  return create<ModOp>((*operands)[0].getType(), (*operands)[0], (*operands)[1],
                       fmod ? builder.getUnitAttr() : UnitAttr());
}

KilnOpBuilder::Result KilnOpBuilder::convTranspose(Value input, Value filter,
                                                   const WindowAttrs &window, int64_t groups,
                                                   ArrayRef<int64_t> resultShape) {
  auto resultType =
      RankedTensorType::get(resultShape, llvm::cast<RankedTensorType>(input.getType())
                                             .getElementType());
  InferredType forward = inferConvType(diag(ConvBackwardDataOp::getOperationName()),
                                       resultType, filter.getType(), window, groups);
  if (failed(forward))
    return failure();
  if (*forward != input.getType())
    return emitError() << "a convolution of the result " << resultType << " would give "
                       << *forward << ", not the input's " << input.getType();
  return create<ConvBackwardDataOp>(resultType, input, filter,
                                    builder.getDenseI64ArrayAttr(window.strides),
                                    builder.getDenseI64ArrayAttr(window.dilations),
                                    builder.getDenseI64ArrayAttr(window.padLow),
                                    builder.getDenseI64ArrayAttr(window.padHigh),
                                    builder.getI64IntegerAttr(groups));
}

KilnOpBuilder::Result KilnOpBuilder::conv(Value input, Value filter,
                                          const WindowAttrs &window,
                                          int64_t groups) {
  InferredType type =
      inferConvType(diag(ConvOp::getOperationName()), input.getType(),
                    filter.getType(), window, groups);
  if (failed(type))
    return failure();
  return create<ConvOp>(*type, input, filter,
                        builder.getDenseI64ArrayAttr(window.strides),
                        builder.getDenseI64ArrayAttr(window.dilations),
                        builder.getDenseI64ArrayAttr(window.padLow),
                        builder.getDenseI64ArrayAttr(window.padHigh),
                        builder.getI64IntegerAttr(groups));
}

KilnOpBuilder::Result KilnOpBuilder::maxPool(Value input,
                                             const WindowAttrs &window) {
  InferredType type = inferPoolType(diag(MaxPoolOp::getOperationName()),
                                    input.getType(), window);
  if (failed(type))
    return failure();
  return create<MaxPoolOp>(
      *type, input, builder.getDenseI64ArrayAttr(window.kernel),
      builder.getDenseI64ArrayAttr(window.strides),
      builder.getDenseI64ArrayAttr(window.dilations),
      builder.getDenseI64ArrayAttr(window.padLow),
      builder.getDenseI64ArrayAttr(window.padHigh),
      window.ceilMode ? builder.getUnitAttr() : UnitAttr());
}

KilnOpBuilder::Result KilnOpBuilder::avgPool(Value input,
                                             const WindowAttrs &window,
                                             bool excludePad) {
  StringRef name = AvgPoolOp::getOperationName();
  if (llvm::any_of(window.dilations, [](int64_t d) { return d != 1; }))
    return diag(name).fail("expects dilations of 1, got ",
                           formatShape(window.dilations));
  InferredType type = inferPoolType(diag(name), input.getType(), window);
  if (failed(type))
    return failure();
  return create<AvgPoolOp>(
      *type, input, builder.getDenseI64ArrayAttr(window.kernel),
      builder.getDenseI64ArrayAttr(window.strides),
      builder.getDenseI64ArrayAttr(window.dilations),
      builder.getDenseI64ArrayAttr(window.padLow),
      builder.getDenseI64ArrayAttr(window.padHigh),
      window.ceilMode ? builder.getUnitAttr() : UnitAttr(),
      excludePad ? builder.getUnitAttr() : UnitAttr());
}

KilnOpBuilder::Result KilnOpBuilder::softmaxCrossEntropy(Value logits, Value labels,
                                                         std::optional<int64_t> ignoreIndex,
                                                         std::optional<double> labelSmoothing) {
  InferredType type = inferSoftmaxCrossEntropyType(
      diag(SoftmaxCrossEntropyOp::getOperationName()), logits.getType(),
      labels.getType());
  if (failed(type))
    return failure();
  IntegerAttr ignored = ignoreIndex ? builder.getI64IntegerAttr(*ignoreIndex) : IntegerAttr();
  // No smoothing (0, as PyTorch's default) is no attribute: the plain loss.
  FloatAttr smoothing = labelSmoothing && *labelSmoothing != 0.0
                            ? builder.getF64FloatAttr(*labelSmoothing)
                            : FloatAttr();
  return create<SoftmaxCrossEntropyOp>(*type, logits, labels, ignored, smoothing);
}

KilnOpBuilder::Result KilnOpBuilder::sigmoidCrossEntropy(Value logits,
                                                         Value targets) {
  InferredType type = inferPointwiseLossType(
      diag(SigmoidCrossEntropyOp::getOperationName()),
      {logits.getType(), targets.getType()});
  if (failed(type))
    return failure();
  return create<SigmoidCrossEntropyOp>(*type, logits, targets);
}

KilnOpBuilder::Result KilnOpBuilder::meanSquaredError(Value prediction,
                                                      Value target) {
  InferredType type = inferPointwiseLossType(
      diag(MeanSquaredErrorOp::getOperationName()),
      {prediction.getType(), target.getType()});
  if (failed(type))
    return failure();
  return create<MeanSquaredErrorOp>(*type, prediction, target);
}

} // namespace kiln
