//===- NormalizationPatterns.cpp - softmax and layer_norm to linalg -------===//
//
// softmax:     m = max(x), e = exp(x - m), s = sum(e), y = e / s (in f32,
//              e is written where y goes while s is summed, then divided in
//              place: one exp an element, not two)
// log_softmax: y = (x - m) - log(sum(exp(x - m)))
// layer_norm:  mean and (biased) variance over the trailing dimensions from
//              `axis`, two passes, then y = (x - mean) / sqrt(var + eps)
//              * scale + bias.
// Subtracting the maximum keeps exp from overflowing, as every framework
// does. f16 and bf16 inputs are computed in f32 (sums, exp, statistics) and
// rounded once at the end.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/KilnToLinalg/LinalgBuilders.h"
#include "passes/Conversion/KilnToLinalg/Patterns.h"

#include "dialects/Kiln/KilnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;

namespace kiln {
namespace {

Value first(OpBuilder &, Location, ValueRange args) { return args[0]; }

/// softmax (softmaxParts) and log_softmax (y = (x - m) - log s from the
/// row max m and s = sum(exp(x - m)), computed in the accumulator type).
template <typename OpTy, bool Log>
struct SoftmaxLikeLowering : public OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op, PatternRewriter &rewriter) const override {
    auto type = llvm::cast<RankedTensorType>(op.getType());
    int64_t axis = op.getAxis();
    if (!Log) {
      rewriter.replaceOp(op, softmaxParts(rewriter, op.getLoc(), op.getOperand(), axis).probs);
      return success();
    }
    auto [max, sum] = maxAndSumOfExp(rewriter, op.getLoc(), op.getOperand(), axis);
    AffineMap identity = rewriter.getMultiDimIdentityMap(type.getRank());
    AffineMap reduced = withoutAxis(rewriter.getContext(), type.getRank(), axis);
    Value result = mapElements(
        rewriter, op.getLoc(), type, ValueRange{op.getOperand(), max, sum},
        {identity, reduced, reduced}, [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          // One op per statement: argument evaluation order is unspecified.
          Type accType = args[2].getType();
          Value x = castFloat(b, l, args[0], accType);
          Value m = castFloat(b, l, args[1], accType);
          Value shifted = b.create<arith::SubFOp>(l, x, m);
          Value y = b.create<arith::SubFOp>(l, shifted, b.create<math::LogOp>(l, args[2]));
          return castFloat(b, l, y, type.getElementType());
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct LayerNormLowering : public OpRewritePattern<LayerNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LayerNormOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = llvm::cast<RankedTensorType>(op.getType());
    Type elementType = type.getElementType();
    int64_t rank = type.getRank(), axis = op.getAxis();
    SmallVector<int64_t> normalized, outer;
    int64_t count = 1;
    for (int64_t d = 0; d < rank; ++d) {
      if (d >= axis) {
        normalized.push_back(d);
        count *= type.getDimSize(d);
      } else {
        outer.push_back(d);
      }
    }
    MLIRContext *context = getContext();
    AffineMap identity = rewriter.getMultiDimIdentityMap(rank);
    AffineMap outerMap = selectDims(context, rank, outer);
    AffineMap innerMap = selectDims(context, rank, normalized);
    Type accType = accumulatorType(elementType);
    Value zero = scalarConstant(rewriter, loc, accType, 0.0);
    Value n = scalarConstant(rewriter, loc, accType, static_cast<double>(count));
    Value x = op.getInput();

    Value sum = reduceAxes(rewriter, loc, x, normalized, zero, first, sumValues);
    Value squares = reduceAxes(
        rewriter, loc, ValueRange{x, sum}, normalized, zero,
        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          Value mean = b.create<arith::DivFOp>(l, args[1], n);
          Value centered =
              b.create<arith::SubFOp>(l, castFloat(b, l, args[0], accType), mean);
          return b.create<arith::MulFOp>(l, centered, centered);
        },
        sumValues, {identity, outerMap});

    SmallVector<Value> inputs = {x, sum, squares, op.getScale()};
    SmallVector<AffineMap> maps = {identity, outerMap, outerMap, innerMap};
    if (op.getBias()) {
      inputs.push_back(op.getBias());
      maps.push_back(innerMap);
    }
    Value epsilon = scalarConstant(rewriter, loc, accType,
                                   op.getEpsilon().convertToDouble());
    Value result = mapElements(
        rewriter, loc, type, inputs, maps, [&](OpBuilder &b, Location l, ValueRange args) {
          auto wide = [&](Value v) { return castFloat(b, l, v, accType); };
          Value mean = b.create<arith::DivFOp>(l, args[1], n);
          Value var = b.create<arith::DivFOp>(l, args[2], n);
          Value inv = b.create<math::RsqrtOp>(l, b.create<arith::AddFOp>(l, var, epsilon));
          Value centered = b.create<arith::SubFOp>(l, wide(args[0]), mean);
          Value normalized = b.create<arith::MulFOp>(l, centered, inv);
          Value y = b.create<arith::MulFOp>(l, normalized, wide(args[3]));
          if (args.size() > 4)
            y = b.create<arith::AddFOp>(l, y, wide(args[4]));
          return castFloat(b, l, y, elementType);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateNormalizationToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<SoftmaxLikeLowering<SoftmaxOp, false>,
               SoftmaxLikeLowering<LogSoftmaxOp, true>, LayerNormLowering>(
      patterns.getContext());
}

} // namespace kiln
