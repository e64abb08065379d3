//===- OpCost.cpp - Floating-point work of kiln ops -----------------------===//

#include "dialects/Kiln/OpCost.h"

#include "dialects/Kiln/KilnOps.h"

using namespace mlir;

namespace kiln {

namespace {

/// The op's own work, not counting the ops in its regions.
int64_t ownFlops(Operation *op) {
  // A fused softmax cross-entropy: its softmax's, as kiln.softmax counts.
  if (auto rows = llvm::dyn_cast<SoftmaxCrossEntropyRowsOp>(op))
    return llvm::cast<RankedTensorType>(rows.getProbs().getType()).getNumElements();
  // With its gradient: the softmax's, and the subtraction and scaling that
  // kiln.sub and kiln.mul counted.
  if (auto rows = llvm::dyn_cast<SoftmaxCrossEntropyGradRowsOp>(op))
    return 3 * llvm::cast<RankedTensorType>(rows.getGrad().getType()).getNumElements();
  if (op->getNumResults() != 1 || llvm::isa<FusionOp>(op))
    return 0;
  auto result = llvm::dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!result || !result.hasStaticShape())
    return 0;
  int64_t elements = result.getNumElements();
  if (auto matmul = llvm::dyn_cast<MatmulOp>(op)) {
    auto lhs = llvm::cast<RankedTensorType>(matmul.getLhs().getType());
    int64_t k = matmul.getTransposeA() ? lhs.getDimSize(lhs.getRank() - 2)
                                       : lhs.getShape().back();
    return 2 * elements * k;
  }
  if (auto conv = llvm::dyn_cast<ConvOp>(op)) {
    auto filter = llvm::cast<RankedTensorType>(conv.getFilter().getType());
    return 2 * elements * (filter.getNumElements() / filter.getDimSize(0));
  }
  if (llvm::isa<FloatType>(result.getElementType()) &&
      !llvm::isa<ReadOp, ConstantOp, ReshapeOp, BroadcastOp, TransposeOp, ConcatOp, SliceOp,
                 GatherOp, GatherElementsOp, PadOp, OneHotOp, StopGradientOp, CastOp>(op))
    return elements; // Data movement and conversion count nothing.
  return 0;
}

} // namespace

int64_t estimateFlopsWithin(Operation *root) {
  int64_t flops = 0;
  root->walk([&](Operation *op) { flops += ownFlops(op); });
  return flops;
}

int64_t estimateFlops(Operation *op) {
  return llvm::isa<FusionOp>(op) ? estimateFlopsWithin(op) : ownFlops(op);
}

int64_t estimateRecomputedFlops(Operation *root, int64_t *ops) {
  int64_t flops = 0, count = 0;
  root->walk([&](Operation *op) {
    if (!op->hasAttr(KilnDialect::kRecomputedAttrName))
      return;
    ++count;
    flops += estimateFlops(op);
  });
  if (ops)
    *ops = count;
  return flops;
}

} // namespace kiln
