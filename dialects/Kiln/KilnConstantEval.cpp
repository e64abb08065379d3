//===- KilnConstantEval.cpp - kiln ops evaluated on constants -------------===//

#include "dialects/Kiln/KilnConstantEval.h"

#include "llvm/ADT/APSInt.h"

using namespace mlir;

namespace kiln {
namespace {

/// The elements of a dense constant small enough to fold, or std::nullopt.
std::optional<SmallVector<Attribute>> elementsOf(Attribute attr) {
  auto dense = llvm::dyn_cast_if_present<DenseElementsAttr>(attr);
  if (!dense || !dense.getType().hasStaticShape() ||
      dense.getNumElements() > kMaxFoldedElements)
    return std::nullopt;
  return llvm::to_vector(dense.getValues<Attribute>());
}

bool foldable(RankedTensorType type) {
  return type.hasStaticShape() && type.getNumElements() <= kMaxFoldedElements;
}

SmallVector<int64_t> rowMajorStrides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

/// The multi-index of flat position `flat` in `shape`.
SmallVector<int64_t> unflatten(int64_t flat, ArrayRef<int64_t> shape) {
  SmallVector<int64_t> index(shape.size());
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    index[d] = shape[d] ? flat % shape[d] : 0;
    flat = shape[d] ? flat / shape[d] : 0;
  }
  return index;
}

int64_t flatten(ArrayRef<int64_t> index, ArrayRef<int64_t> strides) {
  int64_t flat = 0;
  for (auto [i, s] : llvm::zip(index, strides))
    flat += i * s;
  return flat;
}

/// Builds the result from one computed element per flat position.
DenseElementsAttr build(RankedTensorType type,
                        llvm::function_ref<Attribute(int64_t)> element) {
  SmallVector<Attribute> values;
  values.reserve(type.getNumElements());
  for (int64_t i = 0, e = type.getNumElements(); i < e; ++i) {
    Attribute value = element(i);
    if (!value)
      return {};
    values.push_back(value);
  }
  return DenseElementsAttr::get(type, values);
}

APInt intOf(Attribute a) { return llvm::cast<IntegerAttr>(a).getValue(); }
APFloat floatOf(Attribute a) { return llvm::cast<FloatAttr>(a).getValue(); }

Attribute castElement(Attribute value, Type to) {
  if (auto floatAttr = llvm::dyn_cast<FloatAttr>(value)) {
    APFloat x = floatAttr.getValue();
    if (to.isInteger(1))
      return IntegerAttr::get(to, x.isZero() ? 0 : 1);
    if (auto floatType = llvm::dyn_cast<FloatType>(to)) {
      APFloat y = x;
      bool lost;
      y.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      return FloatAttr::get(to, y);
    }
    llvm::APSInt result(to.getIntOrFloatBitWidth(), /*isUnsigned=*/false);
    bool exact;
    if (x.convertToInteger(result, APFloat::rmTowardZero, &exact) & APFloat::opInvalidOp)
      return {}; // NaN or out of range: leave it to run time.
    return IntegerAttr::get(to, result);
  }
  auto intAttr = llvm::dyn_cast<IntegerAttr>(value);
  if (!intAttr)
    return {};
  APInt x = intAttr.getValue();
  bool fromBool = x.getBitWidth() == 1;
  if (to.isInteger(1))
    return IntegerAttr::get(to, x.isZero() ? 0 : 1);
  if (auto floatType = llvm::dyn_cast<FloatType>(to)) {
    APFloat y(floatType.getFloatSemantics());
    y.convertFromAPInt(x, /*IsSigned=*/!fromBool, APFloat::rmNearestTiesToEven);
    return FloatAttr::get(to, y);
  }
  unsigned width = to.getIntOrFloatBitWidth();
  return IntegerAttr::get(to, fromBool ? x.zext(width) : x.sextOrTrunc(width));
}

bool compareElements(ComparePredicate predicate, Attribute lhs, Attribute rhs) {
  if (llvm::isa<FloatAttr>(lhs)) {
    APFloat::cmpResult order = floatOf(lhs).compare(floatOf(rhs));
    switch (predicate) {
    case ComparePredicate::eq: return order == APFloat::cmpEqual;
    case ComparePredicate::ne: return order != APFloat::cmpEqual;
    case ComparePredicate::lt: return order == APFloat::cmpLessThan;
    case ComparePredicate::le:
      return order == APFloat::cmpLessThan || order == APFloat::cmpEqual;
    case ComparePredicate::gt: return order == APFloat::cmpGreaterThan;
    case ComparePredicate::ge:
      return order == APFloat::cmpGreaterThan || order == APFloat::cmpEqual;
    }
  }
  APInt a = intOf(lhs), b = intOf(rhs);
  bool isBool = a.getBitWidth() == 1;
  switch (predicate) {
  case ComparePredicate::eq: return a == b;
  case ComparePredicate::ne: return a != b;
  case ComparePredicate::lt: return isBool ? a.ult(b) : a.slt(b);
  case ComparePredicate::le: return isBool ? a.ule(b) : a.sle(b);
  case ComparePredicate::gt: return isBool ? a.ugt(b) : a.sgt(b);
  case ComparePredicate::ge: return isBool ? a.uge(b) : a.sge(b);
  }
  llvm_unreachable("unknown predicate");
}

} // namespace

