//===- OnnxPositionOps.cpp - ONNX ops over element positions --------------===//
//
// ArgMax and ArgMin (a reduction of positions where the extreme is), CumSum
// (a scan of shifted adds, so it trains), ScatterElements and ScatterND at
// indices known at import time (a select of the data and the updates
// gathered), GatherND
// (one gather of the data's leading dimensions flattened), TopK (K rounds
// of taking the first extreme not yet taken), OneHot
// (kiln.one_hot choosing between the off and on values) and DepthToSpace /
// SpaceToDepth (PixelShuffle: a reshape, a transpose and a reshape).
// ArgMax, ArgMin, CumSum, TopK and OneHot are built by
// compiler/Import/Positions.cpp, shared with TensorFlow.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/Onnx/OnnxOps.h"

#include "compiler/Import/DiagnosticText.h"
#include "compiler/Import/Positions.h"

#include "mlir/IR/TypeUtilities.h"

#include <algorithm>

using namespace mlir;

namespace kiln {
namespace {

using Result = KilnOpBuilder::Result;

/// A constant i64 tensor of `shape` holding `values`.
Result int64Constant(KilnOpBuilder &b, ArrayRef<int64_t> shape, ArrayRef<int64_t> values) {
  auto type = RankedTensorType::get(shape, b.getBuilder().getI64Type());
  return b.constant(DenseElementsAttr::get(type, values));
}

/// An input's static shape and an axis of it, made non-negative.
struct AxisOf {
  ArrayRef<int64_t> shape;
  int64_t axis;
};

FailureOr<AxisOf> readAxisOf(OnnxNode &node, Value x, int64_t axis) {
  FailureOr<ArrayRef<int64_t>> shape = node.getStaticShape(x, "an input");
  if (failed(shape))
    return failure();
  FailureOr<int64_t> normalized = node.normalizeAxis(axis, shape->size());
  if (failed(normalized))
    return failure();
  return AxisOf{*shape, *normalized};
}

/// ArgMax (or, with `minimum`, ArgMin): the first (or with
/// select_last_index the last) position of the extreme along `axis`, as
/// int64: the positions where x equals its extreme, scored so that a max
/// over them picks the wanted one.
template <bool Minimum> LogicalResult convertArgExtreme(OnnxNode &node) {
  FailureOr<int64_t> axisAttr = node.getIntAttr("axis", 0);
  FailureOr<int64_t> keepDims = node.getIntAttr("keepdims", 1);
  FailureOr<int64_t> last = node.getIntAttr("select_last_index", 0);
  if (failed(axisAttr) || failed(keepDims) || failed(last))
    return failure();
  Value x = node.getInput(0);
  if (failed(node.requireNumeric(x, "an input")))
    return failure();
  FailureOr<AxisOf> input = readAxisOf(node, x, *axisAttr);
  if (failed(input))
    return failure();
  ArrayRef<int64_t> shape = input->shape;
  int64_t axis = input->axis;
  int64_t n = shape[axis];
  if (n < 1)
    return node.emitError() << "reduces an empty dimension " << axis;
  return node.setResult(0, buildArgExtreme(node.getBuilder(), x, axis, Minimum, *last != 0,
                                           *keepDims != 0));
}

/// CumSum(x, axis): a scan in log2(N) steps, each adding the running sums
/// shifted by 1, 2, 4, ... positions (toward the end, or the start with
/// `reverse`); `exclusive` shifts the result by one more. An inf or NaN
/// reaches only the positions after it, as a running sum does.
LogicalResult convertCumSum(OnnxNode &node) {
  FailureOr<int64_t> exclusive = node.getIntAttr("exclusive", 0);
  FailureOr<int64_t> reverse = node.getIntAttr("reverse", 0);
  if (failed(exclusive) || failed(reverse))
    return failure();
  Value x = node.getInput(0);
  if (failed(node.requireNumeric(x, "an input")))
    return failure();
  FailureOr<ArrayRef<int64_t>> shape = node.getStaticShape(x, "an input");
  FailureOr<SmallVector<int64_t>> axisValue = node.getConstantInts(1, "axis");
  if (failed(shape) || failed(axisValue))
    return failure();
  if (axisValue->size() != 1)
    return node.emitError() << "expects one axis, got " << formatIntList(*axisValue);
  FailureOr<int64_t> axis = node.normalizeAxis(axisValue->front(), shape->size());
  if (failed(axis))
    return failure();
  return node.setResult(0, buildCumSum(node.getBuilder(), x, *axis, *exclusive != 0,
                                       *reverse != 0));
}

/// OneHot(indices, depth, values): kiln.one_hot of the indices (negative
/// ones counted from the end, as ONNX wraps them) along a new axis, then
/// `on` where it is 1 and `off` elsewhere, in the values' type.
LogicalResult convertOneHot(OnnxNode &node) {
  FailureOr<int64_t> axisAttr = node.getIntAttr("axis", -1);
  if (failed(axisAttr))
    return failure();
  Value indices = node.getInput(0);
  Type indexType = getElementTypeOrSelf(indices.getType());
  if (!indexType.isInteger(32) && !indexType.isInteger(64))
    return node.emitError() << "expects int32 or int64 indices, got " << indexType;
  // depth: any number, cast to int64 (onnx.ai).
  DenseElementsAttr depthValue = node.getConstantInput(1);
  DenseElementsAttr values = node.getConstantInput(2);
  if (!depthValue || depthValue.getNumElements() != 1)
    return node.emitError() << "expects input #1 (depth) to be one number known at import time";
  Attribute depthElement = *depthValue.value_begin<Attribute>();
  double depthNumber = 0;
  if (auto f = llvm::dyn_cast<FloatAttr>(depthElement))
    depthNumber = f.getValueAsDouble();
  else if (auto i = llvm::dyn_cast<IntegerAttr>(depthElement))
    depthNumber = static_cast<double>(i.getValue().getSExtValue());
  if (!(depthNumber >= 1) || depthNumber > double(int64_t(1) << 24))
    return node.emitError() << "expects a depth in [1, 2^24], got " << depthNumber;
  if (!values || values.getNumElements() != 2)
    return node.emitError() << "expects input #2 (values) to be [off, on] known at import time";
  auto depth = static_cast<int64_t>(depthNumber);
  FailureOr<ArrayRef<int64_t>> shape = node.getStaticShape(indices, "indices");
  if (failed(shape))
    return failure();
  int64_t rank = static_cast<int64_t>(shape->size()) + 1;
  FailureOr<int64_t> axis = node.normalizeAxis(*axisAttr, rank);
  if (failed(axis))
    return failure();
  Type valueType = values.getElementType();
  if (!llvm::isa<FloatType>(valueType) && !llvm::isa<IntegerType>(valueType))
    return node.emitError() << "expects float or integer values, got " << valueType;
  return node.setResult(0, buildOneHot(node.getBuilder(), indices, depth, *axis,
                                       *(values.value_begin<Attribute>() + 1),
                                       *values.value_begin<Attribute>(),
                                       /*wrapNegative=*/true));
}

/// DepthToSpace (DCR or CRD) and SpaceToDepth of [N, C, H, W] by
/// `blocksize`: a reshape, a transpose and a reshape.
template <bool ToSpace> LogicalResult convertDepthSpace(OnnxNode &node) {
  FailureOr<int64_t> block = node.getIntAttr("blocksize", 0);
  FailureOr<std::string> mode = node.getStringAttr("mode", "DCR");
  if (failed(block) || failed(mode))
    return failure();
  Value x = node.getInput(0);
  FailureOr<ArrayRef<int64_t>> shape = node.getStaticShape(x, "an input");
  if (failed(shape))
    return failure();
  if (shape->size() != 4)
    return node.emitError() << "expects an input [N, C, H, W], got " << formatIntList(*shape);
  int64_t n = (*shape)[0], c = (*shape)[1], h = (*shape)[2], w = (*shape)[3], s = *block;
  if (s < 1 || s > std::max({c, h, w}) ||
      (ToSpace ? c % (s * s) != 0 : h % s != 0 || w % s != 0))
    return node.emitError() << "expects a blocksize of at least 1 dividing "
                            << (ToSpace ? "the channels by its square" : "H and W") << ", got "
                            << s << " for " << formatIntList(*shape);
  if (ToSpace && *mode != "DCR" && *mode != "CRD")
    return node.emitError() << "mode '" << printable(*mode) << "' is not DCR or CRD";
  SmallVector<int64_t> split, perm, merged;
  if (!ToSpace) {
    split = {n, c, h / s, s, w / s, s};
    perm = {0, 3, 5, 1, 2, 4};
    merged = {n, c * s * s, h / s, w / s};
  } else if (*mode == "DCR") {
    split = {n, s, s, c / (s * s), h, w};
    perm = {0, 3, 4, 1, 5, 2};
    merged = {n, c / (s * s), h * s, w * s};
  } else {
    split = {n, c / (s * s), s, s, h, w};
    perm = {0, 1, 4, 2, 5, 3};
    merged = {n, c / (s * s), h * s, w * s};
  }
  KilnOpBuilder &b = node.getBuilder();
  Result y = b.reshape(x, split);
  if (succeeded(y))
    y = b.transpose(*y, perm);
  if (succeeded(y))
    y = b.reshape(*y, merged);
  return node.setResult(0, y);
}

/// TopK: K rounds, each taking the first position of the largest (or
/// smallest) value not yet taken, NaNs before every number (after them for
/// the smallest), as PyTorch's topk orders them; the values gathered at the
/// positions, so they train (MoE gating, top-k pooling).
LogicalResult convertTopK(OnnxNode &node) {
  FailureOr<int64_t> axisAttr = node.getIntAttr("axis", -1);
  FailureOr<int64_t> largest = node.getIntAttr("largest", 1);
  FailureOr<int64_t> sorted = node.getIntAttr("sorted", 1);
  if (failed(axisAttr) || failed(largest) || failed(sorted))
    return failure();
  Value x = node.getInput(0);
  if (failed(node.requireFloat(x, "an input")))
    return failure();
  FailureOr<AxisOf> input = readAxisOf(node, x, *axisAttr);
  if (failed(input))
    return failure();
  ArrayRef<int64_t> shape = input->shape;
  int64_t axis = input->axis;
  int64_t n = shape[axis], k;
  if (node.getOpset() < 10) {
    if (!node.hasAttribute("k"))
      return node.emitError() << "needs attribute 'k' (opsets before 10)";
    FailureOr<int64_t> attribute = node.getIntAttr("k", -1);
    if (failed(attribute))
      return failure();
    k = *attribute;
  } else {
    if (!node.hasInput(1))
      return node.emitError() << "needs input #1 (K) from opset 10";
    FailureOr<SmallVector<int64_t>> given = node.getConstantInts(1, "K");
    if (failed(given))
      return failure();
    if (given->size() != 1)
      return node.emitError() << "expects K to be one number, got " << formatIntList(*given);
    k = given->front();
  }
  if (k < 1 || k > n || k > kMaxTopK)
    return node.emitError() << "takes K = " << k << " of " << n << " elements; kiln's TopK takes "
                            << "1 to " << kMaxTopK << " and at most the dimension's size";
  FailureOr<std::pair<Value, Value>> top =
      buildTopK(node.getBuilder(), x, axis, k, *largest != 0);
  if (failed(top) || failed(node.setResult(0, top->first)))
    return failure();
  return node.setResult(1, top->second);
}

/// A scatter's data and updates of static shapes, and its indices, known
/// at import time; reduction 'none' only.
struct ScatterInputs {
  Value data, updates;
  DenseElementsAttr indices;
  ArrayRef<int64_t> shape, updateShape;
};

FailureOr<ScatterInputs> readScatterInputs(OnnxNode &node) {
  FailureOr<std::string> reduction = node.getStringAttr("reduction", "none");
  if (failed(reduction))
    return failure();
  if (*reduction != "none")
    return node.emitError() << "reduction '" << printable(*reduction)
                            << "' is not supported (kiln scatters with 'none')";
  Value data = node.getInput(0), updates = node.getInput(2);
  DenseElementsAttr indices = node.getConstantInput(1);
  if (!indices || !llvm::isa<IntegerType>(indices.getElementType()))
    return node.emitError() << "has indices known only when the model runs; kiln scatters "
                               "at indices known at import time";
  FailureOr<ArrayRef<int64_t>> shape = node.getStaticShape(data, "data");
  FailureOr<ArrayRef<int64_t>> updateShape = node.getStaticShape(updates, "updates");
  if (failed(shape) || failed(updateShape))
    return failure();
  return ScatterInputs{data, updates, indices, *shape, *updateShape};
}

/// ScatterElements with indices known at import time: each element is the
/// last update written to it, else the data's: a select between the data
/// and the updates gathered at a constant map (the dynamo exporter writes
/// one to set the last of EmbeddingBag's offsets). Only reduction 'none'.
LogicalResult convertScatterElements(OnnxNode &node) {
  FailureOr<int64_t> axisAttr = node.getIntAttr("axis", 0);
  FailureOr<ScatterInputs> inputs = readScatterInputs(node);
  if (failed(axisAttr) || failed(inputs))
    return failure();
  auto [data, updates, indices, shape, updateShape] = *inputs;
  int64_t rank = shape.size();
  FailureOr<int64_t> axis = node.normalizeAxis(*axisAttr, rank);
  if (failed(axis))
    return failure();
  if (indices.getType().getShape() != updateShape ||
      static_cast<int64_t>(updateShape.size()) != rank)
    return node.emitError() << "expects indices and updates of one shape and the data's rank, got "
                            << formatIntList(indices.getType().getShape()) << ", "
                            << formatIntList(updateShape) << " and "
                            << formatIntList(shape);
  if (getElementTypeOrSelf(data) != getElementTypeOrSelf(updates))
    return node.emitError() << "expects updates of the data's element type";
  int64_t count = 1;
  for (int64_t size : shape)
    count *= size;
  constexpr int64_t kMaxElements = int64_t{1} << 20;
  if (count > kMaxElements)
    return node.emitError() << "scatters into " << count << " elements; kiln's import-time "
                            << "map takes at most " << kMaxElements;
  // source[t]: the flat position of the update written last to element t.
  SmallVector<int64_t> source(count, -1);
  SmallVector<int64_t> position(rank, 0);
  int64_t p = 0;
  for (const APInt &value : indices.getValues<APInt>()) {
    int64_t index = value.getSExtValue(), size = shape[*axis];
    if (index < -size || index >= size)
      return node.emitError() << "has index " << index << " out of range [" << -size << ", "
                              << size << ") for dimension " << *axis;
    int64_t target = 0;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t coordinate = d == *axis ? (index < 0 ? index + size : index) : position[d];
      if (coordinate >= shape[d])
        return node.emitError() << "writes past the data: updates of shape "
                                << formatIntList(updateShape) << " into "
                                << formatIntList(shape);
      target = target * shape[d] + coordinate;
    }
    source[target] = p++;
    for (int64_t d = rank - 1; d >= 0 && ++position[d] == updateShape[d]; --d)
      position[d] = 0;
  }
  KilnOpBuilder &b = node.getBuilder();
  SmallVector<int64_t> from;
  SmallVector<bool> written;
  for (int64_t s : source) {
    from.push_back(std::max<int64_t>(s, 0));
    written.push_back(s >= 0);
  }
  Result flat = b.reshape(updates, {p});
  Result map = int64Constant(b, shape, from);
  Result gathered = succeeded(flat) && succeeded(map) ? b.gather(*flat, *map, 0) : flat;
  Result mask = b.constant(DenseElementsAttr::get(
      RankedTensorType::get(shape, b.getBuilder().getI1Type()), ArrayRef<bool>(written)));
  if (failed(gathered) || failed(mask))
    return failure();
  return node.setResult(0, b.select(*mask, *gathered, data));
}

/// ScatterND with indices known at import time: each index tuple (the last
/// axis of `indices`, k long) names a slice of `data` over its dimensions
/// after the k-th, which the tuple's slice of `updates` replaces (the last
/// written, where tuples repeat). As ScatterElements: the data viewed as
/// rows (the first k dimensions flattened), the updates' rows gathered at a
/// constant map, and a select by a constant row mask. torchvision's Swin
/// builds its shifted-window mask so (`mask[h0:h1, w0:w1] = n` exports as a
/// ScatterND into zeros). Only reduction 'none'.
LogicalResult convertScatterND(OnnxNode &node) {
  FailureOr<ScatterInputs> inputs = readScatterInputs(node);
  if (failed(inputs))
    return failure();
  auto [data, updates, indices, shape, updateShape] = *inputs;
  ArrayRef<int64_t> indexShape = indices.getType().getShape();
  int64_t k = indexShape.empty() ? -1 : indexShape.back();
  if (k < 0 || k > static_cast<int64_t>(shape.size()))
    return node.emitError() << "expects indices whose last dimension is at most the data's rank "
                            << shape.size() << ", got indices of shape "
                            << formatIntList(indexShape);
  SmallVector<int64_t> expected(indexShape.drop_back());
  expected.append(shape.begin() + k, shape.end());
  if (ArrayRef<int64_t>(expected) != updateShape)
    return node.emitError() << "expects updates of shape " << formatIntList(expected)
                            << " (the indices' leading dimensions, then the data's from "
                            << "dimension " << k << "), got " << formatIntList(updateShape);
  if (getElementTypeOrSelf(data) != getElementTypeOrSelf(updates))
    return node.emitError() << "expects updates of the data's element type";
  int64_t rows = 1, tuples = 1;
  for (int64_t size : shape.take_front(k))
    rows *= size;
  for (int64_t size : indexShape.drop_back())
    tuples *= size;
  constexpr int64_t kMaxRows = int64_t{1} << 20;
  if (rows > kMaxRows)
    return node.emitError() << "scatters into " << rows << " slices; kiln's import-time map "
                            << "takes at most " << kMaxRows;
  if (tuples == 0)
    return node.setResult(0, data);
  // source[r]: the update tuple written last to row r.
  SmallVector<int64_t> source(rows, -1);
  SmallVector<APInt> values(indices.getValues<APInt>());
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t row = 0;
    for (int64_t d = 0; d < k; ++d) {
      int64_t index = values[t * k + d].getSExtValue(), size = shape[d];
      if (index < -size || index >= size)
        return node.emitError() << "has index " << index << " out of range [" << -size << ", "
                                << size << ") for dimension " << d;
      row = row * size + (index < 0 ? index + size : index);
    }
    source[row] = t;
  }
  SmallVector<int64_t> from, rowShape = {rows}, maskShape = {rows};
  SmallVector<bool> written;
  for (int64_t s : source) {
    from.push_back(std::max<int64_t>(s, 0));
    written.push_back(s >= 0);
  }
  SmallVector<int64_t> updateRows = {tuples};
  updateRows.append(shape.begin() + k, shape.end());
  rowShape.append(shape.begin() + k, shape.end());
  maskShape.append(shape.size() - k, 1);
  KilnOpBuilder &b = node.getBuilder();
  Result flat = b.reshape(updates, updateRows);
  Result map = int64Constant(b, {rows}, from);
  Result gathered = succeeded(flat) && succeeded(map) ? b.gather(*flat, *map, 0) : flat;
  Result dataRows = b.reshape(data, rowShape);
  Result mask = b.constant(DenseElementsAttr::get(
      RankedTensorType::get(maskShape, b.getBuilder().getI1Type()), ArrayRef<bool>(written)));
  if (failed(gathered) || failed(dataRows) || failed(mask))
    return failure();
  Result scattered = b.select(*mask, *gathered, *dataRows);
  return node.setResult(0, succeeded(scattered) ? b.reshape(*scattered, shape) : scattered);
}

