//===- SliceGradients.cpp - One gradient from many slices' ----------------===//

#include "passes/Graph/SliceGradients.h"

#include <algorithm>

using namespace mlir;

namespace kiln {
namespace {

/// A slice's extent along `axis`, when it reads all of every other
/// dimension of `shape`.
std::optional<std::pair<int64_t, int64_t>> extentAlong(SliceOp slice, ArrayRef<int64_t> shape,
                                                       size_t axis) {
  for (size_t d = 0; d < shape.size(); ++d)
    if (d != axis && (slice.getStart()[d] != 0 || slice.getLimit()[d] != shape[d]))
      return std::nullopt;
  return std::make_pair(slice.getStart()[axis], slice.getLimit()[axis]);
}

/// The padded-and-summed gradient (a slice's own rule, for each part).
Value padAndSum(Value operand, ArrayRef<SliceGradient> parts, GradientBuilder &gb) {
  RankedTensorType type = tensorType(operand);
  Value sum;
  for (SliceGradient part : parts) {
    SmallVector<int64_t> low, high, interior(type.getRank(), 0);
    for (int64_t d = 0; d < type.getRank(); ++d) {
      low.push_back(part.slice.getStart()[d]);
      high.push_back(type.getDimSize(d) - part.slice.getLimit()[d]);
    }
    Value padded =
        gb.builder().create<PadOp>(gb.location(), type, part.grad, low, high, interior);
    sum = sum ? gb.add(sum, padded) : padded;
  }
  return sum;
}

} // namespace

bool isTileableSlice(SliceOp slice) {
  return llvm::all_of(slice.getStep(), [](int64_t step) { return step == 1; });
}

Value combineSliceGradients(Value operand, ArrayRef<SliceGradient> parts, GradientBuilder &gb) {
  RankedTensorType type = tensorType(operand);
  ArrayRef<int64_t> shape = type.getShape();
  if (parts.size() < 2)
    return padAndSum(operand, parts, gb);
  for (size_t axis = 0; axis < shape.size(); ++axis) {
    // (start, limit, gradient) of each part, identical extents merged.
    SmallVector<std::tuple<int64_t, int64_t, Value>> pieces;
    bool tiles = true;
    for (SliceGradient part : parts) {
      std::optional<std::pair<int64_t, int64_t>> extent = extentAlong(part.slice, shape, axis);
      if (!extent) {
        tiles = false;
        break;
      }
      pieces.emplace_back(extent->first, extent->second, part.grad);
    }
    if (!tiles)
      continue;
    llvm::stable_sort(pieces, [](const auto &a, const auto &b) {
      return std::get<0>(a) < std::get<0>(b);
    });
    SmallVector<Value> ordered;
    int64_t covered = 0;
    for (size_t i = 0; i < pieces.size() && tiles; ++i) {
      auto [start, limit, grad] = pieces[i];
      if (i > 0 && start == std::get<0>(pieces[i - 1]) && limit == std::get<1>(pieces[i - 1])) {
        ordered.back() = gb.add(ordered.back(), grad);
        continue;
      }
      if (start < covered) {
        tiles = false; // overlapping slices
        break;
      }
      if (start > covered) {
        SmallVector<int64_t> gapShape(shape);
        gapShape[axis] = start - covered;
        ordered.push_back(gb.splat(RankedTensorType::get(gapShape, type.getElementType()), 0));
      }
      ordered.push_back(grad);
      covered = limit;
    }
    if (!tiles)
      continue;
    if (covered < shape[axis]) {
      SmallVector<int64_t> gapShape(shape);
      gapShape[axis] = shape[axis] - covered;
      ordered.push_back(gb.splat(RankedTensorType::get(gapShape, type.getElementType()), 0));
    }
    if (ordered.size() == 1)
      return ordered.front();
    return gb.builder().create<ConcatOp>(gb.location(), ordered, axis);
  }
  return padAndSum(operand, parts, gb);
}

} // namespace kiln
