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

/// The element at `coords` of the concatenation along `axis` of `inputs`,
/// input k starting at `offsets[k]`: an scf.if chain that reads only the
/// input holding the element.
Value concatenatedElement(OpBuilder &b, Location loc, ValueRange inputs,
                          ArrayRef<int64_t> offsets, int64_t axis,
                          SmallVector<Value> coords) {
  Value position = coords[axis];
  auto read = [&](OpBuilder &nested, Location l) {
    SmallVector<Value> at(coords);
    if (offsets.front() != 0)
      at[axis] = nested.create<arith::SubIOp>(
          l, position,
          nested.create<arith::ConstantIndexOp>(l, offsets.front()));
    return nested.create<tensor::ExtractOp>(l, inputs.front(), at).getResult();
  };
  if (inputs.size() == 1)
    return read(b, loc);
  Value inFirst = b.create<arith::CmpIOp>(
      loc, arith::CmpIPredicate::ult, position,
      b.create<arith::ConstantIndexOp>(loc, offsets[1]));
  auto choice = b.create<scf::IfOp>(
      loc, inFirst,
      [&](OpBuilder &nested, Location l) {
        nested.create<scf::YieldOp>(l, read(nested, l));
      },
      [&](OpBuilder &nested, Location l) {
        nested.create<scf::YieldOp>(
            l, concatenatedElement(nested, l, inputs.drop_front(),
                                   offsets.drop_front(), axis, coords));
      });
  return choice.getResult(0);
}

struct ConcatLowering : public OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConcatOp op,
                                PatternRewriter &rewriter) const override {
    auto type = llvm::cast<RankedTensorType>(op.getType());
    int64_t axis = op.getAxis();
    SmallVector<Value> inputs;
    SmallVector<int64_t> offsets;
    int64_t position = 0;
    for (Value input : op.getInputs()) {
      int64_t size =
          llvm::cast<RankedTensorType>(input.getType()).getDimSize(axis);
      if (size != 0) {
        inputs.push_back(input);
        offsets.push_back(position);
      }
      position += size;
    }
    if (inputs.empty()) {
      rewriter.replaceOp(op, emptyTensor(rewriter, op.getLoc(), type));
      return success();
    }
    Value result = mapElements(
        rewriter, op.getLoc(), type, ValueRange{}, {},
        [&](OpBuilder &b, Location loc, ValueRange) {
          SmallVector<Value> coords;
          for (int64_t d = 0; d < type.getRank(); ++d)
            coords.push_back(b.create<linalg::IndexOp>(loc, d));
          return concatenatedElement(b, loc, inputs, offsets, axis, coords);
        });
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
