//===- LinalgBuilders.cpp - Small builders for kiln-to-linalg -------------===//

#include "passes/Conversion/KilnToLinalg/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

#include <numeric>

using namespace mlir;

namespace kiln {

Value emptyTensor(OpBuilder &b, Location loc, RankedTensorType type) {
  return b.create<tensor::EmptyOp>(loc, type.getShape(), type.getElementType());
}

Value scalarConstant(OpBuilder &b, Location loc, Type elementType, double value) {
  if (auto floatType = llvm::dyn_cast<FloatType>(elementType))
    return b.create<arith::ConstantOp>(loc, b.getFloatAttr(floatType, value));
  return b.create<arith::ConstantOp>(
      loc, b.getIntegerAttr(elementType, static_cast<int64_t>(value)));
}

Type accumulatorType(Type elementType) {
  if (elementType.isF16() || elementType.isBF16())
    return Float32Type::get(elementType.getContext());
  return elementType;
}

Value castFloat(OpBuilder &b, Location loc, Value x, Type to) {
  auto from = llvm::cast<FloatType>(x.getType());
  auto toFloat = llvm::cast<FloatType>(to);
  if (from == toFloat)
    return x;
  if (from.getWidth() < toFloat.getWidth())
    return b.create<arith::ExtFOp>(loc, to, x);
  if (from.getWidth() > toFloat.getWidth())
    return b.create<arith::TruncFOp>(loc, to, x);
  Value wide = b.create<arith::ExtFOp>(loc, b.getF32Type(), x);
  return b.create<arith::TruncFOp>(loc, to, wide);
}

Value castFloatElements(OpBuilder &b, Location loc, Value tensor,
                        Type elementType) {
  auto type = llvm::cast<RankedTensorType>(tensor.getType());
  if (type.getElementType() == elementType)
    return tensor;
  return mapSameShape(b, loc, type.clone(elementType), tensor,
                      [&](OpBuilder &nb, Location l, ValueRange args) {
                        return castFloat(nb, l, args[0], elementType);
                      });
}

Value lowestValue(OpBuilder &b, Location loc, Type elementType) {
  if (auto floatType = llvm::dyn_cast<FloatType>(elementType))
    return b.create<arith::ConstantOp>(
        loc, b.getFloatAttr(floatType,
                            APFloat::getInf(floatType.getFloatSemantics(),
                                            /*Negative=*/true)));
  unsigned width = elementType.getIntOrFloatBitWidth();
  return b.create<arith::ConstantOp>(
      loc, b.getIntegerAttr(elementType, APInt::getSignedMinValue(width)));
}

Value filledTensor(OpBuilder &b, Location loc, RankedTensorType type,
                   Value value) {
  return b.create<linalg::FillOp>(loc, value, emptyTensor(b, loc, type))
      .getResult(0);
}

AffineMap broadcastMap(MLIRContext *context, ArrayRef<int64_t> operandShape,
                       ArrayRef<int64_t> resultShape) {
  int64_t offset = resultShape.size() - operandShape.size();
  SmallVector<AffineExpr> exprs;
  for (auto [i, size] : llvm::enumerate(operandShape)) {
    int64_t dim = i + offset;
    if (size == 1 && resultShape[dim] != 1)
      exprs.push_back(getAffineConstantExpr(0, context));
    else
      exprs.push_back(getAffineDimExpr(dim, context));
  }
  return AffineMap::get(resultShape.size(), 0, exprs, context);
}

Value mapElements(OpBuilder &b, Location loc, RankedTensorType resultType,
                  ValueRange inputs, ArrayRef<AffineMap> inputMaps,
                  ElementFn body) {
  unsigned rank = resultType.getRank();
  SmallVector<AffineMap> maps(inputMaps);
  maps.push_back(b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  auto generic = b.create<linalg::GenericOp>(
      loc, TypeRange{resultType}, inputs, ValueRange{emptyTensor(b, loc, resultType)},
      maps, iterators, [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        Value result = body(nested, nestedLoc, args.drop_back());
        nested.create<linalg::YieldOp>(nestedLoc, result);
      });
  return generic.getResult(0);
}

Value mapSameShape(OpBuilder &b, Location loc, RankedTensorType resultType,
                   ValueRange inputs, ElementFn body) {
  SmallVector<Value> operands;
  SmallVector<AffineMap> maps;
  for (Value input : inputs) {
    // A splat constant is read as its one value (a rank-0 constant, every
    // element mapped to it): the kernel then holds a scalar, not a copy of
    // every element (4 MB for a 1024 x 1024 splat, or more than an
    // artifact can hold).
    DenseElementsAttr splat;
    if (matchPattern(input, m_Constant(&splat)) && splat.isSplat() &&
        splat.getNumElements() > 1) {
      auto scalarType = RankedTensorType::get({}, splat.getElementType());
      input = b.create<arith::ConstantOp>(
          loc, DenseElementsAttr::get(scalarType, splat.getSplatValue<Attribute>()));
    }
    operands.push_back(input);
    maps.push_back(broadcastMap(b.getContext(),
                                llvm::cast<RankedTensorType>(input.getType()).getShape(),
                                resultType.getShape()));
  }
  return mapElements(b, loc, resultType, operands, maps, body);
}

SmallVector<int64_t> keptAxes(int64_t rank, ArrayRef<int64_t> axes) {
  SmallVector<int64_t> kept;
  for (int64_t d = 0; d < rank; ++d)
    if (!llvm::is_contained(axes, d))
      kept.push_back(d);
  return kept;
}

AffineMap selectDims(MLIRContext *context, int64_t rank, ArrayRef<int64_t> dims) {
  SmallVector<AffineExpr> exprs;
  for (int64_t d : dims)
    exprs.push_back(getAffineDimExpr(d, context));
  return AffineMap::get(rank, 0, exprs, context);
}

AffineMap oneHotIndicesMap(MLIRContext *context, int64_t rank) {
  SmallVector<int64_t> leading(rank - 1);
  std::iota(leading.begin(), leading.end(), 0);
  return selectDims(context, rank, leading);
}

Value oneHotElement(OpBuilder &b, Location loc, int64_t rank, Value id, Type element) {
  Value position = b.create<linalg::IndexOp>(loc, rank - 1);
  Value index = b.create<arith::IndexCastOp>(loc, b.getIndexType(), id);
  Value hit = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, position, index);
  return b.create<arith::SelectOp>(loc, hit, scalarConstant(b, loc, element, 1.0),
                                   scalarConstant(b, loc, element, 0.0));
}

Value reduceAxes(OpBuilder &b, Location loc, ValueRange inputs,
                 ArrayRef<int64_t> axes, Value init, ElementFn element,
                 CombineFn combine, ArrayRef<AffineMap> inputMaps) {
  auto inputType = llvm::cast<RankedTensorType>(inputs.front().getType());
  SmallVector<AffineMap> maps(inputMaps);
  if (maps.empty())
    for (Value input : inputs)
      maps.push_back(broadcastMap(b.getContext(),
                                  llvm::cast<RankedTensorType>(input.getType()).getShape(),
                                  inputType.getShape()));
  return reduceOver(b, loc, inputType.getShape(), inputs, maps, axes, init, element,
                    combine);
}

Value reduceOver(OpBuilder &b, Location loc, ArrayRef<int64_t> shape, ValueRange inputs,
                 ArrayRef<AffineMap> inputMaps, ArrayRef<int64_t> axes, Value init,
                 ElementFn element, CombineFn combine) {
  int64_t rank = shape.size();
  SmallVector<int64_t> kept = keptAxes(rank, axes);
  SmallVector<int64_t> resultShape;
  SmallVector<AffineExpr> resultExprs;
  for (int64_t d : kept) {
    resultShape.push_back(shape[d]);
    resultExprs.push_back(b.getAffineDimExpr(d));
  }
  auto resultType = RankedTensorType::get(resultShape, init.getType());
  SmallVector<AffineMap> maps(inputMaps);
  maps.push_back(AffineMap::get(rank, 0, resultExprs, b.getContext()));
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  for (int64_t axis : axes)
    iterators[axis] = utils::IteratorType::reduction;
  Value filled = filledTensor(b, loc, resultType, init);
  auto generic = b.create<linalg::GenericOp>(
      loc, TypeRange{resultType}, inputs, ValueRange{filled}, maps, iterators,
      [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        Value value = element(nested, nestedLoc, args.drop_back());
        if (value.getType() != init.getType())
          value = castFloat(nested, nestedLoc, value, init.getType());
        nested.create<linalg::YieldOp>(
            nestedLoc, combine(nested, nestedLoc, value, args.back()));
      });
  return generic.getResult(0);
}

namespace {
Value firstArgument(OpBuilder &, Location, ValueRange args) { return args[0]; }
} // namespace

Value expOfDifference(OpBuilder &b, Location loc, Value x, Value max,
                      Type type) {
  Value wideX = castFloat(b, loc, x, type);
  Value wideMax = castFloat(b, loc, max, type);
  return b.create<math::ExpOp>(loc,
                               b.create<arith::SubFOp>(loc, wideX, wideMax));
}

AffineMap withoutAxis(MLIRContext *context, int64_t rank, int64_t axis) {
  return selectDims(context, rank, keptAxes(rank, {axis}));
}

std::pair<Value, Value> maxAndSumOfExp(OpBuilder &b, Location loc, Value x,
                                       int64_t axis) {
  auto type = llvm::cast<RankedTensorType>(x.getType());
  Type elementType = type.getElementType();
  Type accType = accumulatorType(elementType);
  MLIRContext *context = b.getContext();
  AffineMap identity = b.getMultiDimIdentityMap(type.getRank());
  AffineMap reduced = withoutAxis(context, type.getRank(), axis);
  Value max = reduceAxes(b, loc, x, {axis}, lowestValue(b, loc, elementType),
                         firstArgument, maxValues);
  Value sum = reduceAxes(
      b, loc, ValueRange{x, max}, {axis}, scalarConstant(b, loc, accType, 0.0),
      [&](OpBuilder &nb, Location l, ValueRange args) -> Value {
        return expOfDifference(nb, l, args[0], args[1], accType);
      },
      sumValues, {identity, reduced});
  return {max, sum};
}

SoftmaxParts softmaxParts(OpBuilder &b, Location loc, Value x, int64_t axis,
                          ValueRange perRow, SoftmaxFinish finish) {
  auto type = llvm::cast<RankedTensorType>(x.getType());
  int64_t rank = type.getRank();
  Type element = type.getElementType();
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  AffineMap reduced = withoutAxis(b.getContext(), rank, axis);
  SmallVector<utils::IteratorType> parallel(rank, utils::IteratorType::parallel);
  auto finished = [&](OpBuilder &nb, Location l, Value p, ValueRange rows) {
    return finish ? finish(nb, l, p, rows) : p;
  };
  SmallVector<AffineMap> rowMaps(perRow.size(), reduced);
  if (!element.isF32()) {
    auto [max, sum] = maxAndSumOfExp(b, loc, x, axis);
    SmallVector<Value> inputs = {x, max, sum};
    llvm::append_range(inputs, perRow);
    SmallVector<AffineMap> maps = {identity, reduced, reduced};
    llvm::append_range(maps, rowMaps);
    Value probs = mapElements(
        b, loc, type, inputs, maps, [&](OpBuilder &nb, Location l, ValueRange args) -> Value {
          Value e = expOfDifference(nb, l, args[0], args[1], args[2].getType());
          Value p = castFloat(nb, l, nb.create<arith::DivFOp>(l, e, args[2]), element);
          return finished(nb, l, p, args.drop_front(3));
        });
    return {max, sum, probs};
  }
  Value max = reduceAxes(b, loc, x, {axis}, lowestValue(b, loc, element), firstArgument,
                         maxValues);
  auto sumType = llvm::cast<RankedTensorType>(max.getType());
  Value zeros = filledTensor(b, loc, sumType, scalarConstant(b, loc, element, 0.0));
  SmallVector<utils::IteratorType> iterators = parallel;
  iterators[axis] = utils::IteratorType::reduction;
  auto sumAndExp = b.create<linalg::GenericOp>(
      loc, TypeRange{sumType, type}, ValueRange{x, max},
      ValueRange{zeros, emptyTensor(b, loc, type)},
      ArrayRef<AffineMap>{identity, reduced, reduced, identity}, iterators,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value e = expOfDifference(nb, l, args[0], args[1], element);
        nb.create<linalg::YieldOp>(l, ValueRange{sumValues(nb, l, e, args[2]), e});
      });
  Value sum = sumAndExp.getResult(0), exps = sumAndExp.getResult(1);
  SmallVector<Value> inputs = {sum};
  llvm::append_range(inputs, perRow);
  SmallVector<AffineMap> maps = {reduced};
  llvm::append_range(maps, rowMaps);
  maps.push_back(identity);
  Value probs = b.create<linalg::GenericOp>(
                     loc, TypeRange{type}, inputs, ValueRange{exps}, maps, parallel,
                     [&](OpBuilder &nb, Location l, ValueRange args) {
                       Value p = nb.create<arith::DivFOp>(l, args.back(), args[0]);
                       nb.create<linalg::YieldOp>(
                           l, finished(nb, l, p, args.slice(1, perRow.size())));
                     })
                    .getResult(0);
  return {max, sum, probs};
}

