//===- Padding.cpp - Padding a tensor from kiln ops -----------------------===//

#include "compiler/Import/Padding.h"

#include "compiler/Import/DiagnosticText.h"

#include "mlir/IR/TypeUtilities.h"

#include <algorithm>

using namespace mlir;

namespace kiln {
namespace {

using Result = KilnOpBuilder::Result;

const char *modeName(PadMode mode) {
  switch (mode) {
  case PadMode::Constant:
    return "constant";
  case PadMode::Reflect:
    return "reflect";
  case PadMode::Symmetric:
    return "symmetric";
  case PadMode::Edge:
    return "edge";
  case PadMode::Wrap:
    return "wrap";
  }
  return "";
}

/// The input index output index `i` (counted from the first padded element)
/// reads along a dimension of `size` padded by `before`.
int64_t sourceIndex(PadMode mode, int64_t i, int64_t before, int64_t size) {
  int64_t j = i - before;
  switch (mode) {
  case PadMode::Reflect: {
    // Mirror without repeating the edge: period 2 (size - 1).
    int64_t period = 2 * (size - 1);
    if (period == 0)
      return 0;
    int64_t k = ((j % period) + period) % period;
    return k < size ? k : period - k;
  }
  case PadMode::Symmetric: {
    // Mirror repeating the edge: period 2 size.
    int64_t period = 2 * size;
    int64_t k = ((j % period) + period) % period;
    return k < size ? k : period - 1 - k;
  }
  case PadMode::Edge:
    return std::clamp<int64_t>(j, 0, size - 1);
  case PadMode::Wrap:
    return ((j % size) + size) % size;
  case PadMode::Constant:
    break;
  }
  return j;
}

/// `x` padded along `axis` by `before` and `after` (both ≥ 0).
Result padAxis(ImportNode &node, Value x, int64_t axis, int64_t before, int64_t after,
               PadMode mode, Attribute value) {
  KilnOpBuilder &b = node.getBuilder();
  ArrayRef<int64_t> shape = KilnOpBuilder::shapeOf(x);
  int64_t size = shape[axis];
  if (mode == PadMode::Constant) {
    SmallVector<Value> parts;
    for (int64_t count : {before, int64_t(-1), after}) {
      if (count == -1) {
        parts.push_back(x);
        continue;
      }
      if (count == 0)
        continue;
      SmallVector<int64_t> blockShape(shape);
      blockShape[axis] = count;
      auto type = RankedTensorType::get(blockShape, getElementTypeOrSelf(x.getType()));
      Result block = b.constant(SplatElementsAttr::get(type, value));
      if (failed(block))
        return failure();
      parts.push_back(*block);
    }
    return parts.size() == 1 ? Result(parts.front()) : b.concat(parts, axis);
  }
  int64_t widest = mode == PadMode::Reflect ? size - 1 : size;
  if ((mode == PadMode::Reflect || mode == PadMode::Symmetric) &&
      (before > widest || after > widest))
    return node.emitError() << "pads dimension " << axis << " of size " << size << " by "
                            << before << " and " << after << " in " << modeName(mode)
                            << " mode, which reflects at most " << widest;
  if (size == 0)
    return node.emitError() << "pads dimension " << axis << " of size 0 in a mode that "
                               "reads the input";
  SmallVector<int64_t> indices;
  for (int64_t i = 0; i < before + size + after; ++i)
    indices.push_back(sourceIndex(mode, i, before, size));
  auto indexType = RankedTensorType::get({static_cast<int64_t>(indices.size())},
                                         b.getBuilder().getI64Type());
  Result ids = b.constant(DenseElementsAttr::get(indexType, ArrayRef<int64_t>(indices)));
  return succeeded(ids) ? b.gather(x, *ids, axis) : ids;
}

} // namespace

FailureOr<Value> buildPad(ImportNode &node, Value x, ArrayRef<int64_t> axes,
                          ArrayRef<int64_t> before, ArrayRef<int64_t> after, PadMode mode,
                          Attribute value) {
  // The result's size first: no dimension emptied, at most 2^24 added per
  // side (checked before the sum, which could overflow), at most 2^20 per
  // dimension read through an index table (every mode but constant), at
  // most 2^31 elements. Each axis is padded once, so the checks hold as the
  // pads are built.
  SmallVector<int64_t> resultShape(KilnOpBuilder::shapeOf(x));
  for (auto [axis, low, high] : llvm::zip(axes, before, after)) {
    int64_t size = resultShape[axis];
    if (low < -size || high < -size || low > (int64_t(1) << 24) || high > (int64_t(1) << 24) ||
        low + high + size < 1)
      return node.emitError() << "pads dimension " << axis << " of size " << size << " by "
                              << low << " and " << high
                              << ", which leaves no element or more than 2^24 more";
    int64_t grown = size + low + high;
    if (mode != PadMode::Constant && grown > (int64_t(1) << 20) && (low > 0 || high > 0))
      return node.emitError() << "pads dimension " << axis << " to " << grown
                              << " elements; kiln's index tables hold at most 1048576";
    resultShape[axis] = grown;
  }
  FailureOr<int64_t> elements = staticElementCount(resultShape);
  if (failed(elements) || *elements > (int64_t(1) << 31))
    return node.emitError() << "would make " << formatIntList(resultShape)
                            << ": more than 2^31 elements";
  KilnOpBuilder &b = node.getBuilder();
  Value y = x;
  for (auto [axis, low, high] : llvm::zip(axes, before, after)) {
    int64_t size = KilnOpBuilder::shapeOf(y)[axis];
    if (low < 0 || high < 0) {
      // Crop first: a negative pad removes elements.
      ArrayRef<int64_t> current = KilnOpBuilder::shapeOf(y);
      SmallVector<int64_t> start(current.size(), 0), limit(current), step(current.size(), 1);
      start[axis] = std::max<int64_t>(0, -low);
      limit[axis] = size - std::max<int64_t>(0, -high);
      Result cropped = b.slice(y, start, limit, step);
      if (failed(cropped))
        return failure();
      y = *cropped;
    }
    if (low > 0 || high > 0) {
      Result padded = padAxis(node, y, axis, std::max<int64_t>(0, low),
                              std::max<int64_t>(0, high), mode, value);
      if (failed(padded))
        return failure();
      y = *padded;
    }
  }
  return y;
}

} // namespace kiln