DenseElementsAttr evalCast(Attribute operand, RankedTensorType type) {
  std::optional<SmallVector<Attribute>> x = elementsOf(operand);
  if (!x || !foldable(type))
    return {};
  return build(type, [&](int64_t i) {
    return castElement((*x)[i], type.getElementType());
  });
}

DenseElementsAttr evalCompare(ComparePredicate predicate, Attribute lhs,
                              Attribute rhs, RankedTensorType type) {
  std::optional<SmallVector<Attribute>> a = elementsOf(lhs), b = elementsOf(rhs);
  if (!a || !b || a->size() != b->size() || !foldable(type) ||
      static_cast<int64_t>(a->size()) != type.getNumElements())
    return {};
  Type i1 = type.getElementType();
  return build(type, [&](int64_t i) -> Attribute {
    return IntegerAttr::get(i1, compareElements(predicate, (*a)[i], (*b)[i]));
  });
}

DenseElementsAttr evalSelect(Attribute condition, Attribute onTrue,
                             Attribute onFalse, RankedTensorType type) {
  std::optional<SmallVector<Attribute>> c = elementsOf(condition),
                                        t = elementsOf(onTrue),
                                        f = elementsOf(onFalse);
  int64_t n = type.getNumElements();
  if (!c || !t || !f || !foldable(type) || static_cast<int64_t>(c->size()) != n ||
      static_cast<int64_t>(t->size()) != n || static_cast<int64_t>(f->size()) != n)
    return {};
  return build(type, [&](int64_t i) {
    return intOf((*c)[i]).isZero() ? (*f)[i] : (*t)[i];
  });
}

DenseElementsAttr evalGather(Attribute table, Attribute indices, int64_t axis,
                             RankedTensorType type) {
  std::optional<SmallVector<Attribute>> rows = elementsOf(table), ids = elementsOf(indices);
  if (!rows || !ids || !foldable(type))
    return {};
  auto tableType = llvm::cast<RankedTensorType>(llvm::cast<DenseElementsAttr>(table).getType());
  auto indicesType =
      llvm::cast<RankedTensorType>(llvm::cast<DenseElementsAttr>(indices).getType());
  ArrayRef<int64_t> tableShape = tableType.getShape();
  SmallVector<int64_t> tableStrides = rowMajorStrides(tableShape);
  SmallVector<int64_t> idStrides = rowMajorStrides(indicesType.getShape());
  int64_t indexRank = indicesType.getRank(), limit = tableShape[axis];
  return build(type, [&](int64_t flat) {
    SmallVector<int64_t> out = unflatten(flat, type.getShape());
    ArrayRef<int64_t> where = ArrayRef<int64_t>(out).slice(axis, indexRank);
    // Out-of-range ids clamp, as the compiled gather does.
    int64_t id = intOf((*ids)[flatten(where, idStrides)]).getSExtValue();
    id = std::clamp<int64_t>(id, 0, limit - 1);
    SmallVector<int64_t> source(out.begin(), out.begin() + axis);
    source.push_back(id);
    source.append(out.begin() + axis + indexRank, out.end());
    return (*rows)[flatten(source, tableStrides)];
  });
}

DenseElementsAttr evalConcat(ArrayRef<Attribute> inputs, int64_t axis,
                             RankedTensorType type) {
  SmallVector<SmallVector<Attribute>> values;
  SmallVector<RankedTensorType> types;
  for (Attribute input : inputs) {
    std::optional<SmallVector<Attribute>> v = elementsOf(input);
    if (!v)
      return {};
    values.push_back(std::move(*v));
    types.push_back(llvm::cast<RankedTensorType>(llvm::cast<DenseElementsAttr>(input).getType()));
  }
  if (!foldable(type))
    return {};
  return build(type, [&](int64_t flat) -> Attribute {
    SmallVector<int64_t> index = unflatten(flat, type.getShape());
    for (auto [v, t] : llvm::zip(values, types)) {
      if (index[axis] < t.getDimSize(axis))
        return v[flatten(index, rowMajorStrides(t.getShape()))];
      index[axis] -= t.getDimSize(axis);
    }
    return {};
  });
}

