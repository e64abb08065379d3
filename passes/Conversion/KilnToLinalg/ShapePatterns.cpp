//===- ShapePatterns.cpp - Shape ops of kiln to linalg and tensor ---------===//
//
// reshape becomes a view after bufferization (collapse_shape to one
// dimension, then expand_shape); broadcast,
// transpose, slice and concat copy through linalg. Slice and concat are
// generics rather than tensor.extract_slice / tensor.insert_slice: those
// bufferize to copies between strided views, which the CPU pipeline lowers
// to calls to `memrefCopy` from MLIR's runner library, a symbol the kernels'
// shared object cannot resolve.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/KilnToLinalg/LinalgBuilders.h"
#include "passes/Conversion/KilnToLinalg/Patterns.h"

#include "dialects/Kiln/KilnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace kiln {
namespace {

struct ReshapeLowering : public OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op, PatternRewriter &rewriter) const override {
    if (!op.getType().hasStaticShape())
      return rewriter.notifyMatchFailure(op, "needs a static shape");
    rewriter.replaceOp(op, reshapeTensor(rewriter, op.getLoc(), op.getOperand(),
                                         op.getType()));
    return success();
  }
};

struct BroadcastLowering : public OpRewritePattern<BroadcastOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(BroadcastOp op, PatternRewriter &rewriter) const override {
    Value result = mapSameShape(rewriter, op.getLoc(), op.getType(), op.getOperand(),
                                [](OpBuilder &, Location, ValueRange args) {
                                  return args[0];
                                });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct TransposeLowering : public OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op, PatternRewriter &rewriter) const override {
    auto type = llvm::cast<RankedTensorType>(op.getType());
    Value init = emptyTensor(rewriter, op.getLoc(), type);
    rewriter.replaceOp(op, rewriter
                               .create<linalg::TransposeOp>(op.getLoc(), op.getOperand(),
                                                            init, op.getPermutation())
                               .getResult());
    return success();
  }
};

/// Each input copied into its place in the result by a loop nest of its
/// own whose innermost loop copies contiguous elements (LLVM vectorizes
/// it), where one loop over the result chose the input of every element by
/// a chain of branches. The loops insert into the result tensor they carry,
/// which bufferizes in place with no view (slices of the result became
/// copies through views that the kernels cannot link).
struct ConcatLowering : public OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConcatOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = llvm::cast<RankedTensorType>(op.getType());
    int64_t axis = op.getAxis(), rank = type.getRank();
    Value result = emptyTensor(rewriter, loc, type);
    Value zero = rewriter.create<arith::ConstantIndexOp>(loc, 0);
    Value one = rewriter.create<arith::ConstantIndexOp>(loc, 1);
    SmallVector<Value> lower(rank, zero), steps(rank, one);
    int64_t position = 0;
    for (Value input : op.getInputs()) {
      auto inputType = llvm::cast<RankedTensorType>(input.getType());
      int64_t size = inputType.getDimSize(axis);
      if (size == 0)
        continue;
      SmallVector<Value> upper;
      for (int64_t extent : inputType.getShape())
        upper.push_back(rewriter.create<arith::ConstantIndexOp>(loc, extent));
      Value offset = rewriter.create<arith::ConstantIndexOp>(loc, position);
      scf::LoopNest nest = scf::buildLoopNest(
          rewriter, loc, lower, upper, steps, ValueRange{result},
          [&](OpBuilder &b, Location l, ValueRange at, ValueRange carried) -> scf::ValueVector {
            Value element = b.create<tensor::ExtractOp>(l, input, at);
            SmallVector<Value> to(at);
            to[axis] = b.create<arith::AddIOp>(l, at[axis], offset);
            return {b.create<tensor::InsertOp>(l, element, carried[0], to).getResult()};
          });
      result = nest.results.front();
      position += size;
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct SliceLowering : public OpRewritePattern<SliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SliceOp op,
                                PatternRewriter &rewriter) const override {
    auto type = llvm::cast<RankedTensorType>(op.getType());
    if (type.getNumElements() == 0) {
      rewriter.replaceOp(op, emptyTensor(rewriter, op.getLoc(), type));
      return success();
    }
    // The input is read with tensor.extract rather than through an indexing
    // map: a window starting at 0 with step 1 would fold to an identity map,
    // and linalg would then take that loop's bound from the (larger) input.
    Value input = op.getOperand();
    ArrayRef<int64_t> start = op.getStart(), step = op.getStep();
    Value result = mapElements(
        rewriter, op.getLoc(), type, ValueRange{}, {},
        [&](OpBuilder &b, Location loc, ValueRange) {
          SmallVector<Value> coords;
          for (int64_t d = 0; d < type.getRank(); ++d) {
            Value index = b.create<linalg::IndexOp>(loc, d);
            if (step[d] != 1)
              index = b.create<arith::MulIOp>(
                  loc, index, b.create<arith::ConstantIndexOp>(loc, step[d]));
            if (start[d] != 0)
              index = b.create<arith::AddIOp>(
                  loc, index, b.create<arith::ConstantIndexOp>(loc, start[d]));
            coords.push_back(index);
          }
          return b.create<tensor::ExtractOp>(loc, input, coords).getResult();
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateShapeToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<ReshapeLowering, BroadcastLowering, TransposeLowering,
               ConcatLowering, SliceLowering>(patterns.getContext());
}

} // namespace kiln
