//===- SinkTransposes.cpp - Transposes below elementwise ops ---------------===//
//
// kiln-sink-transposes: an elementwise op of transposed values becomes the
// op of the untransposed values and one transpose after it, so that
// channels-last models' transpose pairs meet and fold (Passes.td).
//
//===----------------------------------------------------------------------===//

#include "passes/Optimize/Passes.h"

#include "dialects/Kiln/KilnOps.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_KILNSINKTRANSPOSES
#include "passes/Optimize/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

SmallVector<int64_t> inverseOf(ArrayRef<int64_t> permutation) {
  SmallVector<int64_t> inverse(permutation.size());
  for (auto [i, p] : llvm::enumerate(permutation))
    inverse[p] = i;
  return inverse;
}

ArrayRef<int64_t> shapeOf(Value value) {
  return llvm::cast<RankedTensorType>(value.getType()).getShape();
}

/// What an operand of the op becomes below the transpose.
enum class OperandKind { Transposed, Broadcast, Constant };

/// `broadcast` (to the transposed shape) laid out for the untransposed
/// one: the broadcast operand, padded to the full rank with leading 1s,
/// permuted by `inverse` (a reshape when its dimensions larger than 1 keep
/// their order, which is the bias case), then broadcast to `shape`.
Value relaidBroadcast(PatternRewriter &rewriter, BroadcastOp broadcast,
                      ArrayRef<int64_t> inverse, ArrayRef<int64_t> shape) {
  Location loc = broadcast.getLoc();
  Value operand = broadcast.getOperand();
  auto type = llvm::cast<RankedTensorType>(operand.getType());
  if (type.getNumElements() == 1) // a scalar: the same broadcast, to `shape`
    return rewriter.create<BroadcastOp>(loc, type.clone(shape), operand);
  SmallVector<int64_t> full(inverse.size() - type.getRank(), 1);
  llvm::append_range(full, type.getShape());
  SmallVector<int64_t> permuted;
  for (int64_t source : inverse)
    permuted.push_back(full[source]);
  auto largeDims = [](ArrayRef<int64_t> dims) {
    SmallVector<int64_t> large;
    llvm::copy_if(dims, std::back_inserter(large), [](int64_t d) { return d != 1; });
    return large;
  };
  Value relaid;
  if (largeDims(full) == largeDims(permuted)) {
    relaid = rewriter.create<ReshapeOp>(loc, type.clone(permuted), operand);
  } else {
    Value padded = rewriter.create<ReshapeOp>(loc, type.clone(full), operand);
    relaid = rewriter.create<TransposeOp>(loc, padded, inverse);
  }
  return rewriter.create<BroadcastOp>(loc, type.clone(shape), relaid);
}

struct SinkTransposeBelowElementwise : public OpTraitRewritePattern<OpTrait::Elementwise> {
  using OpTraitRewritePattern::OpTraitRewritePattern;

  LogicalResult matchAndRewrite(Operation *op, PatternRewriter &rewriter) const override {
    if (!llvm::isa<KilnDialect>(op->getDialect()) || op->getNumResults() != 1 ||
        op->getNumRegions() != 0)
      return failure();
    TransposeOp first;
    for (Value operand : op->getOperands())
      if (auto transpose = operand.getDefiningOp<TransposeOp>()) {
        first = transpose;
        break;
      }
    if (!first)
      return rewriter.notifyMatchFailure(op, "no transposed operand");
    ArrayRef<int64_t> permutation = first.getPermutation();
    SmallVector<OperandKind> kinds;
    for (Value operand : op->getOperands()) {
      auto transpose = operand.getDefiningOp<TransposeOp>();
      if (transpose && transpose.getPermutation() == permutation &&
          llvm::all_of(transpose->getUsers(), [&](Operation *user) { return user == op; }))
        kinds.push_back(OperandKind::Transposed);
      else if (operand.getDefiningOp<BroadcastOp>())
        kinds.push_back(OperandKind::Broadcast);
      else if (matchPattern(operand, m_Constant()))
        kinds.push_back(OperandKind::Constant);
      else
        return rewriter.notifyMatchFailure(op, "an operand that would need a transpose");
    }

    ArrayRef<int64_t> shape = shapeOf(first.getOperand());
    SmallVector<int64_t> inverse = inverseOf(permutation);
    SmallVector<Value> operands;
    for (auto [operand, kind] : llvm::zip(op->getOperands(), kinds)) {
      switch (kind) {
      case OperandKind::Transposed:
        operands.push_back(operand.getDefiningOp<TransposeOp>().getOperand());
        break;
      case OperandKind::Broadcast:
        operands.push_back(
            relaidBroadcast(rewriter, operand.getDefiningOp<BroadcastOp>(), inverse, shape));
        break;
      case OperandKind::Constant:
        operands.push_back(rewriter.create<TransposeOp>(op->getLoc(), operand, inverse));
        break;
      }
    }
    auto resultType = llvm::cast<RankedTensorType>(op->getResult(0).getType());
    OperationState state(op->getLoc(), op->getName());
    state.addOperands(operands);
    state.addTypes(resultType.clone(shape));
    state.addAttributes(op->getAttrs());
    Operation *moved = rewriter.create(state);
    rewriter.replaceOpWithNewOp<TransposeOp>(op, moved->getResult(0), permutation);
    return success();
  }
};

class KilnSinkTransposesPass
    : public kiln::impl::KilnSinkTransposesBase<KilnSinkTransposesPass> {
public:
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<SinkTransposeBelowElementwise>(&getContext());
    // The driver folds as it goes: a transpose of a transpose composes and
    // the identity permutation vanishes, so the pairs that meet cancel.
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
