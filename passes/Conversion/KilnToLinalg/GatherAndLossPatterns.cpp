//===- GatherAndLossPatterns.cpp - gather and losses to linalg ------------===//
//
// gather reads the table with tensor.extract inside a linalg.generic over
// the result. An index outside [0, size) is clamped into it: compiled code
// never reads outside the table (the runtime's data readers report such ids
// before they get here). scatter_add_rows, the table gradient, is a loop
// over the rows: each one whose id is in range added to the table's row in
// place (a row slice out and back in, which bufferizes to the row itself).
//
// Each loss is a reduction of its per-element (or per-example) term into a
// scalar, then a division by the count:
//   softmax_cross_entropy: max + log(sum(exp(x - max))) - x[label]
//                          (with an ignore_index: 0 at an ignored label,
//                          and the count is that of the others; with a
//                          label smoothing e, (1 - e) x[label] + e mean(x)
//                          in place of x[label])
//   sigmoid_cross_entropy: max(x, 0) - x * t + log1p(exp(-|x|))
//   mean_squared_error:    (p - t)^2
// f16 and bf16 losses are computed and summed in f32, then rounded.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/KilnToLinalg/LinalgBuilders.h"
#include "passes/Conversion/KilnToLinalg/Patterns.h"

#include "dialects/Kiln/KilnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace kiln {
namespace {

/// An integer id as an index clamped to [0, size).
Value clampedIndex(OpBuilder &b, Location loc, Value id, int64_t size) {
  Value index = b.create<arith::IndexCastOp>(loc, b.getIndexType(), id);
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value last = b.create<arith::ConstantIndexOp>(loc, size - 1);
  Value low = b.create<arith::MaxSIOp>(loc, index, zero);
  return b.create<arith::MinSIOp>(loc, low, last);
}

/// The scalar `sum / count` as a rank-0 tensor of `type`, divided in the
/// sum's type.
Value meanOf(OpBuilder &b, Location loc, Value sum, RankedTensorType type,
             int64_t count) {
  Type accType = llvm::cast<RankedTensorType>(sum.getType()).getElementType();
  Value n = scalarConstant(b, loc, accType, static_cast<double>(count));
  return mapSameShape(b, loc, type, sum, [&](OpBuilder &nb, Location l, ValueRange args) {
    Value mean = nb.create<arith::DivFOp>(l, args[0], n);
    return castFloat(nb, l, mean, type.getElementType());
  });
}

/// Whether the integer `label` is `ignored` (an op's ignore_index).
Value isIgnored(OpBuilder &b, Location loc, Value label, int64_t ignored) {
  Value value = b.create<arith::ConstantOp>(loc, b.getIntegerAttr(label.getType(), ignored));
  return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, label, value);
}

/// What a softmax cross-entropy's targets are: an ignored label, and the
/// label smoothing e (the target (1 - e) * one_hot + e / classes).
struct Targets {
  std::optional<int64_t> ignored;
  double smoothing = 0.0;
  int64_t classes = 1;
};

/// One position's loss in the float type of `sum` (`picked`, the logit at
/// its label, and `max` cast to it): max + log(sum) - picked; with a
/// smoothing e, log(sum) - (1 - e) * (picked - max) - e * shiftedSum /
/// classes, `shiftedSum` the sum of the row's x - max (the logits' own
/// scale cancels before it can round); 0 where `label` is the ignored one.
Value positionLoss(OpBuilder &b, Location l, const Targets &targets, Value label, Value picked,
                   Value max, Value sum, Value shiftedSum) {
  Type accType = sum.getType();
  max = castFloat(b, l, max, accType);
  Value logSum = b.create<math::LogOp>(l, sum);
  Value loss;
  if (targets.smoothing == 0.0) {
    Value logSumExp = b.create<arith::AddFOp>(l, max, logSum);
    loss = b.create<arith::SubFOp>(l, logSumExp, castFloat(b, l, picked, accType));
  } else {
    double e = targets.smoothing;
    picked = castFloat(b, l, picked, accType);
    Value hot = b.create<arith::MulFOp>(l, b.create<arith::SubFOp>(l, picked, max),
                                        scalarConstant(b, l, accType, 1.0 - e));
    Value spread = b.create<arith::MulFOp>(
        l, shiftedSum, scalarConstant(b, l, accType, e / static_cast<double>(targets.classes)));
    loss = b.create<arith::SubFOp>(l, b.create<arith::SubFOp>(l, logSum, hot), spread);
  }
  if (!targets.ignored)
    return loss;
  return b.create<arith::SelectOp>(l, isIgnored(b, l, label, *targets.ignored),
                                   scalarConstant(b, l, accType, 0.0), loss);
}

