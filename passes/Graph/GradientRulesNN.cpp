//===- GradientRulesNN.cpp - Gradients of matmul, reductions, norms, losses ===//
//
// matmul's operand gradients are matmuls with the transposes folded into
// flags. Softmax-like and layer-norm rules use the closed forms (no
// re-derivation through their pieces). Losses are means, so their
// gradients carry 1 / count; a gather's table gradient here is the dense
// one (kiln-autodiff keeps the sparse rows for variables read only by
// gathers instead).
//
//===----------------------------------------------------------------------===//

#include "passes/Graph/GradientRules.h"

using namespace mlir;

namespace kiln {
namespace {

SmallVector<int64_t> axesFrom(int64_t first, int64_t rank) {
  SmallVector<int64_t> axes;
  for (int64_t d = first; d < rank; ++d)
    axes.push_back(d);
  return axes;
}

FailureOr<bool> matmulGradients(MatmulOp op, Value g, GradientBuilder &gb,
                                SmallVectorImpl<Value> &grads) {
  Value a = op.getLhs(), b = op.getRhs();
  bool ta = op.getTransposeA(), tb = op.getTransposeB();
  RankedTensorType aType = tensorType(a), bType = tensorType(b);
  bool sharedB = aType.getRank() > 2 && bType.getRank() == 2;
  if (sharedB && ta)
    return op.emitOpError("has no gradient rule for a transposed lhs with a shared rhs"),
           false;
  Value da, db;
  if (!ta && !tb)
    da = gb.matmul(g, b, false, true);
  else if (!ta && tb)
    da = gb.matmul(g, b, false, false);
  else if (ta && !tb)
    da = gb.matmul(b, g, false, true);
  else
    da = gb.matmul(b, g, true, true);
  // A shared rhs receives the sum over the batch: fold the batch into rows.
  Value a2 = sharedB ? gb.flattenLeading(a, 1) : a;
  Value g2 = sharedB ? gb.flattenLeading(g, 1) : g;
  if (!ta && !tb)
    db = gb.matmul(a2, g2, true, false);
  else if (!ta && tb)
    db = gb.matmul(g2, a2, true, false);
  else if (ta && !tb)
    db = gb.matmul(a2, g2, false, false);
  else
    db = gb.matmul(g2, a2, true, true);
  grads.assign({da, db});
  return true;
}

FailureOr<bool> reduceGradients(Operation *op, Value g, GradientBuilder &gb,
                                SmallVectorImpl<Value> &grads) {
  Value x = op->getOperand(0);
  RankedTensorType type = tensorType(x);
  ArrayRef<int64_t> axes = op->getAttrOfType<DenseI64ArrayAttr>("axes").asArrayRef();
  Value spread = gb.expandReduced(g, axes, type);
  if (llvm::isa<ReduceSumOp>(op)) {
    grads.assign({spread});
  } else if (llvm::isa<ReduceMeanOp>(op)) {
    int64_t count = 1;
    for (int64_t axis : axes)
      count *= type.getDimSize(axis);
    grads.assign({gb.scale(spread, 1.0 / static_cast<double>(count))});
  } else {
    // reduce_max: shared equally by the elements equal to the maximum.
    Value max = gb.expandReduced(op->getResult(0), axes, type);
    Value hit = gb.compare(ComparePredicate::eq, x, max);
    Value mask = gb.where(hit, gb.splat(type, 1.0));
    Value count = gb.expandReduced(gb.reduceSum(mask, axes, false), axes, type);
    grads.assign({gb.div(gb.mul(spread, mask), count)});
  }
  return true;
}

FailureOr<bool> layerNormGradients(LayerNormOp op, Value g, GradientBuilder &gb,
                                   SmallVectorImpl<Value> &grads) {
  Value x = op.getInput();
  RankedTensorType type = tensorType(x);
  int64_t axis = op.getAxis();
  SmallVector<int64_t> normAxes = axesFrom(axis, type.getRank());
  SmallVector<int64_t> leadAxes;
  for (int64_t d = 0; d < axis; ++d)
    leadAxes.push_back(d);
  // Recompute the normalized input from x (cheaper to keep than to store).
  Value mean = gb.expandReduced(gb.reduceMean(x, normAxes, false), normAxes, type);
  Value centered = gb.sub(x, mean);
  Value var = gb.reduceMean(gb.mul(centered, centered), normAxes, false);
  Value eps = gb.splatLike(var, op.getEpsilon().convertToDouble());
  Value rstd = gb.expandReduced(gb.builder().create<RsqrtOp>(gb.location(), gb.add(var, eps)),
                                normAxes, type);
  Value xhat = gb.mul(centered, rstd);
  RankedTensorType scaleType = tensorType(op.getScale());
  Value dscale = gb.reduceSum(gb.mul(g, xhat), leadAxes, false);
  Value dbias = op.getBias() ? gb.reduceSum(g, leadAxes, false) : Value();
  Value dxhat = gb.mul(g, gb.broadcastTo(op.getScale(), type));
  Value meanD = gb.expandReduced(gb.reduceMean(dxhat, normAxes, false), normAxes, type);
  Value meanDX = gb.expandReduced(gb.reduceMean(gb.mul(dxhat, xhat), normAxes, false),
                                  normAxes, type);
  Value dx = gb.mul(rstd, gb.sub(gb.sub(dxhat, meanD), gb.mul(xhat, meanDX)));
  grads.assign({dx, gb.reshape(dscale, scaleType)});
  if (op.getBias())
    grads.push_back(gb.reshape(dbias, tensorType(op.getBias())));
  return true;
}

/// How many terms a loss averages: all elements, or the batch for softmax
/// cross-entropy.
double inverseCount(Value x, int64_t perTerm) {
  return static_cast<double>(perTerm) / static_cast<double>(tensorType(x).getNumElements());
}

/// The table gradient of a gather along any axis: the gathered axis moved
/// to the front, rows scattered as for an embedding, and moved back.
Value gatherTableGradient(GatherOp gather, Value g, GradientBuilder &gb) {
  RankedTensorType table = tensorType(gather.getTable());
  RankedTensorType indices = tensorType(gather.getIndices());
  int64_t axis = gather.getAxis(), rank = table.getRank();
  int64_t indexRank = indices.getRank(), n = indices.getNumElements();
  Value ids =
      gb.reshape(gather.getIndices(), RankedTensorType::get({n}, indices.getElementType()));
  if (axis == 0)
    return scatterRowsDense(gb, ids, g, table);
  // g is table[:axis] + indices + table[axis+1:]: indices first.
  SmallVector<int64_t> toFront;
  for (int64_t d = axis; d < axis + indexRank; ++d)
    toFront.push_back(d);
  for (int64_t d = 0; d < axis; ++d)
    toFront.push_back(d);
  for (int64_t d = axis + indexRank; d < tensorType(g).getRank(); ++d)
    toFront.push_back(d);
  Value rows = gb.builder().create<TransposeOp>(gb.location(), g, toFront);
  SmallVector<int64_t> frontShape = {table.getDimSize(axis)};
  SmallVector<int64_t> fromFront(rank);
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis)
      frontShape.push_back(table.getDimSize(d));
  // frontShape[0] is table dim `axis`, then the others in order.
  fromFront[axis] = 0;
  for (int64_t d = 0, k = 1; d < rank; ++d)
    if (d != axis)
      fromFront[d] = k++;
  Value front = scatterRowsDense(
      gb, ids, rows, RankedTensorType::get(frontShape, table.getElementType()));
  return gb.builder().create<TransposeOp>(gb.location(), front, fromFront);
}

} // namespace

