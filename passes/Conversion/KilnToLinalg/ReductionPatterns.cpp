//===- ReductionPatterns.cpp - kiln reductions to linalg ------------------===//

#include "passes/Conversion/KilnToLinalg/LinalgBuilders.h"
#include "passes/Conversion/KilnToLinalg/Patterns.h"

#include "dialects/Kiln/KilnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace kiln {
namespace {

Value identityElement(OpBuilder &b, Location loc, ValueRange args) {
  return args[0];
}

/// The reduction over `axes` into `init`'s type, then the size-1 dimensions
/// put back when the op keeps them.
template <typename OpTy>
Value reduceAndReshape(OpTy op, PatternRewriter &rewriter, Value init,
                       CombineFn combine) {
  Value reduced = reduceAxes(rewriter, op.getLoc(), op.getOperand(), op.getAxes(),
                             init, identityElement, combine);
  auto type = llvm::cast<RankedTensorType>(op.getType());
  return reshapeTensor(rewriter, op.getLoc(), reduced, type.clone(init.getType()));
}

struct ReduceSumLowering : public OpRewritePattern<ReduceSumOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReduceSumOp op, PatternRewriter &rewriter) const override {
    Type elementType = getElementTypeOrSelf(op.getType());
    Value zero = scalarConstant(rewriter, op.getLoc(), accumulatorType(elementType), 0.0);
    Value sum = reduceAndReshape(op, rewriter, zero, sumValues);
    rewriter.replaceOp(op, castFloatElements(rewriter, op.getLoc(), sum, elementType));
    return success();
  }
};

struct ReduceMaxLowering : public OpRewritePattern<ReduceMaxOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReduceMaxOp op, PatternRewriter &rewriter) const override {
    Type elementType = getElementTypeOrSelf(op.getType());
    Value lowest = lowestValue(rewriter, op.getLoc(), elementType);
    rewriter.replaceOp(op, reduceAndReshape(op, rewriter, lowest, maxValues));
    return success();
  }
};

struct ReduceMeanLowering : public OpRewritePattern<ReduceMeanOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReduceMeanOp op, PatternRewriter &rewriter) const override {
    auto type = llvm::cast<RankedTensorType>(op.getType());
    auto inputType = llvm::cast<RankedTensorType>(op.getOperand().getType());
    Type elementType = type.getElementType();
    Location loc = op.getLoc();
    int64_t count = 1;
    for (int64_t axis : op.getAxes())
      count *= inputType.getDimSize(axis);
    Type accType = accumulatorType(elementType);
    Value sum = reduceAndReshape(op, rewriter, scalarConstant(rewriter, loc, accType, 0.0),
                                 sumValues);
    Value divisor = scalarConstant(rewriter, loc, accType, static_cast<double>(count));
    Value mean = mapSameShape(rewriter, loc, type, sum,
                              [&](OpBuilder &b, Location l, ValueRange args) {
                                Value quotient = b.create<arith::DivFOp>(l, args[0], divisor);
                                return castFloat(b, l, quotient, elementType);
                              });
    rewriter.replaceOp(op, mean);
    return success();
  }
};

} // namespace

void populateReductionToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<ReduceSumLowering, ReduceMaxLowering, ReduceMeanLowering>(
      patterns.getContext());
}

} // namespace kiln