/// GatherND: each index tuple (the last axis of `indices`) names a slice
/// of `data`; with batch_dims b, tuples index within their own batch. As one
/// kiln.gather along axis 0 of `data` with its batch dimensions and the
/// tuple's dimensions flattened into one, at the flat position
/// batch * (rows per batch) + sum(index[j] * stride[j]) (negative indices
/// counted from the end, run-time ones outside their dimension clamped into
/// it), computed from the indices (folded when they are known at import, as
/// torch's index with constant index tensors has them).
LogicalResult convertGatherND(OnnxNode &node) {
  FailureOr<int64_t> batchDims = node.getIntAttr("batch_dims", 0);
  if (failed(batchDims))
    return failure();
  Value data = node.getInput(0), indices = node.getInput(1);
  FailureOr<ArrayRef<int64_t>> dataShape = node.getStaticShape(data, "data");
  FailureOr<ArrayRef<int64_t>> indexShape = node.getStaticShape(indices, "indices");
  if (failed(dataShape) || failed(indexShape))
    return failure();
  Type indexType = getElementTypeOrSelf(indices);
  if (!indexType.isInteger(64) && !indexType.isInteger(32))
    return node.emitError() << "expects int32 or int64 indices, got " << indexType;
  int64_t r = dataShape->size(), q = indexShape->size(), b = *batchDims;
  int64_t k = q ? indexShape->back() : 0;
  if (q < 1 || b < 0 || b >= std::min(r, q) || k < 1 || k > r - b)
    return node.emitError() << "expects batch_dims below the ranks and index tuples of 1 to "
                               "rank - batch_dims elements, got data "
                            << formatIntList(*dataShape) << ", indices "
                            << formatIntList(*indexShape) << ", batch_dims " << b;
  if (llvm::is_contained(*dataShape, 0) || llvm::is_contained(*indexShape, 0))
    return node.emitError() << "gathers from or at an empty tensor (data "
                            << formatIntList(*dataShape) << ", indices "
                            << formatIntList(*indexShape) << ")";
  for (int64_t d = 0; d < b; ++d)
    if ((*dataShape)[d] != (*indexShape)[d])
      return node.emitError() << "expects the batch dimensions of data and indices to match, "
                                 "got " << formatIntList(*dataShape) << " and "
                              << formatIntList(*indexShape);
  // Indices known at import time must lie within the dimensions they index.
  if (DenseElementsAttr known = node.getConstantInput(1)) {
    int64_t at = 0;
    for (const APInt &value : known.getValues<APInt>()) {
      int64_t size = (*dataShape)[b + at % k], index = value.getSExtValue();
      if (index < -size || index >= size)
        return node.emitError() << "has index " << index << " out of range [" << -size << ", "
                                << size << ") for dimension " << b + at % k;
      ++at;
    }
  }
  KilnOpBuilder &bld = node.getBuilder();
  Type i64 = bld.getBuilder().getI64Type();
  Result flat = indexType.isInteger(64) ? Result(indices) : bld.cast(indices, i64);
  if (failed(flat))
    return failure();
  // sum(index[j] * stride[j]) over the tuple: [..., k] -> [..., 1].
  SmallVector<int64_t> tupleShape(indexShape->begin(), indexShape->end() - 1);
  int64_t tuples = 1;
  for (int64_t size : tupleShape)
    tuples *= size;
  SmallVector<int64_t> strides(k), sizes(k);
  int64_t rowsPerBatch = 1;
  for (int64_t j = k - 1; j >= 0; --j) {
    sizes[j] = (*dataShape)[b + j];
    strides[j] = rowsPerBatch;
    rowsPerBatch *= sizes[j];
  }
  auto perTuple = [&](ArrayRef<int64_t> values) {
    SmallVector<int64_t> repeated;
    for (int64_t t = 0; t < tuples; ++t)
      repeated.append(values.begin(), values.end());
    return int64Constant(bld, *indexShape, repeated);
  };
  SmallVector<int64_t> lasts;
  for (int64_t size : sizes)
    lasts.push_back(size - 1);
  Result size = perTuple(sizes), stride = perTuple(strides), lastIndex = perTuple(lasts);
  if (failed(size) || failed(stride) || failed(lastIndex))
    return failure();
  Result zero = bld.splatLike(*size, 0);
  Result negative = succeeded(zero) ? bld.compare(ComparePredicate::lt, *flat, *zero) : zero;
  Result wrapped = succeeded(negative) ? bld.binary<AddOp>(*flat, *size) : negative;
  Result index = succeeded(wrapped) ? bld.select(*negative, *wrapped, *flat) : wrapped;
  // A run-time index outside its dimension is clamped into it, as
  // kiln.gather clamps (it never reads into a neighbouring row).
  Result below = succeeded(index) ? bld.compare(ComparePredicate::lt, *index, *zero) : index;
  index = succeeded(below) ? bld.select(*below, *zero, *index) : below;
  Result above = succeeded(index) ? bld.compare(ComparePredicate::gt, *index, *lastIndex) : index;
  index = succeeded(above) ? bld.select(*above, *lastIndex, *index) : above;
  Result scaled = succeeded(index) ? bld.binary<MulOp>(*index, *stride) : index;
  Result position = succeeded(scaled) ? bld.reduce<ReduceSumOp>(*scaled, {q - 1}, false)
                                      : scaled;
  if (failed(position))
    return failure();
  // Batch t's rows start at t * rowsPerBatch.
  int64_t batches = 1;
  for (int64_t d = 0; d < b; ++d)
    batches *= (*dataShape)[d];
  if (b > 0) {
    int64_t perBatch = tuples / batches;
    SmallVector<int64_t> starts;
    for (int64_t t = 0; t < tuples; ++t)
      starts.push_back(t / perBatch * rowsPerBatch);
    Result offset = int64Constant(bld, tupleShape, starts);
    position = succeeded(offset) ? bld.binary<AddOp>(*position, *offset) : offset;
    if (failed(position))
      return failure();
  }
  SmallVector<int64_t> rowsShape = {batches * rowsPerBatch};
  rowsShape.append(dataShape->begin() + b + k, dataShape->end());
  Result rows = bld.reshape(data, rowsShape);
  Result gathered = succeeded(rows) ? bld.gather(*rows, *position, 0) : rows;
  return node.setResult(0, gathered);
}

constexpr OnnxOpConversion kPositionOps[] = {
    {"TopK", 1, 2, 2, "axis largest sorted k", convertTopK},
    {"GatherND", 2, 2, 1, "batch_dims", convertGatherND, 11},
    {"ScatterElements", 3, 3, 1, "axis reduction", convertScatterElements, 11},
    {"ScatterND", 3, 3, 1, "reduction", convertScatterND, 11},
    {"ArgMax", 1, 1, 1, "axis keepdims select_last_index", convertArgExtreme<false>},
    {"ArgMin", 1, 1, 1, "axis keepdims select_last_index", convertArgExtreme<true>},
    {"CumSum", 2, 2, 1, "exclusive reverse", convertCumSum, 11},
    {"OneHot", 3, 3, 1, "axis", convertOneHot, 9},
    {"DepthToSpace", 1, 1, 1, "blocksize mode", convertDepthSpace<true>},
    {"SpaceToDepth", 1, 1, 1, "blocksize", convertDepthSpace<false>},
};

} // namespace

ArrayRef<OnnxOpConversion> getOnnxPositionOps() { return kPositionOps; }

} // namespace kiln