Value sumValues(OpBuilder &b, Location loc, Value x, Value y) {
  if (llvm::isa<FloatType>(x.getType()))
    return b.create<arith::AddFOp>(loc, x, y, arith::FastMathFlags::reassoc);
  return b.create<arith::AddIOp>(loc, x, y);
}

Value addValues(OpBuilder &b, Location loc, Value x, Value y) {
  if (llvm::isa<FloatType>(x.getType()))
    return b.create<arith::AddFOp>(loc, x, y);
  return b.create<arith::AddIOp>(loc, x, y);
}

Value mulValues(OpBuilder &b, Location loc, Value x, Value y) {
  if (llvm::isa<FloatType>(x.getType()))
    return b.create<arith::MulFOp>(loc, x, y);
  return b.create<arith::MulIOp>(loc, x, y);
}

Value maxValues(OpBuilder &b, Location loc, Value x, Value y) {
  if (llvm::isa<FloatType>(x.getType()))
    return b.create<arith::MaximumFOp>(loc, x, y);
  return b.create<arith::MaxSIOp>(loc, x, y);
}

Value divValues(OpBuilder &b, Location loc, Value x, Value y) {
  if (llvm::isa<FloatType>(x.getType()))
    return b.create<arith::DivFOp>(loc, x, y);
  // The divisions that trap on the CPU never run: by 0 the quotient is 0
  // (numpy's), by -1 it is the negation (which wraps for the minimum).
  Value zero = scalarConstant(b, loc, x.getType(), 0);
  Value byZero = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, y, zero);
  Value byMinusOne = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, y,
                                             scalarConstant(b, loc, x.getType(), -1));
  Value unsafe = b.create<arith::OrIOp>(loc, byZero, byMinusOne);
  Value safe = b.create<arith::SelectOp>(loc, unsafe, scalarConstant(b, loc, x.getType(), 1), y);
  Value quotient = b.create<arith::DivSIOp>(loc, x, safe);
  Value negated = b.create<arith::SubIOp>(loc, zero, x);
  quotient = b.create<arith::SelectOp>(loc, byMinusOne, negated, quotient);
  return b.create<arith::SelectOp>(loc, byZero, zero, quotient);
}

