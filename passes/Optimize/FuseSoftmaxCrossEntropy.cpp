//===- FuseSoftmaxCrossEntropy.cpp - One op for a loss and its softmax ----===//
//
// kiln-fuse-softmax-cross-entropy: a softmax cross-entropy and the softmax
// of the same logits (its gradient's, or the model's probabilities) become
// one kiln.softmax_cross_entropy_rows and the mean of its losses; when only
// the gradient reads that softmax, one kiln.softmax_cross_entropy_grad_rows
// computes the gradient itself (Passes.td).
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
  Value probs = rows.getProbs();
  if (!probs.hasOneUse())
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
      builder.getF64FloatAttr(*scale));
  rows.getLosses().replaceAllUsesWith(grad.getLosses());
  mul.getResult().replaceAllUsesWith(grad.getGrad());
  mul->erase();
  sub->erase();
  for (Operation *dead : {other.getDefiningOp(), hot.getOperation()})
    if (dead->use_empty())
      dead->erase();
  rows->erase();
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
      loss.getLoc(), TypeRange{lossesType, logitsType}, loss.getLogits(), loss.getLabels());
  SmallVector<int64_t> positions(lossesType.getRank());
  std::iota(positions.begin(), positions.end(), 0);
  Value mean = positions.empty() ? rows.getLosses()
                                 : builder.create<ReduceMeanOp>(loss.getLoc(), rows.getLosses(),
                                                                positions, false)
                                       .getResult();
  loss.getResult().replaceAllUsesWith(mean);
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
      if (SmallVector<SoftmaxOp> softmaxes = softmaxesBeside(loss); !softmaxes.empty())
        foldGradient(fuse(loss, softmaxes));
  }
};

} // namespace