/// The sum of x - max over each row of `logits` (its last axis), `max`
/// holding each row's, in `accType`.
Value shiftedSumOfRows(OpBuilder &b, Location loc, Value logits, Value max, Type accType) {
  int64_t rank = llvm::cast<RankedTensorType>(logits.getType()).getRank();
  MLIRContext *context = b.getContext();
  return reduceAxes(
      b, loc, ValueRange{logits, max}, {rank - 1}, scalarConstant(b, loc, accType, 0.0),
      [&](OpBuilder &nb, Location l, ValueRange args) -> Value {
        return nb.create<arith::SubFOp>(l, castFloat(nb, l, args[0], accType),
                                        castFloat(nb, l, args[1], accType));
      },
      sumValues, {b.getMultiDimIdentityMap(rank), withoutAxis(context, rank, rank - 1)});
}

SmallVector<int64_t> allAxes(int64_t rank) {
  SmallVector<int64_t> axes;
  for (int64_t d = 0; d < rank; ++d)
    axes.push_back(d);
  return axes;
}

/// The ids clamped to [0, size) as indices, first, in a tensor of their
/// own: a kernel's scratch, which LLVM knows no store to the result can
/// change, so the copy of a row reads its id once and copies the row as a
/// vector (reading the ids argument itself, which the result might alias,
/// it reloaded the id for every element and copied one at a time).
struct GatherLowering : public OpRewritePattern<GatherOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GatherOp op, PatternRewriter &rewriter) const override {
    auto type = llvm::cast<RankedTensorType>(op.getType());
    auto tableType = llvm::cast<RankedTensorType>(op.getTable().getType());
    auto indicesType = llvm::cast<RankedTensorType>(op.getIndices().getType());
    int64_t axis = op.getAxis(), indexRank = indicesType.getRank();
    SmallVector<int64_t> indexDims;
    for (int64_t d = axis; d < axis + indexRank; ++d)
      indexDims.push_back(d);
    AffineMap indicesMap = selectDims(getContext(), type.getRank(), indexDims);
    Value table = op.getTable();
    Value clamped = mapSameShape(
        rewriter, op.getLoc(),
        RankedTensorType::get(indicesType.getShape(), rewriter.getIndexType()),
        op.getIndices(), [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
          return clampedIndex(b, loc, args[0], tableType.getDimSize(axis));
        });
    Value result = mapElements(
        rewriter, op.getLoc(), type, clamped, {indicesMap},
        [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
          SmallVector<Value> coords;
          for (int64_t d = 0; d < tableType.getRank(); ++d) {
            if (d < axis)
              coords.push_back(b.create<linalg::IndexOp>(loc, d));
            else if (d == axis)
              coords.push_back(args[0]);
            else
              coords.push_back(b.create<linalg::IndexOp>(loc, d - 1 + indexRank));
          }
          return b.create<tensor::ExtractOp>(loc, table, coords);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct ScatterAddRowsLowering : public OpRewritePattern<ScatterAddRowsOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ScatterAddRowsOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = llvm::cast<RankedTensorType>(op.getType());
    auto rowsType = llvm::cast<RankedTensorType>(op.getRows().getType());
    if (!type.hasStaticShape() || !rowsType.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "needs static shapes");
    int64_t rank = type.getRank(), count = rowsType.getDimSize(0);
    Type element = type.getElementType();
    Value zero = scalarConstant(rewriter, loc, element, 0.0);
    Value table = filledTensor(rewriter, loc, type, zero);
    // One row: [1, rest...] at (row, 0, ...), as a tensor of the rest.
    SmallVector<int64_t> rowShape(type.getShape().drop_front());
    auto rowType = RankedTensorType::get(rowShape, element);
    SmallVector<OpFoldResult> sizes = {rewriter.getIndexAttr(1)};
    for (int64_t size : rowShape)
      sizes.push_back(rewriter.getIndexAttr(size));
    SmallVector<OpFoldResult> strides(rank, rewriter.getIndexAttr(1));
    auto offsetsAt = [&](Value row) {
      SmallVector<OpFoldResult> offsets = {row};
      offsets.append(rank - 1, rewriter.getIndexAttr(0));
      return offsets;
    };
    Value begin = rewriter.create<arith::ConstantIndexOp>(loc, 0);
    Value end = rewriter.create<arith::ConstantIndexOp>(loc, count);
    Value one = rewriter.create<arith::ConstantIndexOp>(loc, 1);
    int64_t rows = type.getDimSize(0);
    auto loop = rewriter.create<scf::ForOp>(
        loc, begin, end, one, ValueRange{table},
        [&](OpBuilder &b, Location l, Value i, ValueRange carried) {
          Value acc = carried[0];
          Value id = b.create<arith::IndexCastOp>(
              l, b.getIndexType(), b.create<tensor::ExtractOp>(l, op.getIds(), ValueRange{i}));
          // Unsigned: a negative id is out of range too.
          Value inRange = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::ult, id,
                                                  b.create<arith::ConstantIndexOp>(l, rows));
          auto added = b.create<scf::IfOp>(
              l, inRange,
              [&](OpBuilder &t, Location tl) {
                Value source = t.create<tensor::ExtractSliceOp>(tl, rowType, op.getRows(),
                                                                 offsetsAt(i), sizes, strides);
                Value target = t.create<tensor::ExtractSliceOp>(tl, rowType, acc,
                                                                 offsetsAt(id), sizes, strides);
                AffineMap identity = t.getMultiDimIdentityMap(rank - 1);
                SmallVector<utils::IteratorType> parallel(rank - 1,
                                                          utils::IteratorType::parallel);
                Value sum = t.create<linalg::GenericOp>(
                                 tl, rowType, ValueRange{source}, ValueRange{target},
                                 ArrayRef<AffineMap>{identity, identity}, parallel,
                                 [](OpBuilder &g, Location gl, ValueRange args) {
                                   g.create<linalg::YieldOp>(
                                       gl, g.create<arith::AddFOp>(gl, args[1], args[0])
                                               .getResult());
                                 })
                                .getResult(0);
                t.create<scf::YieldOp>(tl, t.create<tensor::InsertSliceOp>(
                                               tl, sum, acc, offsetsAt(id), sizes, strides)
                                               .getResult());
              },
              [&](OpBuilder &e, Location el) { e.create<scf::YieldOp>(el, acc); });
          b.create<scf::YieldOp>(l, added.getResult(0));
        });
    rewriter.replaceOp(op, loop.getResult(0));
    return success();
  }
};

