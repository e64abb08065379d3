//===- OnnxPadOps.cpp - ONNX Pad ------------------------------------------===//
//
// Pad in each of its modes, one dimension at a time: negative pads crop (a
// slice); `constant` concatenates blocks of the value on either side;
// `reflect`, `edge` and `wrap` gather the input indices each output reads
// (mirrored without repeating the edge, clamped, or modulo the dimension),
// so that autodiff trains through either. Pads (and the constant value and
// axes) must be known at import time.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/Onnx/OnnxOps.h"

#include "compiler/Import/DiagnosticText.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace kiln {
namespace {

using Result = KilnOpBuilder::Result;

enum class PadMode { Constant, Reflect, Edge, Wrap };

/// The input index output index `i` (counted from the first padded element)
/// reads along a dimension of `size` padded by `before`.
int64_t sourceIndex(PadMode mode, int64_t i, int64_t before, int64_t size) {
  int64_t j = i - before;
  switch (mode) {
  case PadMode::Reflect: {
    // Mirror without repeating the edge: period 2 (size - 1).
    int64_t period = 2 * (size - 1);
    int64_t k = ((j % period) + period) % period;
    return k < size ? k : period - k;
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
Result padAxis(OnnxNode &node, Value x, int64_t axis, int64_t before, int64_t after,
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
  if (mode == PadMode::Reflect && (before > size - 1 || after > size - 1))
    return node.emitError() << "pads dimension " << axis << " of size " << size << " by "
                            << before << " and " << after
                            << " in reflect mode, which reflects at most " << size - 1;
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

LogicalResult convertPad(OnnxNode &node) {
  Value x = node.getInput(0);
  FailureOr<ArrayRef<int64_t>> shape = node.getStaticShape(x, "an input");
  FailureOr<std::string> modeName = node.getStringAttr("mode", "constant");
  if (failed(shape) || failed(modeName))
    return failure();
  PadMode mode;
  if (*modeName == "constant")
    mode = PadMode::Constant;
  else if (*modeName == "reflect")
    mode = PadMode::Reflect;
  else if (*modeName == "edge")
    mode = PadMode::Edge;
  else if (*modeName == "wrap" && node.getOpset() >= 19)
    mode = PadMode::Wrap;
  else
    return node.emitError() << "mode '" << printable(*modeName)
                            << "' is not supported (constant, reflect, edge, and wrap from "
                               "opset 19)";
  int64_t rank = static_cast<int64_t>(shape->size());
  Type elementType = getElementTypeOrSelf(x.getType());
  // Before opset 11, pads and value are attributes; from 11, inputs (the
  // value a scalar of the input's type, axes from opset 18).
  SmallVector<int64_t> pads;
  Attribute value;
  SmallVector<int64_t> axes;
  if (node.getOpset() < 11) {
    FailureOr<std::optional<SmallVector<int64_t>>> attr = node.getIntsAttr("pads");
    FailureOr<float> constant = node.getFloatAttr("value", 0.0f);
    if (failed(attr) || failed(constant))
      return failure();
    if (!*attr)
      return node.emitError() << "needs attribute 'pads' before opset 11";
    pads = std::move(**attr);
    if (!llvm::isa<FloatType>(elementType) && *constant != 0)
      return node.emitError() << "pads an integer input with value " << *constant;
    value = llvm::isa<FloatType>(elementType)
                ? Attribute(FloatAttr::get(elementType, *constant))
                : Attribute(IntegerAttr::get(elementType, 0));
  } else {
    if (failed(node.refuseAttr("pads", "pads are input #1 from opset 11")) ||
        failed(node.refuseAttr("value", "the value is input #2 from opset 11")))
      return failure();
    FailureOr<SmallVector<int64_t>> given = node.getConstantInts(1, "pads");
    if (failed(given))
      return failure();
    pads = std::move(*given);
    value = llvm::isa<FloatType>(elementType) ? Attribute(FloatAttr::get(elementType, 0.0))
                                              : Attribute(IntegerAttr::get(elementType, 0));
    if (node.hasInput(2)) {
      DenseElementsAttr constant = node.getConstantInput(2);
      if (!constant || constant.getNumElements() != 1 ||
          constant.getElementType() != elementType)
        return node.emitError() << "expects input #2 (constant_value) to be one element of "
                                   "the input's type, known at import time";
      value = *constant.value_begin<Attribute>();
    }
    if (node.hasInput(3)) {
      FailureOr<SmallVector<int64_t>> given = node.getConstantInts(3, "axes");
      if (failed(given))
        return failure();
      FailureOr<SmallVector<int64_t>> normalized = node.normalizeAxes(*given, rank);
      if (failed(normalized))
        return failure();
      // Pads follow the axes' order as given, not sorted.
      for (int64_t axis : *given)
        axes.push_back(axis < 0 ? axis + rank : axis);
    }
  }
  if (axes.empty())
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  int64_t count = static_cast<int64_t>(axes.size());
  if (static_cast<int64_t>(pads.size()) != 2 * count)
    return node.emitError() << "expects " << 2 * count
                            << " pads (begins, then ends), got " << formatIntList(pads);
  // The result's size first: at most 2^31 elements, and at most 2^20 per
  // dimension read through an index table (reflect, edge, wrap).
  SmallVector<int64_t> resultShape(*shape);
  for (int64_t k = 0; k < count; ++k) {
    int64_t axis = axes[k];
    int64_t grown = resultShape[axis] + pads[k] + pads[k + count];
    if (mode != PadMode::Constant && grown > (int64_t(1) << 20) &&
        (pads[k] > 0 || pads[k + count] > 0))
      return node.emitError() << "pads dimension " << axis << " to " << grown
                              << " elements; kiln's index tables hold at most 1048576";
    resultShape[axis] = grown;
  }
  FailureOr<int64_t> elements = staticElementCount(resultShape);
  bool nonEmpty = llvm::all_of(resultShape, [](int64_t d) { return d >= 1; });
  if (nonEmpty && (failed(elements) || *elements > (int64_t(1) << 31)))
    return node.emitError() << "would make " << formatIntList(resultShape)
                            << ": more than 2^31 elements";
  KilnOpBuilder &b = node.getBuilder();
  Value y = x;
  for (int64_t k = 0; k < count; ++k) {
    int64_t axis = axes[k], before = pads[k], after = pads[k + count];
    int64_t size = KilnOpBuilder::shapeOf(y)[axis];
    if (before < -size || after < -size || before + after + size < 1 ||
        before > (int64_t(1) << 24) || after > (int64_t(1) << 24))
      return node.emitError() << "pads dimension " << axis << " of size " << size << " by "
                              << before << " and " << after
                              << ", which leaves no element or more than 2^24 more";
    if (before < 0 || after < 0) {
      // Crop first: a negative pad removes elements.
      ArrayRef<int64_t> current = KilnOpBuilder::shapeOf(y);
      SmallVector<int64_t> start(current.size(), 0), limit(current), step(current.size(), 1);
      start[axis] = std::max<int64_t>(0, -before);
      limit[axis] = size - std::max<int64_t>(0, -after);
      Result cropped = b.slice(y, start, limit, step);
      if (failed(cropped))
        return failure();
      y = *cropped;
    }
    if (before > 0 || after > 0) {
      Result padded = padAxis(node, y, axis, std::max<int64_t>(0, before),
                              std::max<int64_t>(0, after), mode, value);
      if (failed(padded))
        return failure();
      y = *padded;
    }
  }
  return node.setResult(0, y);
}

constexpr OnnxOpConversion kPadOps[] = {
    {"Pad", 1, 4, 1, "mode pads value", convertPad, 2},
};

} // namespace

ArrayRef<OnnxOpConversion> getOnnxPadOps() { return kPadOps; }

} // namespace kiln
