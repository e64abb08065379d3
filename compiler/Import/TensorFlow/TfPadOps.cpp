//===- TfPadOps.cpp - TensorFlow Pad, PadV2 and MirrorPad -----------------===//
//
// Keras' ZeroPadding2D (ResNet, MobileNet, EfficientNet, DenseNet) writes
// Pad; tf.pad with a constant writes PadV2, with mode REFLECT or SYMMETRIC
// MirrorPad. Each is built by compiler/Import/Padding.cpp; the paddings, a
// [rank, 2] integer tensor of (before, after) pairs, and the constant must
// be known at import time.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/TensorFlow/TfOps.h"

#include "compiler/Import/DiagnosticText.h"
#include "compiler/Import/Padding.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace kiln {
namespace {

/// Pads `mode` by input #1 with `value`.
LogicalResult convertPadding(TfNode &node, PadMode mode, Attribute value) {
  Value x = node.getInput(0);
  FailureOr<ArrayRef<int64_t>> shape = node.getStaticShape(x, "an input");
  if (failed(shape))
    return failure();
  int64_t rank = static_cast<int64_t>(shape->size());
  DenseElementsAttr paddings = node.getConstantInput(1);
  auto type = paddings ? llvm::dyn_cast<RankedTensorType>(paddings.getType()) : nullptr;
  if (!type || !type.getElementType().isInteger() ||
      type.getShape() != ArrayRef<int64_t>{rank, 2})
    return node.emitError() << "expects input #1 (paddings) to be int32 or int64 values of "
                               "shape [" << rank << ", 2], known at import time";
  SmallVector<int64_t> axes, before, after;
  for (auto [k, pad] : llvm::enumerate(paddings.getValues<APInt>())) {
    int64_t amount = pad.getSExtValue();
    if (amount < 0)
      return node.emitError() << "pads dimension " << k / 2 << " by " << amount
                              << ": paddings must be >= 0";
    (k % 2 ? after : before).push_back(amount);
  }
  for (int64_t d = 0; d < rank; ++d)
    axes.push_back(d);
  FailureOr<Value> y = buildPad(node, x, axes, before, after, mode, value);
  if (failed(y))
    return failure();
  return node.setResult(0, *y);
}

/// The zero of x's element type.
Attribute zeroOf(Type elementType) {
  if (llvm::isa<FloatType>(elementType))
    return FloatAttr::get(elementType, 0.0);
  return IntegerAttr::get(elementType, 0);
}

LogicalResult convertPad(TfNode &node) {
  return convertPadding(node, PadMode::Constant,
                        zeroOf(getElementTypeOrSelf(node.getInput(0).getType())));
}

LogicalResult convertPadV2(TfNode &node) {
  Type elementType = getElementTypeOrSelf(node.getInput(0).getType());
  DenseElementsAttr constant = node.getConstantInput(2);
  if (!constant || constant.getNumElements() != 1 ||
      constant.getElementType() != elementType)
    return node.emitError() << "expects input #2 (constant_values) to be one element of the "
                               "input's type, known at import time";
  return convertPadding(node, PadMode::Constant, *constant.value_begin<Attribute>());
}

LogicalResult convertMirrorPad(TfNode &node) {
  FailureOr<std::string> mode = node.getStringAttr("mode", "");
  if (failed(mode))
    return failure();
  if (*mode != "REFLECT" && *mode != "SYMMETRIC")
    return node.emitError() << "expects attribute 'mode' to be REFLECT or SYMMETRIC, got '"
                            << printable(*mode) << "'";
  Type elementType = getElementTypeOrSelf(node.getInput(0).getType());
  return convertPadding(node, *mode == "REFLECT" ? PadMode::Reflect : PadMode::Symmetric,
                        zeroOf(elementType));
}

constexpr TfOpConversion kPadOps[] = {
    {"Pad", 2, 2, "T Tpaddings", convertPad},
    {"PadV2", 3, 3, "T Tpaddings", convertPadV2},
    {"MirrorPad", 2, 2, "T Tpaddings mode", convertMirrorPad},
};

} // namespace

ArrayRef<TfOpConversion> getTfPadOps() { return kPadOps; }

} // namespace kiln