/// An embedding bag as its parts: a gather of every id's row (-1 clamps to
/// row 0 and is weighted 0), the weights, their weighted sum per list. The
/// kiln ops built here are lowered in turn.
struct EmbeddingBagLowering : public OpRewritePattern<EmbeddingBagOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(EmbeddingBagOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto table = llvm::cast<RankedTensorType>(op.getTable().getType());
    auto ids = llvm::cast<RankedTensorType>(op.getIds().getType());
    SmallVector<int64_t> rowsShape(ids.getShape());
    llvm::append_range(rowsShape, table.getShape().drop_front());
    Value rows = rewriter.create<GatherOp>(
        loc, RankedTensorType::get(rowsShape, table.getElementType()), op.getTable(),
        op.getIds(), rewriter.getI64IntegerAttr(0));
    Value weights = EmbeddingBagOp::buildWeights(rewriter, loc, op.getIds(), op.getCombiner(),
                                                 table.getElementType());
    rewriter.replaceOp(op, EmbeddingBagOp::buildCombination(rewriter, loc, rows, weights));
    return success();
  }
};

/// `result[i...]` reads `input` at `i...` with dimension `axis` replaced by
/// `indices[i...]` (negative counts from the end; clamped).
struct GatherElementsLowering : public OpRewritePattern<GatherElementsOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GatherElementsOp op, PatternRewriter &rewriter) const override {
    auto type = llvm::cast<RankedTensorType>(op.getType());
    auto inputType = llvm::cast<RankedTensorType>(op.getInput().getType());
    int64_t axis = op.getAxis(), size = inputType.getDimSize(axis);
    Value input = op.getInput();
    Value result = mapSameShape(
        rewriter, op.getLoc(), type, op.getIndices(),
        [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
          Value id = args[0];
          Value zero = b.create<arith::ConstantOp>(loc, b.getIntegerAttr(id.getType(), 0));
          Value wrapped = b.create<arith::AddIOp>(
              loc, id, b.create<arith::ConstantOp>(loc, b.getIntegerAttr(id.getType(), size)));
          Value negative = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, id, zero);
          id = b.create<arith::SelectOp>(loc, negative, wrapped, id);
          SmallVector<Value> coords;
          for (int64_t d = 0; d < type.getRank(); ++d)
            coords.push_back(d == axis ? clampedIndex(b, loc, id, size)
                                       : b.create<linalg::IndexOp>(loc, d).getResult());
          return b.create<tensor::ExtractOp>(loc, input, coords);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct SoftmaxCrossEntropyLowering : public OpRewritePattern<SoftmaxCrossEntropyOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SoftmaxCrossEntropyOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = llvm::cast<RankedTensorType>(op.getType());
    // Leading dimensions flattened into one: [positions, classes].
    auto logitsType = llvm::cast<RankedTensorType>(op.getLogits().getType());
    int64_t classes = logitsType.getShape().back();
    int64_t batch = logitsType.getNumElements() / std::max<int64_t>(classes, 1);
    Value logits = reshapeTensor(
        rewriter, loc, op.getLogits(),
        RankedTensorType::get({batch, classes}, logitsType.getElementType()));
    auto labelsType = llvm::cast<RankedTensorType>(op.getLabels().getType());
    Value labels = reshapeTensor(rewriter, loc, op.getLabels(),
                                 RankedTensorType::get({batch}, labelsType.getElementType()));
    auto [max, sum] = maxAndSumOfExp(rewriter, loc, logits, /*axis=*/1);
    Type accType = accumulatorType(type.getElementType());
    Value zero = scalarConstant(rewriter, loc, accType, 0.0);
    Targets targets{op.getIgnoreIndex(),
                    SoftmaxCrossEntropyOp::smoothingOf(op.getLabelSmoothingAttr()), classes};
    std::optional<int64_t> ignored = targets.ignored;
    SmallVector<Value> inputs = {labels, max, sum};
    if (targets.smoothing != 0.0)
      inputs.push_back(shiftedSumOfRows(rewriter, loc, logits, max, accType));
    Value total = reduceAxes(
        rewriter, loc, inputs, {0}, zero,
        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          Value row = b.create<linalg::IndexOp>(l, 0);
          Value label = clampedIndex(b, l, args[0], classes);
          Value picked = b.create<tensor::ExtractOp>(l, logits, ValueRange{row, label});
          return positionLoss(b, l, targets, args[0], picked, args[1], args[2],
                              args.size() > 3 ? args[3] : Value());
        },
        sumValues);
    if (!ignored) {
      rewriter.replaceOp(op, meanOf(rewriter, loc, total, type, batch));
      return success();
    }
    // The mean over the kept positions: their count from the labels.
    Value kept = reduceAxes(
        rewriter, loc, ValueRange{labels}, {0}, zero,
        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          return b.create<arith::SelectOp>(l, isIgnored(b, l, args[0], *ignored),
                                           scalarConstant(b, l, accType, 0.0),
                                           scalarConstant(b, l, accType, 1.0));
        },
        sumValues);
    Value mean = mapSameShape(rewriter, loc, type, ValueRange{total, kept},
                              [&](OpBuilder &b, Location l, ValueRange args) {
                                Value ratio = b.create<arith::DivFOp>(l, args[0], args[1]);
                                return castFloat(b, l, ratio, type.getElementType());
                              });
    rewriter.replaceOp(op, mean);
    return success();
  }
};