/// All dimensions of `rank` in one group (none for rank 0).
static SmallVector<ReassociationIndices> oneGroup(int64_t rank) {
  if (rank == 0)
    return {};
  ReassociationIndices all;
  for (int64_t d = 0; d < rank; ++d)
    all.push_back(d);
  return {all};
}

Value reshapeTensor(OpBuilder &b, Location loc, Value input,
                    RankedTensorType resultType) {
  auto inputType = llvm::cast<RankedTensorType>(input.getType());
  if (inputType == resultType)
    return input;
  // Through one dimension: collapse_shape and expand_shape of a contiguous
  // buffer are views after bufferization, where tensor.reshape would copy.
  // A rank-0 side holds one element, so it needs no group.
  Value flat = input;
  if (inputType.getRank() != 1) {
    auto flatType = RankedTensorType::get(
        {inputType.getRank() == 0 ? 1 : inputType.getNumElements()},
        inputType.getElementType());
    flat = inputType.getRank() == 0
               ? b.create<tensor::ExpandShapeOp>(loc, flatType, input,
                                                 ArrayRef<ReassociationIndices>{})
                     .getResult()
               : b.create<tensor::CollapseShapeOp>(loc, flatType, input,
                                                   oneGroup(inputType.getRank()))
                     .getResult();
  }
  if (resultType.getRank() == 1)
    return flat;
  if (resultType.getRank() == 0)
    return b.create<tensor::CollapseShapeOp>(loc, resultType, flat,
                                             ArrayRef<ReassociationIndices>{});
  return b.create<tensor::ExpandShapeOp>(loc, resultType, flat,
                                         oneGroup(resultType.getRank()));
}

} // namespace kiln
