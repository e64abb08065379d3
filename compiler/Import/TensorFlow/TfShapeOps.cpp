//===- TfShapeOps.cpp - TensorFlow identity, shape and layout ops ---------===//
//
// Identity, IdentityN, Snapshot, StopGradient, NoOp, Range, ReverseV2,
// Reshape, Squeeze, ExpandDims, Transpose, ConcatV2, Pack, Unpack, Split,
// SplitV, GatherV2, Shape, Size, Rank, StridedSlice, Slice, Fill, ZerosLike
// and OnesLike. Shapes, axes and slice bounds given as inputs must be known
// at import time: Consts, or values
// computed from them and from static shapes (Shape -> StridedSlice -> Pack
// -> Reshape is, since every shape is static), which KilnOpBuilder folds as
// it builds them.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/TensorFlow/TfOps.h"

#include "compiler/Import/DiagnosticText.h"
#include "compiler/Import/ShapeConversions.h"
#include "compiler/Import/TensorFlow/TfTensor.h"

#include "mlir/IR/TypeUtilities.h"

#include <numeric>

using namespace mlir;

namespace kiln {
namespace {

using Result = KilnOpBuilder::Result;

LogicalResult convertIdentity(TfNode &node) {
  node.setResultToInput(0, 0);
  return success();
}

/// IdentityN: output i is input i.
LogicalResult convertIdentityN(TfNode &node) {
  for (unsigned i = 0, e = node.getNumInputs(); i < e; ++i)
    node.setResultToInput(i, i);
  return success();
}

/// ReverseV2 (tf.reverse; Keras' go_backwards and Bidirectional): a gather
/// of each reversed axis' indices in reverse order.
LogicalResult convertReverseV2(TfNode &node) {
  Value x = node.getInput(0);
  FailureOr<ArrayRef<int64_t>> shape = node.getStaticShape(x, "an input");
  FailureOr<SmallVector<int64_t>> given = node.getConstantInts(1, "axis");
  if (failed(shape) || failed(given))
    return failure();
  FailureOr<SmallVector<int64_t>> axes = node.normalizeAxes(*given, shape->size());
  if (failed(axes))
    return failure();
  KilnOpBuilder &b = node.getBuilder();
  Value y = x;
  for (int64_t axis : *axes) {
    int64_t size = (*shape)[axis];
    if (size <= 1)
      continue;
    SmallVector<int64_t> reversed;
    for (int64_t i = size - 1; i >= 0; --i)
      reversed.push_back(i);
    auto type = RankedTensorType::get({size}, b.getBuilder().getI64Type());
    Result indices = b.constant(DenseElementsAttr::get(type, ArrayRef<int64_t>(reversed)));
    Result gathered = succeeded(indices) ? b.gather(y, *indices, axis) : indices;
    if (failed(gathered))
      return failure();
    y = *gathered;
  }
  return node.setResult(0, y);
}

/// BroadcastTo(input, shape): numpy broadcasting to a shape known at
/// import (keras.ops.triu/tril with k != 0 write it), at most 2^31 elements.
LogicalResult convertBroadcastTo(TfNode &node) {
  FailureOr<SmallVector<int64_t>> shape = node.getConstantInts(1, "shape");
  if (failed(shape))
    return failure();
  FailureOr<int64_t> elements = staticElementCount(*shape);
  if (llvm::any_of(*shape, [](int64_t d) { return d < 1; }) || failed(elements) ||
      *elements > (int64_t(1) << 31))
    return node.emitError() << "expects a shape of sizes >= 1 and at most 2^31 elements, got "
                            << formatIntList(*shape);
  return node.setResult(0, node.getBuilder().broadcastTo(node.getInput(0), *shape));
}

/// StopGradient: the identity through which kiln-autodiff takes no
/// gradient.
LogicalResult convertStopGradient(TfNode &node) {
  Value x = node.getInput(0);
  return node.setResult(0, node.getBuilder().unary<StopGradientOp>(x));
}

/// NoOp orders side effects through control inputs: nothing to build.
LogicalResult convertNoOp(TfNode &) { return success(); }

/// Reshape's target shape: one -1 takes what is left.
LogicalResult convertReshape(TfNode &node) {
  FailureOr<SmallVector<int64_t>> requested = node.getConstantInts(1, "shape");
  if (failed(requested))
    return failure();
  Value x = node.getInput(0);
  ArrayRef<int64_t> inShape = KilnOpBuilder::shapeOf(x);
  SmallVector<int64_t> shape(*requested);
  std::optional<size_t> inferred;
  for (auto [i, size] : llvm::enumerate(*requested)) {
    if (size == -1 && !inferred) {
      inferred = i;
      shape[i] = 1;
    } else if (size < 0) {
      return node.emitError() << "expects sizes >= 0 and at most one -1 in "
                                 "shape "
                              << formatIntList(*requested);
    }
  }
  FailureOr<int64_t> total = staticElementCount(inShape);
  FailureOr<int64_t> known = staticElementCount(shape);
  if (failed(total) || failed(known))
    return node.emitError() << "has a shape with too many elements "
                            << formatIntList(*requested);
  if (inferred) {
    if (*known == 0 || *total % *known)
      return node.emitError()
             << "cannot reshape " << formatIntList(inShape) << " to "
             << formatIntList(*requested) << " (the -1 does not divide out)";
    shape[*inferred] = *total / *known;
  }
  return node.setResult(0, node.getBuilder().reshape(x, shape));
}

/// Squeeze: drops the size-1 dimensions squeeze_dims names, or all of them.
LogicalResult convertSqueeze(TfNode &node) {
  Value x = node.getInput(0);
  FailureOr<std::optional<SmallVector<int64_t>>> dims =
      node.getIntsAttr("squeeze_dims");
  if (failed(dims))
    return failure();
  ArrayRef<int64_t> shape = KilnOpBuilder::shapeOf(x);
  SmallVector<int64_t> axes;
  if (*dims && !(*dims)->empty()) {
    FailureOr<SmallVector<int64_t>> normalized =
        node.normalizeAxes(**dims, shape.size());
    if (failed(normalized))
      return failure();
    axes = *normalized;
    for (int64_t axis : axes)
      if (shape[axis] != 1)
        return node.emitError()
               << "cannot squeeze dimension " << axis << " of size "
               << shape[axis] << " (shape " << formatIntList(shape) << ")";
  } else {
    for (auto [d, size] : llvm::enumerate(shape))
      if (size == 1)
        axes.push_back(d);
  }
  SmallVector<int64_t> result;
  for (auto [d, size] : llvm::enumerate(shape))
    if (!llvm::is_contained(axes, static_cast<int64_t>(d)))
      result.push_back(size);
  return node.setResult(0, node.getBuilder().reshape(x, result));
}

/// `shape` with a 1 inserted at `axis`.
SmallVector<int64_t> withUnitDim(ArrayRef<int64_t> shape, int64_t axis) {
  SmallVector<int64_t> result(shape);
  result.insert(result.begin() + axis, 1);
  return result;
}

LogicalResult convertExpandDims(TfNode &node) {
  Value x = node.getInput(0);
  FailureOr<SmallVector<int64_t>> axisInput = node.getConstantInts(1, "axis");
  if (failed(axisInput))
    return failure();
  if (axisInput->size() != 1)
    return node.emitError()
           << "expects one axis, got " << formatIntList(*axisInput);
  ArrayRef<int64_t> shape = KilnOpBuilder::shapeOf(x);
  FailureOr<int64_t> axis =
      node.normalizeNewAxis(axisInput->front(), shape.size());
  if (failed(axis))
    return failure();
  return node.setResult(
      0, node.getBuilder().reshape(x, withUnitDim(shape, *axis)));
}

LogicalResult convertTranspose(TfNode &node) {
  FailureOr<SmallVector<int64_t>> perm = node.getConstantInts(1, "perm");
  if (failed(perm))
    return failure();
  return node.setResult(0,
                        node.getBuilder().transpose(node.getInput(0), *perm));
}

/// ConcatV2(values..., axis) and Concat(axis, values...).
template <bool AxisFirst> LogicalResult convertConcat(TfNode &node) {
  unsigned count = node.getNumInputs() - 1;
  SmallVector<Value> inputs;
  for (unsigned i = 0; i < count; ++i)
    inputs.push_back(node.getInput(AxisFirst ? i + 1 : i));
  FailureOr<int64_t> axis =
      node.getConstantAxis(AxisFirst ? 0 : count, KilnOpBuilder::rankOf(inputs.front()));
  if (failed(axis))
    return failure();
  if (inputs.size() == 1)
    return node.setResult(0, inputs.front());
  return node.setResult(0, node.getBuilder().concat(inputs, *axis));
}

/// Pack: the inputs, of one shape, stacked along a new dimension `axis`.
LogicalResult convertPack(TfNode &node) {
  FailureOr<int64_t> axisAttr = node.getIntAttr("axis", 0);
  if (failed(axisAttr))
    return failure();
  ArrayRef<int64_t> shape = KilnOpBuilder::shapeOf(node.getInput(0));
  FailureOr<int64_t> axis =
      node.normalizeNewAxis(*axisAttr, shape.size());
  if (failed(axis))
    return failure();
  KilnOpBuilder &b = node.getBuilder();
  SmallVector<Value> pieces;
  for (unsigned i = 0, e = node.getNumInputs(); i < e; ++i) {
    Value input = node.getInput(i);
    if (KilnOpBuilder::shapeOf(input) != shape)
      return node.emitError()
             << "expects inputs of one shape, got " << formatIntList(shape)
             << " and " << formatIntList(KilnOpBuilder::shapeOf(input));
    Result piece = b.reshape(input, withUnitDim(shape, *axis));
    if (failed(piece))
      return failure();
    pieces.push_back(*piece);
  }
  if (pieces.size() == 1)
    return node.setResult(0, pieces.front());
  return node.setResult(0, b.concat(pieces, *axis));
}

/// GatherV2(params, indices, axis) and Gather(params, indices) (axis 0).
/// Constant indices are checked against the dimension: TensorFlow refuses
/// an index out of range, so does Kiln, at import time.
LogicalResult convertGather(TfNode &node) {
  Value params = node.getInput(0), indices = node.getInput(1);
  FailureOr<int64_t> batchDims = node.getIntAttr("batch_dims", 0);
  if (failed(batchDims))
    return failure();
  if (*batchDims != 0)
    return node.emitError() << "expects batch_dims 0, got " << *batchDims;
  int64_t axisValue = 0;
  if (node.getNumInputs() == 3) {
    FailureOr<SmallVector<int64_t>> axis = node.getConstantInts(2, "axis");
    if (failed(axis))
      return failure();
    if (axis->size() != 1)
      return node.emitError()
             << "expects one axis, got " << formatIntList(*axis);
    axisValue = axis->front();
  }
  ArrayRef<int64_t> shape = KilnOpBuilder::shapeOf(params);
  FailureOr<int64_t> axis = node.normalizeAxis(axisValue, shape.size());
  if (failed(axis))
    return failure();
  DenseElementsAttr constant = node.getConstantInput(1);
  if (constant && constant.getElementType().isSignlessInteger()) {
    for (const APInt &index : constant.getValues<APInt>())
      if (index.getSExtValue() < 0 || index.getSExtValue() >= shape[*axis])
        return node.emitError()
               << "index " << index.getSExtValue() << " is out of range [0, "
               << shape[*axis] << ") of dimension " << *axis;
  }
  return node.setResult(0, node.getBuilder().gather(params, indices, *axis));
}

/// The integers `values` as a constant of `dataType` (DT_INT32 or
/// DT_INT64), 1-D or a scalar.
FailureOr<DenseElementsAttr>
intConstant(TfNode &node, int dataType, ArrayRef<int64_t> values, bool scalar) {
  Builder b(node.getContext());
  if (dataType != tensorflow::DT_INT32 && dataType != tensorflow::DT_INT64)
    return node.emitError() << "expects out_type DT_INT32 or DT_INT64, got "
                            << getTfDataTypeName(dataType);
  Type elementType =
      dataType == tensorflow::DT_INT32 ? b.getI32Type() : b.getI64Type();
  SmallVector<int64_t> shape;
  if (!scalar)
    shape.push_back(values.size());
  SmallVector<Attribute> elements;
  for (int64_t v : values)
    elements.push_back(b.getIntegerAttr(elementType, v));
  return DenseElementsAttr::get(RankedTensorType::get(shape, elementType),
                                elements);
}

FailureOr<int> outType(TfNode &node) {
  if (!node.getAttr("out_type"))
    return static_cast<int>(tensorflow::DT_INT32);
  return node.getTypeAttr("out_type");
}

/// Shape, Size and Rank of the input's static shape.
template <int Which> LogicalResult convertShapeOf(TfNode &node) {
  ArrayRef<int64_t> shape = KilnOpBuilder::shapeOf(node.getInput(0));
  FailureOr<int> dataType =
      Which == 2 ? FailureOr<int>(tensorflow::DT_INT32) : outType(node);
  if (failed(dataType))
    return failure();
  SmallVector<int64_t> values(shape);
  if (Which == 1)
    values.assign(1, *staticElementCount(shape));
  if (Which == 2)
    values.assign(1, shape.size());
  FailureOr<DenseElementsAttr> value =
      intConstant(node, *dataType, values, /*scalar=*/Which != 0);
  if (failed(value))
    return failure();
  node.setConstantResult(0, *value);
  return success();
}

/// Slice(input, begin, size): size -1 takes the rest of the dimension.
LogicalResult convertSlice(TfNode &node) {
  Value x = node.getInput(0);
  FailureOr<SmallVector<int64_t>> begin = node.getConstantInts(1, "begin");
  FailureOr<SmallVector<int64_t>> size = node.getConstantInts(2, "size");
  if (failed(begin) || failed(size))
    return failure();
  ArrayRef<int64_t> shape = KilnOpBuilder::shapeOf(x);
  if (begin->size() != shape.size() || size->size() != shape.size())
    return node.emitError()
           << "expects begin and size of length " << shape.size()
           << " (the rank), got " << formatIntList(*begin) << " and "
           << formatIntList(*size);
  SmallVector<int64_t> limit, step(shape.size(), 1);
  for (auto [d, dim] : llvm::enumerate(shape)) {
    int64_t first = (*begin)[d], count = (*size)[d];
    if (count == -1)
      count = dim - first;
    if (first < 0 || count < 0 || first + count > dim)
      return node.emitError()
             << "slice [" << (*begin)[d] << ", size " << (*size)[d]
             << ") does not fit dimension " << d << " of size " << dim;
    limit.push_back(first + count);
  }
  return node.setResult(0, node.getBuilder().slice(x, *begin, limit, step));
}

/// `x` cut along `axis` into parts of `sizes` (which add up to the
/// dimension), each output `i` the part `i`; with `squeeze`, parts of one
/// element lose the axis (Unpack).
LogicalResult setParts(TfNode &node, Value x, int64_t axis, ArrayRef<int64_t> sizes,
                       bool squeeze) {
  ArrayRef<int64_t> shape = KilnOpBuilder::shapeOf(x);
  KilnOpBuilder &b = node.getBuilder();
  SmallVector<int64_t> start(shape.size(), 0), limit(shape), step(shape.size(), 1);
  for (auto [i, size] : llvm::enumerate(sizes)) {
    limit[axis] = start[axis] + size;
    Result part = b.slice(x, start, limit, step);
    if (succeeded(part) && squeeze) {
      SmallVector<int64_t> squeezed(shape);
      squeezed.erase(squeezed.begin() + axis);
      part = b.reshape(*part, squeezed);
    }
    if (failed(node.setResult(static_cast<unsigned>(i), part)))
      return failure();
    start[axis] = limit[axis];
  }
  return success();
}

/// Split(axis, value) into num_split equal parts, SplitV(value,
/// size_splits, axis) into parts of the given sizes (one -1 takes the
/// rest): what tf.split writes (Keras' LSTM and GRU cells split their
/// gates with it).
template <bool WithSizes> LogicalResult convertSplit(TfNode &node) {
  FailureOr<int64_t> count = node.getIntAttr("num_split", 0);
  if (failed(count))
    return failure();
  Value x = node.getInput(WithSizes ? 0 : 1);
  FailureOr<int64_t> axis = node.getConstantAxis(WithSizes ? 2 : 0, KilnOpBuilder::rankOf(x));
  if (failed(axis))
    return failure();
  int64_t dim = KilnOpBuilder::shapeOf(x)[*axis];
  SmallVector<int64_t> sizes;
  if (WithSizes) {
    FailureOr<SmallVector<int64_t>> given = node.getConstantInts(1, "size_splits");
    if (failed(given))
      return failure();
    sizes = *given;
    int64_t known = 0, unknown = 0;
    for (int64_t size : sizes)
      size == -1 ? ++unknown : known += size;
    for (int64_t &size : sizes)
      if (size == -1 && unknown == 1)
        size = dim - known;
    if (static_cast<int64_t>(sizes.size()) != *count || unknown > 1 ||
        llvm::any_of(sizes, [](int64_t size) { return size < 1; }) ||
        std::accumulate(sizes.begin(), sizes.end(), int64_t(0)) != dim)
      return node.emitError() << "expects " << *count << " sizes of at least 1 adding up to "
                              << dim << " (at most one -1), got " << formatIntList(*given);
  } else {
    if (*count < 1 || dim % *count != 0)
      return node.emitError() << "expects num_split dividing dimension " << *axis << " ("
                              << dim << "), got " << *count;
    sizes.assign(*count, dim / *count);
  }
  return setParts(node, x, *axis, sizes, /*squeeze=*/false);
}

/// Unpack (tf.unstack): `num` tensors along `axis`, each without it (what
/// Keras' recurrent layers with unroll=True write for their steps).
LogicalResult convertUnpack(TfNode &node) {
  FailureOr<int64_t> count = node.getIntAttr("num", 0);
  FailureOr<int64_t> axisAttr = node.getIntAttr("axis", 0);
  if (failed(count) || failed(axisAttr))
    return failure();
  Value x = node.getInput(0);
  FailureOr<int64_t> axis = node.normalizeAxis(*axisAttr, KilnOpBuilder::rankOf(x));
  if (failed(axis))
    return failure();
  int64_t dim = KilnOpBuilder::shapeOf(x)[*axis];
  if (*count != dim || dim < 1)
    return node.emitError() << "expects num equal to dimension " << *axis << " (" << dim
                            << "), got " << *count;
  return setParts(node, x, *axis, SmallVector<int64_t>(dim, 1), /*squeeze=*/true);
}

/// Fill(dims, value): a splat of a scalar.
LogicalResult convertFill(TfNode &node) {
  FailureOr<SmallVector<int64_t>> dims = node.getConstantInts(0, "dims");
  if (failed(dims))
    return failure();
  if (llvm::any_of(*dims, [](int64_t d) { return d < 0; }) ||
      failed(staticElementCount(*dims)))
    return node.emitError()
           << "expects dims of sizes >= 0, got " << formatIntList(*dims);
  if (DenseElementsAttr value = node.getConstantInput(1)) {
    if (value.getNumElements() != 1 || value.getType().getRank() != 0)
      return node.emitError() << "expects a scalar value, got shape "
                              << formatIntList(value.getType().getShape());
    auto type = RankedTensorType::get(*dims, value.getElementType());
    node.setConstantResult(
        0, SplatElementsAttr::get(type, *value.getValues<Attribute>().begin()));
    return success();
  }
  Value value = node.getInput(1);
  if (failed(node.requireRank(value, 0, "a scalar value")))
    return failure();
  return node.setResult(0, node.getBuilder().broadcastTo(value, *dims));
}

/// ZerosLike and OnesLike: a constant of the input's type.
template <int Value> LogicalResult convertSplatLike(TfNode &node) {
  auto type = llvm::cast<RankedTensorType>(node.getInput(0).getType());
  Builder b(node.getContext());
  Attribute element =
      llvm::isa<FloatType>(type.getElementType())
          ? Attribute(b.getFloatAttr(type.getElementType(), Value))
          : Attribute(b.getIntegerAttr(type.getElementType(), Value));
  node.setConstantResult(0, SplatElementsAttr::get(type, element));
  return success();
}

constexpr TfOpConversion kShapeOps[] = {
    {"Identity", 1, 1, "T", convertIdentity},
    {"Snapshot", 1, 1, "T", convertIdentity},
    {"IdentityN", 1, TfOpConversion::kVariadic, "T", convertIdentityN},
    {"Range", 3, 3, "Tidx", convertRange<TfNode>},
    {"ReverseV2", 2, 2, "T Tidx", convertReverseV2},
    {"StopGradient", 1, 1, "T", convertStopGradient},
    {"NoOp", 0, 0, "", convertNoOp},
    {"Reshape", 2, 2, "T Tshape", convertReshape},
    {"Squeeze", 1, 1, "T squeeze_dims", convertSqueeze},
    {"ExpandDims", 2, 2, "T Tdim", convertExpandDims},
    {"Transpose", 2, 2, "T Tperm", convertTranspose},
    {"ConcatV2", 2, TfOpConversion::kVariadic, "N T Tidx",
     convertConcat<false>},
    {"Concat", 2, TfOpConversion::kVariadic, "N T", convertConcat<true>},
    {"Pack", 1, TfOpConversion::kVariadic, "N T axis", convertPack},
    {"Unpack", 1, 1, "T num axis", convertUnpack},
    {"Split", 2, 2, "T num_split", convertSplit<false>},
    {"SplitV", 3, 3, "T Tlen num_split", convertSplit<true>},
    {"Tile", 2, 2, "T Tmultiples", convertTile},
    {"BroadcastTo", 2, 2, "T Tidx", convertBroadcastTo},
    {"GatherV2", 3, 3, "Tparams Tindices Taxis batch_dims", convertGather},
    {"Gather", 2, 2, "Tparams Tindices validate_indices", convertGather},
    {"Shape", 1, 1, "T out_type", convertShapeOf<0>},
    {"Size", 1, 1, "T out_type", convertShapeOf<1>},
    {"Rank", 1, 1, "T", convertShapeOf<2>},
    {"StridedSlice", 4, 4,
     "T Index begin_mask end_mask ellipsis_mask new_axis_mask shrink_axis_mask",
     convertStridedSlice},
    {"Slice", 3, 3, "T Index", convertSlice},
    {"Fill", 2, 2, "T index_type", convertFill},
    {"ZerosLike", 1, 1, "T", convertSplatLike<0>},
    {"OnesLike", 1, 1, "T", convertSplatLike<1>},
};

} // namespace

ArrayRef<TfOpConversion> getTfShapeOps() { return kShapeOps; }

} // namespace kiln
