//===- TfPositionOps.cpp - TensorFlow ops over element positions ----------===//
//
// ArgMax and ArgMin (keras.ops.argmax), TopKV2 (keras.ops.top_k and sort,
// sparsemax), OneHot (keras.ops.one_hot, CategoryEncoding), Cumsum,
// MatrixBandPart (keras.ops.triu/tril, MultiHeadAttention's causal mask),
// Bucketize (Discretization) and DenseBincount (CategoryEncoding's count and
// multi_hot).
// The first four build on compiler/Import/Positions.cpp, shared with ONNX;
// axes, K, depth, the on and off values and the band's widths must be known
// at import time.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/TensorFlow/TfOps.h"

#include "compiler/Import/DiagnosticText.h"
#include "compiler/Import/Positions.h"
#include "compiler/Import/TensorFlow/TfTensor.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace kiln {
namespace {

using Result = KilnOpBuilder::Result;

/// `value` (int64) as the integer type attribute `name` says (int32 unless
/// `int64ByDefault`).
Result asIndexType(TfNode &node, Result value, StringRef name, bool int64ByDefault) {
  if (failed(value))
    return value;
  int type = int64ByDefault ? tensorflow::DT_INT64 : tensorflow::DT_INT32;
  if (node.getAttr(name)) {
    FailureOr<int> given = node.getTypeAttr(name);
    if (failed(given))
      return failure();
    type = *given;
  }
  if (type == tensorflow::DT_INT64)
    return value;
  if (type != tensorflow::DT_INT32)
    return node.emitError() << "expects attribute '" << name << "' int32 or int64";
  return node.getBuilder().cast(*value, node.getBuilder().getBuilder().getI32Type());
}

/// ArgMax and ArgMin(input, dimension): the first position of the extreme.
template <bool Minimum> LogicalResult convertArgExtreme(TfNode &node) {
  Value x = node.getInput(0);
  if (failed(node.requireNumeric(x, "an input")))
    return failure();
  FailureOr<ArrayRef<int64_t>> shape = node.getStaticShape(x, "an input");
  if (failed(shape))
    return failure();
  FailureOr<int64_t> axis = node.getConstantAxis(1, shape->size());
  if (failed(axis))
    return failure();
  Result position = buildArgExtreme(node.getBuilder(), x, *axis, Minimum,
                                    /*lastIndex=*/false, /*keepDims=*/false);
  return node.setResult(0, asIndexType(node, position, "output_type", true));
}

/// TopKV2(input, k): the k largest along the last axis, sorted (also when
/// `sorted` is false, which leaves the order to the implementation), and
/// their positions.
LogicalResult convertTopK(TfNode &node) {
  Value x = node.getInput(0);
  if (failed(node.requireFloat(x, "an input")))
    return failure();
  FailureOr<ArrayRef<int64_t>> shape = node.getStaticShape(x, "an input");
  FailureOr<SmallVector<int64_t>> given = node.getConstantInts(1, "k");
  FailureOr<bool> sorted = node.getBoolAttr("sorted", true);
  if (failed(shape) || failed(given) || failed(sorted))
    return failure();
  if (shape->empty())
    return node.emitError() << "expects an input of rank >= 1";
  int64_t n = shape->back();
  if (given->size() != 1 || given->front() < 1 || given->front() > n ||
      given->front() > kMaxTopK)
    return node.emitError() << "takes k = " << formatIntList(*given) << " of " << n
                            << " elements; kiln's TopK takes 1 to " << kMaxTopK
                            << " and at most the last dimension's size";
  FailureOr<std::pair<Value, Value>> top =
      buildTopK(node.getBuilder(), x, shape->size() - 1, given->front(), /*largest=*/true);
  if (failed(top) || failed(node.setResult(0, top->first)))
    return failure();
  return node.setResult(1, asIndexType(node, top->second, "index_type", false));
}

/// A scalar constant input (depth, on_value, off_value).
FailureOr<Attribute> readScalar(TfNode &node, unsigned i, StringRef what) {
  DenseElementsAttr value = node.getConstantInput(i);
  if (!value || value.getNumElements() != 1)
    return node.emitError() << "expects input #" << i << " (" << what
                            << ") to be one value known at import time";
  return *value.value_begin<Attribute>();
}

/// OneHot(indices, depth, on_value, off_value): on_value at each index's
/// position along the new dimension `axis`, off_value elsewhere; an index
/// outside [0, depth) (negative included) gives off_value throughout.
LogicalResult convertOneHot(TfNode &node) {
  Value indices = node.getInput(0);
  Type indexType = getElementTypeOrSelf(indices.getType());
  if (!indexType.isInteger(32) && !indexType.isInteger(64))
    return node.emitError() << "expects int32 or int64 indices, got " << indexType;
  FailureOr<ArrayRef<int64_t>> shape = node.getStaticShape(indices, "indices");
  FailureOr<int64_t> axisAttr = node.getIntAttr("axis", -1);
  FailureOr<SmallVector<int64_t>> depth = node.getConstantInts(1, "depth");
  if (failed(shape) || failed(axisAttr) || failed(depth))
    return failure();
  FailureOr<Attribute> on = readScalar(node, 2, "on_value");
  if (failed(on))
    return failure();
  FailureOr<Attribute> off = readScalar(node, 3, "off_value");
  if (failed(off))
    return failure();
  if (depth->size() != 1 || depth->front() < 1 || depth->front() > (int64_t(1) << 24))
    return node.emitError() << "expects a depth in [1, 2^24], got " << formatIntList(*depth);
  auto rank = static_cast<int64_t>(shape->size());
  if (*axisAttr < -1 || *axisAttr > rank)
    return node.emitError() << "expects axis -1 or in [0, " << rank << "], got " << *axisAttr;
  Type valueType = llvm::cast<TypedAttr>(*on).getType();
  if (llvm::cast<TypedAttr>(*off).getType() != valueType ||
      (!llvm::isa<FloatType>(valueType) && !llvm::isa<IntegerType>(valueType)))
    return node.emitError() << "expects on_value and off_value of one float or integer type";
  int64_t axis = *axisAttr < 0 ? rank : *axisAttr;
  return node.setResult(0, buildOneHot(node.getBuilder(), indices, depth->front(), axis, *on,
                                       *off, /*wrapNegative=*/false));
}

/// Cumsum(x, axis), `exclusive` and `reverse` as ONNX's CumSum.
LogicalResult convertCumsum(TfNode &node) {
  Value x = node.getInput(0);
  if (failed(node.requireNumeric(x, "an input")))
    return failure();
  FailureOr<ArrayRef<int64_t>> shape = node.getStaticShape(x, "an input");
  FailureOr<bool> exclusive = node.getBoolAttr("exclusive", false);
  FailureOr<bool> reverse = node.getBoolAttr("reverse", false);
  if (failed(shape) || failed(exclusive) || failed(reverse))
    return failure();
  FailureOr<int64_t> axis = node.getConstantAxis(1, shape->size());
  if (failed(axis))
    return failure();
  return node.setResult(0, buildCumSum(node.getBuilder(), x, *axis, *exclusive, *reverse));
}

/// MatrixBandPart(input, num_lower, num_upper): each [M, N] matrix of the
/// last two dimensions kept where row - column <= num_lower and column -
/// row <= num_upper (a negative width keeps that whole triangle), zeros
/// elsewhere: a select by a constant mask.
LogicalResult convertMatrixBandPart(TfNode &node) {
  Value x = node.getInput(0);
  FailureOr<ArrayRef<int64_t>> shape = node.getStaticShape(x, "an input");
  FailureOr<SmallVector<int64_t>> lower = node.getConstantInts(1, "num_lower");
  FailureOr<SmallVector<int64_t>> upper =
      succeeded(lower) ? node.getConstantInts(2, "num_upper") : lower;
  if (failed(shape) || failed(lower) || failed(upper))
    return failure();
  if (shape->size() < 2)
    return node.emitError() << "expects an input of rank >= 2, got shape "
                            << formatIntList(*shape);
  if (lower->size() != 1 || upper->size() != 1)
    return node.emitError() << "expects one num_lower and one num_upper";
  int64_t m = (*shape)[shape->size() - 2], n = shape->back();
  if (m * n > (int64_t(1) << 24))
    return node.emitError() << "takes [" << m << ", " << n
                            << "] matrices; kiln's band mask holds at most 2^24 elements";
  int64_t below = lower->front(), above = upper->front();
  SmallVector<bool> keep;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      keep.push_back((below < 0 || i - j <= below) && (above < 0 || j - i <= above));
  KilnOpBuilder &b = node.getBuilder();
  auto maskType = RankedTensorType::get({m, n}, b.getBuilder().getI1Type());
  Result mask = b.constant(DenseElementsAttr::get(maskType, ArrayRef<bool>(keep)));
  Result zeros = b.splatLike(x, 0);
  if (failed(mask) || failed(zeros))
    return failure();
  return node.setResult(0, b.select(*mask, x, *zeros));
}

/// Bucketize(input): how many of the sorted `boundaries` each value is at
/// or above (Keras' Discretization), as int32: the boundaries x is not below
/// along a new last axis, counted (a NaN is below none, as TensorFlow's
/// upper_bound has it: all of them).
LogicalResult convertBucketize(TfNode &node) {
  Value x = node.getInput(0);
  if (failed(node.requireNumeric(x, "an input")))
    return failure();
  FailureOr<ArrayRef<int64_t>> shape = node.getStaticShape(x, "an input");
  FailureOr<std::optional<SmallVector<float>>> boundaries = node.getFloatsAttr("boundaries");
  if (failed(shape) || failed(boundaries))
    return failure();
  if (!*boundaries || (*boundaries)->empty() || (*boundaries)->size() > 4096 ||
      !llvm::is_sorted(**boundaries))
    return node.emitError() << "expects 1 to 4096 sorted boundaries";
  KilnOpBuilder &b = node.getBuilder();
  Type f32 = b.getBuilder().getF32Type();
  auto count = static_cast<int64_t>((*boundaries)->size());
  SmallVector<int64_t> column(*shape);
  column.push_back(1);
  Result value = getElementTypeOrSelf(x.getType()) == f32 ? Result(x) : b.cast(x, f32);
  Result values = succeeded(value) ? b.reshape(*value, column) : value;
  Result edges = b.constant(DenseElementsAttr::get(RankedTensorType::get({count}, f32),
                                                   ArrayRef<float>(**boundaries)));
  if (failed(values) || failed(edges))
    return failure();
  Result below = b.compare(ComparePredicate::lt, *values, *edges);
  Result one = b.constant(DenseElementsAttr::get(RankedTensorType::get({}, f32), 1.0f));
  Result zero = b.constant(DenseElementsAttr::get(RankedTensorType::get({}, f32), 0.0f));
  Result counted = succeeded(below) && succeeded(one) && succeeded(zero)
                       ? b.select(*below, *zero, *one) : Result(failure());
  Result buckets = succeeded(counted)
                       ? b.reduce<ReduceSumOp>(*counted, {static_cast<int64_t>(shape->size())},
                                               false)
                       : counted;
  return node.setResult(0, succeeded(buckets) ? b.cast(*buckets, b.getBuilder().getI32Type())
                                              : buckets);
}

/// DenseBincount(input, size, weights): per row of ids (rank 1 or 2), how
/// often each of [0, size) occurs, or with `binary_output` whether it does
/// (Keras' CategoryEncoding count and multi_hot): one-hot rows summed (or
/// their max). Ids outside [0, size) count nowhere; weights must be empty.
LogicalResult convertDenseBincount(TfNode &node) {
  Value ids = node.getInput(0);
  Type idType = getElementTypeOrSelf(ids.getType());
  if (!idType.isInteger(32) && !idType.isInteger(64))
    return node.emitError() << "expects int32 or int64 ids, got " << idType;
  FailureOr<ArrayRef<int64_t>> shape = node.getStaticShape(ids, "ids");
  FailureOr<SmallVector<int64_t>> size = node.getConstantInts(1, "size");
  FailureOr<bool> binary = node.getBoolAttr("binary_output", false);
  FailureOr<int> type = node.getTypeAttr("T");
  if (failed(shape) || failed(size) || failed(binary) || failed(type))
    return failure();
  if (shape->empty() || shape->size() > 2)
    return node.emitError() << "expects ids of rank 1 or 2, got shape " << formatIntList(*shape);
  if (size->size() != 1 || size->front() < 1 || size->front() > (int64_t(1) << 24))
    return node.emitError() << "expects a size in [1, 2^24], got " << formatIntList(*size);
  DenseElementsAttr weights = node.getConstantInput(2);
  if (!weights || weights.getNumElements() != 0)
    return node.emitError() << "takes weights; kiln counts without (empty weights)";
  KilnOpBuilder &b = node.getBuilder();
  Type f32 = b.getBuilder().getF32Type();
  Type countType = getTfElementType(*node.getContext(), *type);
  if (!countType || countType.isInteger(1))
    return node.emitError() << "expects counts (T) of a float or integer type, got "
                            << getTfDataTypeName(*type);
  Result hot = buildOneHot(b, ids, size->front(), static_cast<int64_t>(shape->size()),
                           FloatAttr::get(f32, 1.0), FloatAttr::get(f32, 0.0),
                           /*wrapNegative=*/false);
  if (failed(hot))
    return failure();
  // Counted in float32 (exact below 2^24), then in T.
  int64_t listAxis = static_cast<int64_t>(shape->size()) - 1;
  Result counts = *binary ? b.reduce<ReduceMaxOp>(*hot, {listAxis}, false)
                          : b.reduce<ReduceSumOp>(*hot, {listAxis}, false);
  if (succeeded(counts) && countType != f32)
    counts = b.cast(*counts, countType);
  return node.setResult(0, counts);
}

const TfOpConversion kPositionOps[] = {
    {"ArgMax", 2, 2, "T Tidx output_type", convertArgExtreme<false>},
    {"ArgMin", 2, 2, "T Tidx output_type", convertArgExtreme<true>},
    {"TopKV2", 2, 2, "T Tk sorted index_type", convertTopK},
    {"OneHot", 4, 4, "T TI axis", convertOneHot},
    {"Cumsum", 2, 2, "T Tidx exclusive reverse", convertCumsum},
    {"MatrixBandPart", 3, 3, "T Tindex", convertMatrixBandPart},
    {"Bucketize", 1, 1, "T boundaries", convertBucketize},
    {"DenseBincount", 3, 3, "Tidx T binary_output", convertDenseBincount},
};

} // namespace

ArrayRef<TfOpConversion> getTfPositionOps() { return kPositionOps; }

} // namespace kiln
