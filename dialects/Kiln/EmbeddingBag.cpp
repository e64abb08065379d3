//===- EmbeddingBag.cpp - kiln.embedding_bag: shape and combination -------===//
//
// The op's result type, and the two pieces every user of the op builds from
// kiln ops: each id's weight in its list (0 for the padding id -1, else 1,
// 1/n or 1/sqrt(n)) and the weighted sum of a list's rows. The CPU lowering,
// the gradient and the parameter-server pass (which pulls the rows instead
// of reading a table) all combine rows this one way.
//
//===----------------------------------------------------------------------===//

#include "dialects/Kiln/KilnOps.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace kiln;

LogicalResult EmbeddingBagOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                               Adaptor adaptor,
                                               SmallVectorImpl<Type> &types) {
  return appendInferred(inferEmbeddingBagType(ShapeDiag(loc, getOperationName()),
                                              adaptor.getTable().getType(),
                                              adaptor.getIds().getType()),
                        types);
}

namespace {

Value splat(OpBuilder &b, Location loc, RankedTensorType type, double value) {
  Attribute scalar = llvm::isa<FloatType>(type.getElementType())
                         ? Attribute(b.getFloatAttr(type.getElementType(), value))
                         : Attribute(b.getIntegerAttr(type.getElementType(),
                                                      static_cast<int64_t>(value)));
  return b.create<ConstantOp>(loc, DenseElementsAttr::get(type, scalar));
}

} // namespace

Value EmbeddingBagOp::buildWeights(OpBuilder &b, Location loc, Value ids,
                                   EmbeddingCombiner combiner, Type floatType) {
  auto idsType = llvm::cast<RankedTensorType>(ids.getType());
  auto weightType = RankedTensorType::get(idsType.getShape(), floatType);
  Value present = b.create<CompareOp>(loc, ComparePredicate::ne, ids,
                                      splat(b, loc, idsType, kPaddingId));
  Value ones = b.create<SelectOp>(loc, present, splat(b, loc, weightType, 1.0),
                                  splat(b, loc, weightType, 0.0));
  if (combiner == EmbeddingCombiner::sum)
    return ones;
  int64_t last = idsType.getRank() - 1;
  // n per list, at least 1 (an empty list's rows are all weighted 0 anyway).
  Value count = b.create<ReduceSumOp>(loc, ones, ArrayRef<int64_t>{last}, /*keepDims=*/true);
  auto countType = llvm::cast<RankedTensorType>(count.getType());
  count = b.create<MaximumOp>(loc, count, splat(b, loc, countType, 1.0));
  Value scale = combiner == EmbeddingCombiner::mean
                    ? b.create<DivOp>(loc, splat(b, loc, countType, 1.0), count).getResult()
                    : b.create<RsqrtOp>(loc, count).getResult();
  scale = b.create<BroadcastOp>(loc, weightType, scale);
  return b.create<MulOp>(loc, ones, scale);
}

Value EmbeddingBagOp::buildCombination(OpBuilder &b, Location loc, Value rows,
                                       Value weights) {
  auto rowsType = llvm::cast<RankedTensorType>(rows.getType());
  auto weightType = llvm::cast<RankedTensorType>(weights.getType());
  int64_t idRank = weightType.getRank();
  // Weights [ids...] -> [ids..., 1...] -> the rows' shape.
  SmallVector<int64_t> expanded(weightType.getShape());
  expanded.append(rowsType.getRank() - idRank, 1);
  Value w = weights;
  if (rowsType.getRank() > idRank)
    w = b.create<ReshapeOp>(loc, RankedTensorType::get(expanded, weightType.getElementType()), w);
  w = b.create<BroadcastOp>(loc, rowsType, w);
  Value weighted = b.create<MulOp>(loc, rows, w);
  return b.create<ReduceSumOp>(loc, weighted, ArrayRef<int64_t>{idRank - 1}, /*keepDims=*/false);
}