/// Each position's loss from its softmax's max and sum (softmaxParts, the
/// softmax along the last axis): max + log(sum) - x[label], as
/// SoftmaxCrossEntropyLowering sums them (smoothed, 0 at an ignored label:
/// `targets`). Every loop runs over the positions and writes only at its
/// own: kiln-split-rows can split it.
Value lossesOfRows(OpBuilder &rewriter, Location loc, RankedTensorType lossesType, Value logits,
                   Value labels, const SoftmaxParts &parts, const Targets &targets) {
  auto logitsType = llvm::cast<RankedTensorType>(logits.getType());
  int64_t rank = logitsType.getRank(), classes = logitsType.getShape().back();
  Type element = lossesType.getElementType();
  AffineMap positions = rewriter.getMultiDimIdentityMap(rank - 1);
  SmallVector<Value> inputs = {labels, parts.max, parts.sum};
  if (targets.smoothing != 0.0)
    inputs.push_back(shiftedSumOfRows(
        rewriter, loc, logits, parts.max,
        llvm::cast<RankedTensorType>(parts.sum.getType()).getElementType()));
  SmallVector<AffineMap> maps(inputs.size(), positions);
  return mapElements(
      rewriter, loc, lossesType, inputs, maps,
      [&](OpBuilder &b, Location l, ValueRange args) -> Value {
        SmallVector<Value> at;
        for (int64_t d = 0; d + 1 < rank; ++d)
          at.push_back(b.create<linalg::IndexOp>(l, d));
        at.push_back(clampedIndex(b, l, args[0], classes));
        Value picked = b.create<tensor::ExtractOp>(l, logits, at);
        Value loss = positionLoss(b, l, targets, args[0], picked, args[1], args[2],
                                  args.size() > 3 ? args[3] : Value());
        return castFloat(b, l, loss, element);
      });
}