DenseElementsAttr evalSlice(Attribute operand, ArrayRef<int64_t> start,
                            ArrayRef<int64_t> step, RankedTensorType type) {
  std::optional<SmallVector<Attribute>> x = elementsOf(operand);
  if (!x || !foldable(type))
    return {};
  SmallVector<int64_t> strides =
      rowMajorStrides(llvm::cast<DenseElementsAttr>(operand).getType().getShape());
  return build(type, [&](int64_t flat) {
    SmallVector<int64_t> index = unflatten(flat, type.getShape());
    for (size_t d = 0; d < index.size(); ++d)
      index[d] = start[d] + index[d] * step[d];
    return (*x)[flatten(index, strides)];
  });
}

DenseElementsAttr evalTranspose(Attribute operand, ArrayRef<int64_t> permutation,
                                RankedTensorType type) {
  std::optional<SmallVector<Attribute>> x = elementsOf(operand);
  if (!x || !foldable(type))
    return {};
  SmallVector<int64_t> strides =
      rowMajorStrides(llvm::cast<DenseElementsAttr>(operand).getType().getShape());
  return build(type, [&](int64_t flat) {
    SmallVector<int64_t> index = unflatten(flat, type.getShape());
    SmallVector<int64_t> source(index.size());
    for (auto [i, p] : llvm::enumerate(permutation))
      source[p] = index[i];
    return (*x)[flatten(source, strides)];
  });
}

DenseElementsAttr evalBroadcast(Attribute operand, RankedTensorType type) {
  std::optional<SmallVector<Attribute>> x = elementsOf(operand);
  if (!x || !foldable(type))
    return {};
  ArrayRef<int64_t> shape = llvm::cast<DenseElementsAttr>(operand).getType().getShape();
  SmallVector<int64_t> strides = rowMajorStrides(shape);
  int64_t offset = type.getRank() - static_cast<int64_t>(shape.size());
  return build(type, [&](int64_t flat) {
    SmallVector<int64_t> index = unflatten(flat, type.getShape());
    SmallVector<int64_t> source;
    for (size_t d = 0; d < shape.size(); ++d)
      source.push_back(shape[d] == 1 ? 0 : index[d + offset]);
    return (*x)[flatten(source, strides)];
  });
}

DenseElementsAttr
evalIntReduce(Attribute operand, ArrayRef<int64_t> axes, RankedTensorType type,
              llvm::function_ref<APInt(const APInt &, const APInt &)> combine) {
  std::optional<SmallVector<Attribute>> x = elementsOf(operand);
  if (!x || !foldable(type) || !llvm::isa<IntegerType>(type.getElementType()))
    return {};
  ArrayRef<int64_t> shape = llvm::cast<DenseElementsAttr>(operand).getType().getShape();
  SmallVector<int64_t> kept;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d)
    if (!llvm::is_contained(axes, d))
      kept.push_back(shape[d]);
  SmallVector<std::optional<APInt>> acc(type.getNumElements());
  int64_t keptCount = 1;
  for (int64_t d : kept)
    keptCount *= d;
  if (static_cast<int64_t>(acc.size()) != keptCount)
    return {};
  for (int64_t flat = 0, e = x->size(); flat < e; ++flat) {
    SmallVector<int64_t> index = unflatten(flat, shape), reduced;
    for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d)
      if (!llvm::is_contained(axes, d))
        reduced.push_back(index[d]);
    int64_t target = flatten(reduced, rowMajorStrides(kept));
    APInt v = intOf((*x)[flat]);
    acc[target] = acc[target] ? combine(*acc[target], v) : v;
  }
  return build(type, [&](int64_t i) -> Attribute {
    return acc[i] ? IntegerAttr::get(type.getElementType(), *acc[i]) : Attribute();
  });
}

DenseElementsAttr
evalUnary(Attribute operand, RankedTensorType type,
          llvm::function_ref<std::optional<APInt>(const APInt &)> onInt,
          llvm::function_ref<std::optional<APFloat>(const APFloat &)> onFloat) {
  std::optional<SmallVector<Attribute>> x = elementsOf(operand);
  if (!x || !foldable(type))
    return {};
  return build(type, [&](int64_t i) -> Attribute {
    Attribute value = (*x)[i];
    if (auto f = llvm::dyn_cast<FloatAttr>(value)) {
      std::optional<APFloat> y = onFloat(f.getValue());
      return y ? FloatAttr::get(type.getElementType(), *y) : Attribute();
    }
    std::optional<APInt> y = onInt(intOf(value));
    return y ? IntegerAttr::get(type.getElementType(), *y) : Attribute();
  });
}

} // namespace kiln
