//===- TfStridedSlice.cpp - TensorFlow's StridedSlice ---------------------===//
//
// StridedSlice(input, begin, end, strides) with its five masks, resolved at
// import time into one strided range per input dimension (TensorFlow's own
// rules: negative indices count from the end, bounds clamp, the ellipsis
// covers the dimensions the spec leaves out, new axes insert a 1, shrunk
// axes drop one). A constant input is sliced at import time (the shape
// arithmetic of Shape -> StridedSlice -> Pack); a tensor becomes kiln.slice
// (a negative stride reads the same elements forwards, then a gather
// reverses them) and a reshape to the result's shape.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/TensorFlow/TfOps.h"

#include "compiler/Import/TensorFlow/TfTensor.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace kiln {
namespace {

using Result = KilnOpBuilder::Result;

constexpr int64_t kNewAxis = -1;
constexpr int64_t kShrunkAxis = -2;

struct SliceMasks {
  int64_t begin = 0, end = 0, ellipsis = 0, newAxis = 0, shrink = 0;
};

/// One strided range per input dimension and the result's shape.
struct DenseSlice {
  SmallVector<int64_t> begin, stride, size;
  SmallVector<int64_t> resultShape;
};

bool bit(int64_t mask, int64_t i) { return i < 64 && ((mask >> i) & 1); }

/// The size of a range from `first` to `last` (exclusive) by `stride`.
int64_t rangeSize(int64_t first, int64_t last, int64_t stride) {
  int64_t interval = last - first;
  if (interval == 0 || (interval < 0) != (stride < 0))
    return 0;
  return interval / stride + (interval % stride != 0);
}

FailureOr<DenseSlice> resolve(TfNode &node, ArrayRef<int64_t> shape,
                              ArrayRef<int64_t> begin, ArrayRef<int64_t> end,
                              ArrayRef<int64_t> strides, SliceMasks masks) {
  int64_t n = begin.size(), rank = shape.size();
  if (static_cast<int64_t>(end.size()) != n ||
      static_cast<int64_t>(strides.size()) != n)
    return node.emitError()
           << "expects begin, end and strides of one length, "
              "got "
           << n << ", " << end.size() << " and " << strides.size();
  if (n >= 64)
    return node.emitError()
           << "expects fewer than 64 slice dimensions, got " << n;
  // Where the ellipsis is (an implicit one after the spec if none), and how
  // many new axes follow it.
  int64_t newAxesAfterEllipsis = 0, ellipses = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (ellipses && bit(masks.newAxis, i))
      ++newAxesAfterEllipsis;
    if (bit(masks.ellipsis, i))
      ++ellipses;
  }
  if (ellipses > 1)
    return node.emitError()
           << "has " << ellipses
           << " ellipses in ellipsis_mask; at most one is allowed";
  int64_t ellipsisMask = masks.ellipsis, sparse = n;
  if (!ellipses)
    ellipsisMask |= int64_t(1) << sparse++;

  DenseSlice slice;
  SmallVector<int64_t> first(rank, 0), last(rank, 0), gather;
  SmallVector<bool> beginMasked(rank, true), endMasked(rank, true),
      shrunk(rank, false);
  slice.stride.assign(rank, 1);
  int64_t full = 0;
  for (int64_t i = 0; i < sparse; ++i) {
    if (bit(ellipsisMask, i)) {
      int64_t next =
          std::min(rank - (sparse - i) + 1 + newAxesAfterEllipsis, rank);
      for (; full < next; ++full)
        gather.push_back(full);
    } else if (bit(masks.newAxis, i)) {
      gather.push_back(kNewAxis);
    } else {
      if (full == rank)
        return node.emitError()
               << "slices " << n << " dimensions of an input of rank " << rank;
      first[full] = begin[i];
      last[full] = end[i];
      slice.stride[full] = strides[i];
      beginMasked[full] = bit(masks.begin, i);
      endMasked[full] = bit(masks.end, i);
      shrunk[full] = bit(masks.shrink, i);
      gather.push_back(shrunk[full] ? kShrunkAxis : full);
      ++full;
    }
  }