/// The targets of a loss-by-rows op over `logits`.
template <typename OpTy>
Targets targetsOf(OpTy op) {
  return {op.getIgnoreIndex(), SoftmaxCrossEntropyOp::smoothingOf(op.getLabelSmoothingAttr()),
          llvm::cast<RankedTensorType>(op.getLogits().getType()).getShape().back()};
}

struct SoftmaxCrossEntropyRowsLowering : public OpRewritePattern<SoftmaxCrossEntropyRowsOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SoftmaxCrossEntropyRowsOp op,
                                PatternRewriter &rewriter) const override {
    Value logits = op.getLogits();
    int64_t rank = llvm::cast<RankedTensorType>(logits.getType()).getRank();
    SoftmaxParts parts = softmaxParts(rewriter, op.getLoc(), logits, rank - 1);
    Value losses =
        lossesOfRows(rewriter, op.getLoc(), llvm::cast<RankedTensorType>(op.getLosses().getType()),
                     logits, op.getLabels(), parts, targetsOf(op));
    rewriter.replaceOp(op, {losses, parts.probs});
    return success();
  }
};

/// As the rows op, with the softmax's last map computing scale * (p -
/// [class == label]) instead of p: the one-hot subtraction and the scaling
/// of the gradient in the pass that divides by the sum, in that order (the
/// same arithmetic as kiln.one_hot, kiln.sub and kiln.mul apart), then the
/// product by the position's weight where the op has weights.
struct SoftmaxCrossEntropyGradRowsLowering
    : public OpRewritePattern<SoftmaxCrossEntropyGradRowsOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SoftmaxCrossEntropyGradRowsOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value logits = op.getLogits();
    auto logitsType = llvm::cast<RankedTensorType>(logits.getType());
    int64_t rank = logitsType.getRank();
    Type element = logitsType.getElementType();
    double scale = op.getScale().convertToDouble();
    Targets targets = targetsOf(op);
    std::optional<int64_t> ignored = targets.ignored;
    // The target: 1 at the label and 0 elsewhere, smoothed to (1 - e) + e / C
    // and e / C.
    double spread = targets.smoothing / static_cast<double>(targets.classes);
    auto gradient = [&](OpBuilder &b, Location l, Value p, ValueRange row) -> Value {
      Value label = row[0];
      Value classIndex = b.create<arith::IndexCastOp>(l, label.getType(),
                                                      b.create<linalg::IndexOp>(l, rank - 1));
      Value atLabel = scalarConstant(b, l, element, 1.0 - targets.smoothing + spread);
      Value elsewhere = scalarConstant(b, l, element, spread);
      Value hot = b.create<arith::SelectOp>(
          l, b.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, classIndex, label), atLabel,
          elsewhere);
      Value difference = b.create<arith::SubFOp>(l, p, hot);
      Value scaled = b.create<arith::MulFOp>(l, difference, scalarConstant(b, l, element, scale));
      if (row.size() > 1)
        scaled = b.create<arith::MulFOp>(l, scaled, row[1]);
      if (!ignored)
        return scaled;
      return b.create<arith::SelectOp>(l, isIgnored(b, l, label, *ignored),
                                       scalarConstant(b, l, element, 0.0), scaled);
    };
    SmallVector<Value> perRow = {op.getLabels()};
    if (Value weights = op.getWeights())
      perRow.push_back(weights);
    SoftmaxParts parts = softmaxParts(rewriter, loc, logits, rank - 1, perRow, gradient);
    Value losses = lossesOfRows(rewriter, loc,
                                llvm::cast<RankedTensorType>(op.getLosses().getType()), logits,
                                op.getLabels(), parts, targets);
    rewriter.replaceOp(op, {losses, parts.probs});
    return success();
  }
};