Value embeddingBagRowGradients(EmbeddingBagOp bag, Value g, GradientBuilder &gb) {
  RankedTensorType ids = tensorType(bag.getIds());
  RankedTensorType table = tensorType(bag.getTable());
  // g [batch..., row...] -> [batch..., 1, row...] -> [batch..., L, row...].
  SmallVector<int64_t> oneShape(ids.getShape().drop_back()), rowsShape(ids.getShape());
  oneShape.push_back(1);
  llvm::append_range(oneShape, table.getShape().drop_front());
  llvm::append_range(rowsShape, table.getShape().drop_front());
  Value spread = gb.reshape(g, RankedTensorType::get(oneShape, table.getElementType()));
  spread = gb.broadcastTo(spread, RankedTensorType::get(rowsShape, table.getElementType()));
  Value weights = EmbeddingBagOp::buildWeights(gb.builder(), gb.location(), bag.getIds(),
                                               bag.getCombiner(), table.getElementType());
  SmallVector<int64_t> weightShape(ids.getShape());
  weightShape.append(table.getRank() - 1, 1);
  weights = gb.reshape(weights, RankedTensorType::get(weightShape, table.getElementType()));
  return gb.mul(spread, gb.broadcastTo(weights, tensorType(spread)));
}

namespace {

/// d input[.., j, ..] = sum over k of g[.., k, ..] where index[.., k, ..] = j
/// (along the axis): one_hot(index) times g, summed over the indices' axis,
/// the class dimension moved to the axis, zero-padded to the input's shape.
Value gatherElementsGradient(GatherElementsOp gather, Value g, GradientBuilder &gb) {
  OpBuilder &b = gb.builder();
  Location loc = gb.location();
  RankedTensorType input = tensorType(gather.getInput());
  RankedTensorType indicesType = tensorType(gather.getIndices());
  int64_t axis = gather.getAxis(), rank = input.getRank();
  int64_t depth = input.getDimSize(axis);
  // Negative indices count from the end, as in the forward op.
  Value index = gather.getIndices();
  Value zero = gb.splatLike(index, 0.0);
  Value wrapped = gb.add(index, gb.splatLike(index, static_cast<double>(depth)));
  index = b.create<SelectOp>(loc, gb.compare(ComparePredicate::lt, index, zero), wrapped,
                             index);
  SmallVector<int64_t> hotShape(indicesType.getShape());
  hotShape.push_back(depth);
  auto hotType = RankedTensorType::get(hotShape, input.getElementType());
  Value hot = b.create<OneHotOp>(loc, hotType, index);
  SmallVector<int64_t> gShape(indicesType.getShape());
  gShape.push_back(1);
  Value weighted = gb.mul(
      hot, gb.broadcastTo(gb.reshape(g, RankedTensorType::get(gShape, input.getElementType())),
                          hotType));
  Value summed = gb.reduceSum(weighted, {axis}, false);
  // summed: indices shape without the axis, then depth: move depth to axis.
  SmallVector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d)
    perm.push_back(d < axis ? d : (d == axis ? rank - 1 : d - 1));
  Value dense = b.create<TransposeOp>(loc, summed, perm);
  RankedTensorType denseType = tensorType(dense);
  if (denseType == input)
    return dense;
  SmallVector<int64_t> low(rank, 0), high, interior(rank, 0);
  for (int64_t d = 0; d < rank; ++d)
    high.push_back(input.getDimSize(d) - denseType.getDimSize(d));
  return b.create<PadOp>(loc, input, dense, low, high, interior);
}