  for (int64_t d = 0; d < rank; ++d) {
    int64_t stride = slice.stride[d], dim = shape[d];
    if (stride == 0)
      return node.emitError() << "has stride 0 in dimension " << d;
    if (shrunk[d]) {
      int64_t index = first[d] < 0 ? first[d] + dim : first[d];
      if (index < 0 || index >= dim)
        return node.emitError()
               << "index " << first[d] << " is out of range of "
               << "dimension " << d << " of size " << dim;
      slice.begin.push_back(index);
      slice.stride[d] = 1;
      slice.size.push_back(1);
      continue;
    }
    // Forwards, [0, dim]; backwards, [-1, dim - 1].
    int64_t low = stride > 0 ? 0 : -1, high = stride > 0 ? dim : dim - 1;
    auto canonical = [&](int64_t x, bool masked, bool isBegin) {
      if (masked)
        return (stride > 0) == isBegin ? low : high;
      int64_t forward = x < 0 ? x + dim : x;
      return std::clamp(forward, low, high);
    };
    int64_t from = canonical(first[d], beginMasked[d], true);
    int64_t to = canonical(last[d], endMasked[d], false);
    slice.begin.push_back(from);
    slice.size.push_back(rangeSize(from, to, stride));
  }
  for (int64_t g : gather) {
    if (g == kNewAxis)
      slice.resultShape.push_back(1);
    else if (g != kShrunkAxis)
      slice.resultShape.push_back(slice.size[g]);
  }
  return slice;
}

/// The slice of a constant, at import time.
DenseElementsAttr sliceConstant(DenseElementsAttr value,
                                const DenseSlice &slice) {
  ArrayRef<int64_t> shape = value.getType().getShape();
  int64_t rank = shape.size();
  SmallVector<Attribute> source(value.getValues<Attribute>());
  SmallVector<int64_t> strides(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  SmallVector<Attribute> elements;
  int64_t count = *staticElementCount(slice.size);
  SmallVector<int64_t> index(rank, 0);
  for (int64_t n = 0; n < count; ++n) {
    int64_t offset = 0;
    for (int64_t d = 0; d < rank; ++d)
      offset += (slice.begin[d] + index[d] * slice.stride[d]) * strides[d];
    elements.push_back(value.isSplat() ? source.front() : source[offset]);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < slice.size[d])
        break;
      index[d] = 0;
    }
  }
  auto type = RankedTensorType::get(slice.resultShape, value.getElementType());
  return DenseElementsAttr::get(type, elements);
}

Result sliceTensor(TfNode &node, Value x, const DenseSlice &slice) {
  KilnOpBuilder &b = node.getBuilder();
  int64_t rank = slice.size.size();
  SmallVector<int64_t> start(rank), limit(rank), step(rank);
  SmallVector<int64_t> reversed;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t first = slice.begin[d], stride = slice.stride[d],
            size = slice.size[d];
    if (size == 0) {
      start[d] = limit[d] = 0;
      step[d] = 1;
    } else if (stride > 0) {
      start[d] = first;
      limit[d] = first + (size - 1) * stride + 1;
      step[d] = stride;
    } else {
      // The same elements read forwards from the last one, then reversed.
      start[d] = first + (size - 1) * stride;
      limit[d] = first + 1;
      step[d] = -stride;
      if (size > 1)
        reversed.push_back(d);
    }
  }
  Result result = b.slice(x, start, limit, step);
  for (int64_t d : reversed)
    if (succeeded(result))
      result = b.reverse(*result, d);
  if (failed(result))
    return failure();
  return b.reshape(*result, slice.resultShape);
}

} // namespace

LogicalResult convertStridedSlice(TfNode &node) {
  FailureOr<SmallVector<int64_t>> begin = node.getConstantInts(1, "begin");
  FailureOr<SmallVector<int64_t>> end = node.getConstantInts(2, "end");
  FailureOr<SmallVector<int64_t>> strides = node.getConstantInts(3, "strides");
  SliceMasks masks;
  FailureOr<int64_t> beginMask = node.getIntAttr("begin_mask", 0);
  FailureOr<int64_t> endMask = node.getIntAttr("end_mask", 0);
  FailureOr<int64_t> ellipsisMask = node.getIntAttr("ellipsis_mask", 0);
  FailureOr<int64_t> newAxisMask = node.getIntAttr("new_axis_mask", 0);
  FailureOr<int64_t> shrinkMask = node.getIntAttr("shrink_axis_mask", 0);
  if (failed(begin) || failed(end) || failed(strides) || failed(beginMask) ||
      failed(endMask) || failed(ellipsisMask) || failed(newAxisMask) ||
      failed(shrinkMask))
    return failure();
  masks = {*beginMask, *endMask, *ellipsisMask, *newAxisMask, *shrinkMask};
  DenseElementsAttr constant = node.getConstantInput(0);
  ArrayRef<int64_t> shape = constant ? constant.getType().getShape()
                                     : KilnOpBuilder::shapeOf(node.getInput(0));
  FailureOr<DenseSlice> slice =
      resolve(node, shape, *begin, *end, *strides, masks);
  if (failed(slice))
    return failure();
  if (constant) {
    node.setConstantResult(0, sliceConstant(constant, *slice));
    return success();
  }
  return node.setResult(0, sliceTensor(node, node.getInput(0), *slice));
}

} // namespace kiln