/// A mean over all elements of `term(lhs, rhs)`.
template <typename OpTy>
struct PointwiseLossLowering : public OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = llvm::cast<RankedTensorType>(op.getType());
    auto inputType = llvm::cast<RankedTensorType>(op->getOperand(0).getType());
    Type accType = accumulatorType(type.getElementType());
    Value zero = scalarConstant(rewriter, loc, accType, 0.0);
    Value total = reduceAxes(
        rewriter, loc, op->getOperands(), allAxes(inputType.getRank()), zero,
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value lhs = castFloat(b, l, args[0], accType);
          Value rhs = castFloat(b, l, args[1], accType);
          return term(b, l, lhs, rhs);
        },
        sumValues);
    rewriter.replaceOp(op, meanOf(rewriter, loc, total, type,
                                  inputType.getNumElements()));
    return success();
  }

  /// The loss of one element, in the accumulator's type.
  static Value term(OpBuilder &b, Location loc, Value lhs, Value rhs);
};

template <>
Value PointwiseLossLowering<SigmoidCrossEntropyOp>::term(OpBuilder &b, Location loc,
                                                         Value x, Value t) {
  Value zero = scalarConstant(b, loc, x.getType(), 0.0);
  Value positive = b.create<arith::MaximumFOp>(loc, x, zero);
  Value softplus = b.create<math::Log1pOp>(
      loc, b.create<math::ExpOp>(loc, b.create<arith::NegFOp>(loc, b.create<math::AbsFOp>(loc, x))));
  Value linear = b.create<arith::SubFOp>(loc, positive, b.create<arith::MulFOp>(loc, x, t));
  return b.create<arith::AddFOp>(loc, linear, softplus);
}

template <>
Value PointwiseLossLowering<MeanSquaredErrorOp>::term(OpBuilder &b, Location loc,
                                                      Value prediction, Value target) {
  Value diff = b.create<arith::SubFOp>(loc, prediction, target);
  return b.create<arith::MulFOp>(loc, diff, diff);
}

} // namespace

void populateGatherAndLossToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<GatherLowering, ScatterAddRowsLowering, EmbeddingBagLowering,
               GatherElementsLowering, SoftmaxCrossEntropyLowering,
               SoftmaxCrossEntropyRowsLowering, SoftmaxCrossEntropyGradRowsLowering,
               PointwiseLossLowering<SigmoidCrossEntropyOp>,
               PointwiseLossLowering<MeanSquaredErrorOp>>(patterns.getContext());
}

} // namespace kiln
