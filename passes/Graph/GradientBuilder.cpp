//===- GradientBuilder.cpp - Building blocks of gradient rules ------------===//

#include "passes/Graph/GradientBuilder.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;

namespace kiln {

void setFunctionResults(func::FuncOp func, ValueRange values,
                        ArrayRef<DictionaryAttr> attrs) {
  Operation *ret = func.getBody().back().getTerminator();
  OpBuilder(ret).create<func::ReturnOp>(ret->getLoc(), values);
  ret->erase();
  func.setType(FunctionType::get(func.getContext(), func.getArgumentTypes(),
                                 values.getTypes()));
  func.setAllResultAttrs(attrs);
}

Value GradientBuilder::splat(RankedTensorType type, double value) {
  Type element = type.getElementType();
  Attribute scalar;
  if (auto floatType = llvm::dyn_cast<FloatType>(element))
    scalar = b.getFloatAttr(floatType, value);
  else
    scalar = b.getIntegerAttr(element, static_cast<int64_t>(value));
  return b.create<ConstantOp>(loc, DenseElementsAttr::get(type, scalar));
}

Value GradientBuilder::splatLike(Value x, double value) {
  return splat(tensorType(x), value);
}

Value GradientBuilder::broadcastTo(Value x, RankedTensorType type) {
  if (x.getType() == type)
    return x;
  return b.create<BroadcastOp>(loc, type, x);
}

Value GradientBuilder::reshape(Value x, RankedTensorType type) {
  if (x.getType() == type)
    return x;
  return b.create<ReshapeOp>(loc, type, x);
}

Value GradientBuilder::reduceSum(Value x, ArrayRef<int64_t> axes, bool keepDims) {
  if (axes.empty())
    return x;
  return b.create<ReduceSumOp>(loc, x, axes, keepDims);
}

Value GradientBuilder::reduceMean(Value x, ArrayRef<int64_t> axes, bool keepDims) {
  if (axes.empty())
    return x;
  return b.create<ReduceMeanOp>(loc, x, axes, keepDims);
}

Value GradientBuilder::sumTo(Value g, RankedTensorType type) {
  RankedTensorType from = tensorType(g);
  if (from == type)
    return g;
  int64_t added = from.getRank() - type.getRank();
  SmallVector<int64_t> axes;
  for (int64_t d = 0; d < from.getRank(); ++d)
    if (d < added || (type.getDimSize(d - added) == 1 && from.getDimSize(d) != 1))
      axes.push_back(d);
  Value summed = reduceSum(g, axes, /*keepDims=*/true);
  return reshape(summed, type);
}

Value GradientBuilder::expandReduced(Value r, ArrayRef<int64_t> axes,
                                     RankedTensorType full) {
  SmallVector<int64_t> kept(full.getShape());
  for (int64_t axis : axes)
    kept[axis] = 1;
  Value shaped = reshape(r, RankedTensorType::get(kept, tensorType(r).getElementType()));
  return broadcastTo(shaped, full);
}

Value GradientBuilder::where(Value condition, Value g) {
  return b.create<SelectOp>(loc, condition, g, splatLike(g, 0.0));
}

Value GradientBuilder::whereNot(Value condition, Value g) {
  return b.create<SelectOp>(loc, condition, splatLike(g, 0.0), g);
}

Value GradientBuilder::matmul(Value x, Value y, bool transposeA, bool transposeB) {
  auto op = b.create<MatmulOp>(loc, x, y, transposeA, transposeB);
  return op.getResult();
}

Value GradientBuilder::flattenLeading(Value x, int64_t trailing) {
  RankedTensorType type = tensorType(x);
  int64_t rows = 1;
  for (int64_t d = 0; d + trailing < type.getRank(); ++d)
    rows *= type.getDimSize(d);
  SmallVector<int64_t> shape = {rows};
  for (int64_t d = type.getRank() - trailing; d < type.getRank(); ++d)
    shape.push_back(type.getDimSize(d));
  return reshape(x, RankedTensorType::get(shape, type.getElementType()));
}

} // namespace kiln
