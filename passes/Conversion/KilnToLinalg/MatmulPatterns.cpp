//===- MatmulPatterns.cpp - kiln.matmul to linalg named ops ---------------===//
//
// Used where a matrix product is compiled rather than handed to the GEMM
// library (non-f32 types, or .mlir run through the lowering alone):
// transposed operands are transposed first, a matrix shared by every batch
// is broadcast, then linalg.matmul or linalg.batch_matmul accumulates into
// a zero-filled result (in f32 for f16 and bf16, rounded at the end).
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/KilnToLinalg/LinalgBuilders.h"
#include "passes/Conversion/KilnToLinalg/Patterns.h"

#include "dialects/Kiln/KilnOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

using namespace mlir;

namespace kiln {
namespace {

/// `value` with its last two dimensions swapped.
Value transposeLastTwo(OpBuilder &b, Location loc, Value value) {
  auto type = llvm::cast<RankedTensorType>(value.getType());
  int64_t rank = type.getRank();
  SmallVector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d)
    perm.push_back(d);
  std::swap(perm[rank - 1], perm[rank - 2]);
  SmallVector<int64_t> shape(type.getShape());
  std::swap(shape[rank - 1], shape[rank - 2]);
  Value init = emptyTensor(b, loc, RankedTensorType::get(shape, type.getElementType()));
  return b.create<linalg::TransposeOp>(loc, value, init, perm).getResult()[0];
}

/// Collapses all batch dimensions into one ([b1, ..., M, K] -> [B, M, K]).
Value collapseBatch(OpBuilder &b, Location loc, Value value) {
  auto type = llvm::cast<RankedTensorType>(value.getType());
  int64_t rank = type.getRank(), batch = 1;
  for (int64_t d = 0; d < rank - 2; ++d)
    batch *= type.getDimSize(d);
  auto collapsed = RankedTensorType::get(
      {batch, type.getDimSize(rank - 2), type.getDimSize(rank - 1)}, type.getElementType());
  return reshapeTensor(b, loc, value, collapsed);
}

struct MatmulLowering : public OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatmulOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = llvm::cast<RankedTensorType>(op.getType());
    Value lhs = op.getLhs(), rhs = op.getRhs();
    if (op.getTransposeA())
      lhs = transposeLastTwo(rewriter, loc, lhs);
    if (op.getTransposeB())
      rhs = transposeLastTwo(rewriter, loc, rhs);
    Type elementType = type.getElementType();
    Type accType = accumulatorType(elementType);
    Value zero = scalarConstant(rewriter, loc, accType, 0.0);
    if (type.getRank() == 2) {
      Value init = filledTensor(rewriter, loc, type.clone(accType), zero);
      Value product = rewriter.create<linalg::MatmulOp>(loc, ValueRange{lhs, rhs},
                                                        ValueRange{init})
                          .getResult(0);
      rewriter.replaceOp(op, castFloatElements(rewriter, loc, product, elementType));
      return success();
    }
    lhs = collapseBatch(rewriter, loc, lhs);
    auto lhsType = llvm::cast<RankedTensorType>(lhs.getType());
    auto rhsType = llvm::cast<RankedTensorType>(rhs.getType());
    if (rhsType.getRank() == 2) {
      auto shared = RankedTensorType::get(
          {lhsType.getDimSize(0), rhsType.getDimSize(0), rhsType.getDimSize(1)},
          rhsType.getElementType());
      rhs = mapSameShape(rewriter, loc, shared, rhs,
                         [](OpBuilder &, Location, ValueRange args) { return args[0]; });
    } else {
      rhs = collapseBatch(rewriter, loc, rhs);
    }
    auto resultType = RankedTensorType::get(
        {lhsType.getDimSize(0), type.getDimSize(type.getRank() - 2),
         type.getDimSize(type.getRank() - 1)},
        accType);
    Value init = filledTensor(rewriter, loc, resultType, zero);
    Value product = rewriter.create<linalg::BatchMatmulOp>(loc, ValueRange{lhs, rhs},
                                                           ValueRange{init})
                        .getResult(0);
    product = reshapeTensor(rewriter, loc, product, type.clone(accType));
    rewriter.replaceOp(op, castFloatElements(rewriter, loc, product, elementType));
    return success();
  }
};

} // namespace

void populateMatmulToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<MatmulLowering>(patterns.getContext());
}

} // namespace kiln