/// d rows[i] = g[ids[i]], or 0 where ids[i] is outside the result (that row
/// added nothing): a segment sum's gradient (an EmbeddingBag with offsets).
Value scatteredRowsGradient(ScatterAddRowsOp scatter, Value g, GradientBuilder &gb) {
  OpBuilder &b = gb.builder();
  Location loc = gb.location();
  RankedTensorType rows = tensorType(scatter.getRows());
  Value ids = scatter.getIds();
  int64_t n = rows.getDimSize(0), count = tensorType(g).getDimSize(0);
  Value gathered = b.create<GatherOp>(loc, rows, g, ids, b.getI64IntegerAttr(0));
  // A negative id made `count`, then one test: below `count`.
  Value past = gb.splatLike(ids, static_cast<double>(count));
  Value nonNegative = b.create<SelectOp>(
      loc, gb.compare(ComparePredicate::ge, ids, gb.splatLike(ids, 0.0)), ids, past);
  Value inRange = gb.compare(ComparePredicate::lt, nonNegative, past);
  SmallVector<int64_t> columnShape(rows.getRank(), 1);
  columnShape[0] = n;
  auto maskType = [&](ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, b.getI1Type());
  };
  Value mask = b.create<ReshapeOp>(loc, maskType(columnShape), inRange);
  mask = b.create<BroadcastOp>(loc, maskType(rows.getShape()), mask);
  return b.create<SelectOp>(loc, mask, gathered, gb.splatLike(gathered, 0.0));
}

} // namespace

