//===- OnnxPadOps.cpp - ONNX Pad ------------------------------------------===//
//
// Pad in each of its modes (constant, reflect, edge, wrap), built by
// compiler/Import/Padding.cpp. Pads (and the constant value and axes) must
// be known at import time.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/Onnx/OnnxOps.h"

#include "compiler/Import/DiagnosticText.h"
#include "compiler/Import/Padding.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace kiln {
namespace {

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
  SmallVector<int64_t> before(pads.begin(), pads.begin() + count);
  SmallVector<int64_t> after(pads.begin() + count, pads.end());
  FailureOr<Value> y = buildPad(node, x, axes, before, after, mode, value);
  if (failed(y))
    return failure();
  return node.setResult(0, *y);
}

constexpr OnnxOpConversion kPadOps[] = {
    {"Pad", 1, 4, 1, "mode pads value", convertPad, 2},
};

} // namespace

ArrayRef<OnnxOpConversion> getOnnxPadOps() { return kPadOps; }

} // namespace kiln
