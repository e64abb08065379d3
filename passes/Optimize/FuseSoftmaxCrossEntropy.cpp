//===- FuseSoftmaxCrossEntropy.cpp - One op for a loss and its softmax ----===//
//
// kiln-fuse-softmax-cross-entropy: a softmax cross-entropy and the softmax
// of the same logits (its gradient's, or the model's probabilities) become
// one kiln.softmax_cross_entropy_rows and the mean of its losses; when only
// the gradient reads that softmax, one kiln.softmax_cross_entropy_grad_rows
// computes the gradient itself (Passes.td). A loss with an ignore_index or
// a label smoothing, whose gradient autodiff writes as that op (weighted),
// takes its value from the op's losses: the mean of the kept positions'.
// A rows op takes both from its loss.
//
//===----------------------------------------------------------------------===//

#include "passes/Optimize/Passes.h"
#include "passes/Optimize/SplatConstants.h"

#include "dialects/Kiln/KilnOps.h"

#include <numeric>

namespace kiln {
#define GEN_PASS_DEF_KILNFUSESOFTMAXCROSSENTROPY
#include "passes/Optimize/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// The softmaxes of `loss`'s logits along their last axis that the fused op
/// can replace: in the loss's block, after its labels are computed.
SmallVector<SoftmaxOp> softmaxesBeside(SoftmaxCrossEntropyOp loss) {
  Value logits = loss.getLogits();
  int64_t last = llvm::cast<RankedTensorType>(logits.getType()).getRank() - 1;
  Operation *labels = loss.getLabels().getDefiningOp();
  bool labelsHere = labels && labels->getBlock() == loss->getBlock();
  SmallVector<SoftmaxOp> found;
  for (Operation *user : logits.getUsers()) {
    auto softmax = llvm::dyn_cast<SoftmaxOp>(user);
    if (softmax && static_cast<int64_t>(softmax.getAxis()) == last &&
        softmax->getBlock() == loss->getBlock() &&
        (!labelsHere || labels->isBeforeInBlock(softmax)))
      found.push_back(softmax);
  }
  return found;
}

/// The splat f32 value of `value` when a kiln.constant defines it.
std::optional<double> splatOf(Value value) {
  std::optional<APFloat> splat = splatFloat(value);
  if (!splat || !llvm::cast<RankedTensorType>(value.getType()).getElementType().isF32())
    return std::nullopt;
  return splat->convertToDouble();
}

/// When `rows`' softmax is read only by its gradient, `(softmax -
/// one_hot(labels)) * scale` with a constant scale, replaces the two by
/// one kiln.softmax_cross_entropy_grad_rows: the softmax is never stored.
void foldGradient(SoftmaxCrossEntropyRowsOp rows) {
  // That gradient is a plain loss's: one with an ignore_index or a label
  // smoothing has its own.
  Value probs = rows.getProbs();
  if (!probs.hasOneUse() || rows.getIgnoreIndex() ||
      SoftmaxCrossEntropyOp::smoothingOf(rows.getLabelSmoothingAttr()) != 0.0)
    return;
  auto sub = llvm::dyn_cast<SubOp>(*probs.getUsers().begin());
  auto hot = sub ? sub.getRhs().getDefiningOp<OneHotOp>() : OneHotOp();
  if (!sub || sub.getLhs() != probs || !hot || hot.getIndices() != rows.getLabels() ||
      hot.getType() != probs.getType() || !sub.getResult().hasOneUse())
    return;
  auto mul = llvm::dyn_cast<MulOp>(*sub.getResult().getUsers().begin());
  if (!mul)
    return;
  Value other = mul.getLhs() == sub.getResult() ? mul.getRhs() : mul.getLhs();
  std::optional<double> scale = splatOf(other);
  if (!scale || other.getType() != probs.getType())
    return;
  OpBuilder builder(rows);
  auto grad = builder.create<SoftmaxCrossEntropyGradRowsOp>(
      rows.getLoc(), rows->getResultTypes(), rows.getLogits(), rows.getLabels(),
      /*weights=*/Value(), builder.getF64FloatAttr(*scale), /*ignore_index=*/IntegerAttr(),
      /*label_smoothing=*/FloatAttr());
  rows.getLosses().replaceAllUsesWith(grad.getLosses());
  mul.getResult().replaceAllUsesWith(grad.getGrad());
  mul->erase();
  sub->erase();
  for (Operation *dead : {other.getDefiningOp(), hot.getOperation()})
    if (dead->use_empty())
      dead->erase();
  rows->erase();
}

/// The loss `loss` computes, from its positions' `losses`: their mean, or
/// with an ignore_index the mean of those whose label is kept.
Value meanOfLosses(OpBuilder &builder, SoftmaxCrossEntropyOp loss, Value losses) {
  Location loc = loss.getLoc();
  auto type = llvm::cast<RankedTensorType>(losses.getType());
  SmallVector<int64_t> positions(type.getRank());
  std::iota(positions.begin(), positions.end(), 0);
  std::optional<int64_t> ignored = loss.getIgnoreIndex();
  if (!ignored)
    return positions.empty()
               ? losses
               : builder.create<ReduceMeanOp>(loc, losses, positions, false).getResult();
  // The ignored positions' losses are 0 already.
  Value kept = SoftmaxCrossEntropyOp::buildKept(builder, loc, loss.getLabels(), *ignored,
                                                type.getElementType());
  Value total = builder.create<ReduceSumOp>(loc, losses, positions, false);
  Value count = builder.create<ReduceSumOp>(loc, kept, positions, false);
  return builder.create<DivOp>(loc, total, count);
}

/// For a loss with an ignore_index or a label smoothing: the fused
/// gradient autodiff wrote for it (weighted), when every reader of the loss
/// comes after it; its losses then give the loss, and no kernel computes it
/// apart.
bool takeLossFromGradient(SoftmaxCrossEntropyOp loss) {
  if (!loss.hasTargetOptions())
    return false;
  for (Operation *user : loss.getLogits().getUsers()) {
    auto grad = llvm::dyn_cast<SoftmaxCrossEntropyGradRowsOp>(user);
    if (!grad || grad.getLabels() != loss.getLabels() ||
        grad.getIgnoreIndexAttr() != loss.getIgnoreIndexAttr() ||
        grad.getLabelSmoothingAttr() != loss.getLabelSmoothingAttr() ||
        grad->getBlock() != loss->getBlock())
      continue;
    bool readersAfter = llvm::all_of(loss.getResult().getUsers(), [&](Operation *reader) {
      return reader->getBlock() == grad->getBlock() && grad->isBeforeInBlock(reader);
    });
    if (!readersAfter)
      continue;
    OpBuilder builder(grad->getBlock(), std::next(grad->getIterator()));
    loss.getResult().replaceAllUsesWith(meanOfLosses(builder, loss, grad.getLosses()));
    loss->erase();
    return true;
  }
  return false;
}

SoftmaxCrossEntropyRowsOp fuse(SoftmaxCrossEntropyOp loss, ArrayRef<SoftmaxOp> softmaxes) {
  Operation *first = loss;
  for (SoftmaxOp softmax : softmaxes)
    if (softmax->isBeforeInBlock(first))
      first = softmax;
  auto logitsType = llvm::cast<RankedTensorType>(loss.getLogits().getType());
  auto lossesType =
      RankedTensorType::get(logitsType.getShape().drop_back(), logitsType.getElementType());
  OpBuilder builder(first);
  auto rows = builder.create<SoftmaxCrossEntropyRowsOp>(
      loss.getLoc(), TypeRange{lossesType, logitsType}, loss.getLogits(), loss.getLabels(),
      loss.getIgnoreIndexAttr(), loss.getLabelSmoothingAttr());
  loss.getResult().replaceAllUsesWith(meanOfLosses(builder, loss, rows.getLosses()));
  loss->erase();
  for (SoftmaxOp softmax : softmaxes) {
    softmax.getResult().replaceAllUsesWith(rows.getProbs());
    softmax->erase();
  }
  return rows;
}

struct FuseSoftmaxCrossEntropyPass
    : public kiln::impl::KilnFuseSoftmaxCrossEntropyBase<FuseSoftmaxCrossEntropyPass> {
  void runOnOperation() override {
    SmallVector<SoftmaxCrossEntropyOp> losses;
    getOperation().walk([&](SoftmaxCrossEntropyOp loss) {
      auto type = llvm::cast<RankedTensorType>(loss.getLogits().getType());
      if (type.getElementType().isF32() && type.hasStaticShape())
        losses.push_back(loss);
    });
    for (SoftmaxCrossEntropyOp loss : losses)
      if (takeLossFromGradient(loss))
        continue;
      else if (SmallVector<SoftmaxOp> softmaxes = softmaxesBeside(loss); !softmaxes.empty())
        foldGradient(fuse(loss, softmaxes));
  }
};

} // namespace