Value scatterRowsDense(GradientBuilder &gb, Value ids, Value values,
                       RankedTensorType tableType) {
  RankedTensorType valuesType = tensorType(values);
  int64_t n = tensorType(ids).getDimSize(0);
  SmallVector<int64_t> rowsShape = {n};
  llvm::append_range(rowsShape, tableType.getShape().drop_front());
  Value rows = gb.reshape(values, RankedTensorType::get(rowsShape, valuesType.getElementType()));
  return gb.builder().create<ScatterAddRowsOp>(gb.location(), tableType, rows, ids);
}

FailureOr<bool> networkGradients(Operation *op, Value g, GradientBuilder &gb,
                                 SmallVectorImpl<Value> &grads) {
  if (auto matmul = llvm::dyn_cast<MatmulOp>(op))
    return matmulGradients(matmul, g, gb, grads);
  if (llvm::isa<ReduceSumOp, ReduceMeanOp, ReduceMaxOp>(op))
    return reduceGradients(op, g, gb, grads);
  if (auto layerNorm = llvm::dyn_cast<LayerNormOp>(op))
    return layerNormGradients(layerNorm, g, gb, grads);
  if (auto softmax = llvm::dyn_cast<SoftmaxOp>(op)) {
    // y * (g - sum(g * y))
    Value y = softmax.getResult();
    int64_t axis = softmax.getAxis();
    Value dot = gb.expandReduced(gb.reduceSum(gb.mul(g, y), {axis}, false), {axis},
                                 tensorType(y));
    grads.assign({gb.mul(y, gb.sub(g, dot))});
    return true;
  }
  if (auto logSoftmax = llvm::dyn_cast<LogSoftmaxOp>(op)) {
    // g - exp(y) * sum(g)
    Value y = logSoftmax.getResult();
    int64_t axis = logSoftmax.getAxis();
    Value sum = gb.expandReduced(gb.reduceSum(g, {axis}, false), {axis}, tensorType(y));
    grads.assign({gb.sub(g, gb.mul(gb.builder().create<ExpOp>(gb.location(), y), sum))});
    return true;
  }
  if (auto gather = llvm::dyn_cast<GatherOp>(op)) {
    grads.assign({gatherTableGradient(gather, g, gb), Value()});
    return true;
  }
  if (auto bag = llvm::dyn_cast<EmbeddingBagOp>(op)) {
    // The rows' gradients scattered by id; padding's weight is 0 and -1
    // matches no row.
    RankedTensorType ids = tensorType(bag.getIds());
    int64_t n = ids.getNumElements();
    Value flatIds = gb.reshape(bag.getIds(), RankedTensorType::get({n}, ids.getElementType()));
    grads.assign({scatterRowsDense(gb, flatIds, embeddingBagRowGradients(bag, g, gb),
                                   tensorType(bag.getTable())),
                  Value()});
    return true;
  }
  if (auto scatter = llvm::dyn_cast<ScatterAddRowsOp>(op)) {
    grads.assign({scatteredRowsGradient(scatter, g, gb), Value()});
    return true;
  }
  if (auto gather = llvm::dyn_cast<GatherElementsOp>(op)) {
    grads.assign({gatherElementsGradient(gather, g, gb), Value()});
    return true;
  }
  if (auto loss = llvm::dyn_cast<SoftmaxCrossEntropyOp>(op)) {
    if (loss.hasTargetOptions()) {
      // (softmax(x) - target) * g / kept at each kept position (the
      // target smoothed), 0 at an ignored one: with an ignore_index, a
      // scale that depends on the labels. The fused op computes it, with
      // g / kept as its weights (its losses go unused here). The count and
      // the division in f32 whatever the logits' type (f16 stops counting
      // at 2048, bf16 at 256), the weights then rounded.
      Value logits = loss.getLogits(), labels = loss.getLabels();
      OpBuilder &b = gb.builder();
      Location loc = gb.location();
      Type element = tensorType(logits).getElementType();
      auto positions = RankedTensorType::get(tensorType(labels).getShape(), b.getF32Type());
      if (!element.isF32())
        g = b.create<CastOp>(loc, RankedTensorType::get({}, b.getF32Type()), g);
      Value weight;
      if (std::optional<int64_t> ignored = loss.getIgnoreIndex()) {
        Value kept = SoftmaxCrossEntropyOp::buildKept(b, loc, labels, *ignored, b.getF32Type());
        Value count = gb.reduceSum(kept, axesFrom(0, positions.getRank()), /*keepDims=*/false);
        weight = gb.div(g, count);
      } else {
        weight = gb.scale(g, 1.0 / static_cast<double>(positions.getNumElements()));
      }
      weight = gb.broadcastTo(weight, positions);
      auto weightsType = RankedTensorType::get(positions.getShape(), element);
      if (!element.isF32())
        weight = b.create<CastOp>(loc, weightsType, weight);
      auto fused = b.create<SoftmaxCrossEntropyGradRowsOp>(
          loc, TypeRange{weightsType, tensorType(logits)}, logits, labels, weight,
          b.getF64FloatAttr(1.0), loss.getIgnoreIndexAttr(), loss.getLabelSmoothingAttr());
      grads.assign({fused.getGrad(), Value()});
      return true;
    }
    // (softmax(x) - one_hot(labels)) * g / batch
    Value logits = loss.getLogits();
    RankedTensorType type = tensorType(logits);
    int64_t classes = type.getShape().back();
    Value probs = gb.builder().create<SoftmaxOp>(gb.location(), logits, type.getRank() - 1);
    Value hot = gb.builder().create<OneHotOp>(gb.location(), type, loss.getLabels());
    Value scaled = gb.scale(gb.broadcastTo(g, type), inverseCount(logits, classes));
    grads.assign({gb.mul(gb.sub(probs, hot), scaled), Value()});
    return true;
  }
  if (auto loss = llvm::dyn_cast<SigmoidCrossEntropyOp>(op)) {
    // d/dx: (sigmoid(x) - t) g / n; d/dt: -x g / n.
    Value x = loss.getLogits(), t = loss.getTargets();
    Value scaled = gb.scale(gb.broadcastTo(g, tensorType(x)), inverseCount(x, 1));
    Value p = gb.builder().create<SigmoidOp>(gb.location(), x);
    grads.assign({gb.mul(gb.sub(p, t), scaled), gb.neg(gb.mul(x, scaled))});
    return true;
  }
  if (auto loss = llvm::dyn_cast<MeanSquaredErrorOp>(op)) {
    Value p = loss.getPrediction(), t = loss.getTarget();
    Value scaled = gb.scale(gb.broadcastTo(g, tensorType(p)), 2.0 * inverseCount(p, 1));
    Value dp = gb.mul(gb.sub(p, t), scaled);
    grads.assign({dp, gb.neg(dp)});
    return true;
  }
  return failure();
}

} // namespace kiln
