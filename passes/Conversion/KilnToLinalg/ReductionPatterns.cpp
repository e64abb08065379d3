//===- ReductionPatterns.cpp - kiln reductions to linalg ------------------===//

#include "passes/Conversion/KilnToLinalg/LinalgBuilders.h"
#include "passes/Conversion/KilnToLinalg/Patterns.h"
#include "passes/Conversion/KilnToLinalg/ScalarElements.h"

#include "dialects/Kiln/KilnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace kiln {

bool isReduction(Operation *op) {
  return llvm::isa<ReduceSumOp, ReduceMeanOp, ReduceMaxOp>(op);
}

namespace {

ArrayRef<int64_t> axesOf(Operation *op) {
  if (auto sum = llvm::dyn_cast<ReduceSumOp>(op))
    return sum.getAxes();
  if (auto mean = llvm::dyn_cast<ReduceMeanOp>(op))
    return mean.getAxes();
  return llvm::cast<ReduceMaxOp>(op).getAxes();
}

} // namespace

Value lowerReduction(Operation *op, OpBuilder &b, ArrayRef<int64_t> shape, ValueRange inputs,
                     ArrayRef<AffineMap> maps, ElementFn element) {
  Location loc = op->getLoc();
  auto type = llvm::cast<RankedTensorType>(op->getResult(0).getType());
  Type elementType = type.getElementType();
  ArrayRef<int64_t> axes = axesOf(op);
  // The reduction into `init`'s type, then the size-1 dimensions put back
  // when the op keeps them.
  auto reduce = [&](Value init, CombineFn combine) {
    Value reduced = reduceOver(b, loc, shape, inputs, maps, axes, init, element, combine);
    return reshapeTensor(b, loc, reduced, type.clone(init.getType()));
  };
  if (llvm::isa<ReduceMaxOp>(op))
    return reduce(lowestValue(b, loc, elementType), maxValues);
  Type accType = accumulatorType(elementType);
  Value sum = reduce(scalarConstant(b, loc, accType, 0.0), sumValues);
  if (llvm::isa<ReduceSumOp>(op))
    return castFloatElements(b, loc, sum, elementType);
  int64_t count = 1;
  for (int64_t axis : axes)
    count *= shape[axis];
  Value divisor = scalarConstant(b, loc, accType, static_cast<double>(count));
  return mapSameShape(b, loc, type, sum, [&](OpBuilder &nb, Location l, ValueRange args) {
    Value quotient = nb.create<arith::DivFOp>(l, args[0], divisor);
    return castFloat(nb, l, quotient, elementType);
  });
}

namespace {

template <typename OpTy>
struct ReductionLowering : public OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op, PatternRewriter &rewriter) const override {
    auto inputType = llvm::cast<RankedTensorType>(op.getOperand().getType());
    Value result = lowerReduction(
        op, rewriter, inputType.getShape(), op.getOperand(),
        rewriter.getMultiDimIdentityMap(inputType.getRank()),
        [](OpBuilder &, Location, ValueRange args) { return args[0]; });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateReductionToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<ReductionLowering<ReduceSumOp>, ReductionLowering<ReduceMaxOp>,
               ReductionLowering<ReduceMeanOp>>(patterns.getContext());
}

} // namespace kiln
