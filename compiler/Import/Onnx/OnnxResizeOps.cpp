//===- OnnxResizeOps.cpp - ONNX Resize: nearest, linear and cubic ---------===//
//
// Resize with scales or sizes known at import time, built by
// compiler/Import/Resize.cpp from the node's mode, coordinate transformation
// and rounding.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/Onnx/OnnxOps.h"

#include "compiler/Import/DiagnosticText.h"
#include "compiler/Import/Resize.h"

#include "mlir/IR/TypeUtilities.h"

#include <algorithm>
#include <array>
#include <cmath>

using namespace mlir;

namespace kiln {
namespace {

using Result = KilnOpBuilder::Result;

/// The coordinate transformations Resize has (onnx.ai's Resize, opsets 11
/// to 21) but tf_crop_and_resize, which reads a region of interest.
constexpr llvm::StringLiteral kResizeTransforms[] = {
    "half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
    "asymmetric", "tf_half_pixel_for_nn"};
constexpr llvm::StringLiteral kNearestModes[] = {"round_prefer_floor", "round_prefer_ceil",
                                                 "floor", "ceil"};

FailureOr<ResizeMethod> readMethod(OnnxNode &node, ArrayRef<double> scales) {
  bool opset10 = node.getOpset() < 11;
  ResizeMethod method;
  // Opset 10 had neither attribute: its nearest resize reads floor(i / scale)
  // and its linear one the asymmetric coordinates too.
  FailureOr<std::string> mode = node.getStringAttr("mode", "nearest");
  FailureOr<std::string> transform = node.getStringAttr(
      "coordinate_transformation_mode", opset10 ? "asymmetric" : "half_pixel");
  FailureOr<std::string> rounding =
      node.getStringAttr("nearest_mode", opset10 ? "floor" : "round_prefer_floor");
  FailureOr<std::string> policy = node.getStringAttr("keep_aspect_ratio_policy", "stretch");
  FailureOr<float> cubicA = node.getFloatAttr("cubic_coeff_a", -0.75f);
  FailureOr<int64_t> excludeOutside = node.getIntAttr("exclude_outside", 0);
  FailureOr<int64_t> antialias = node.getIntAttr("antialias", 0);
  if (failed(mode) || failed(transform) || failed(rounding) || failed(policy) ||
      failed(cubicA) || failed(excludeOutside) || failed(antialias))
    return failure();
  if (*mode != "nearest" && *mode != "linear" && *mode != "cubic")
    return node.emitError() << "mode '" << printable(*mode)
                            << "' is not supported (kiln's are nearest, linear and cubic)";
  if (!llvm::is_contained(kResizeTransforms, *transform))
    return node.emitError() << "coordinate_transformation_mode '" << printable(*transform)
                            << "' is not supported";
  if (*mode == "nearest" && !llvm::is_contained(kNearestModes, *rounding))
    return node.emitError() << "nearest_mode '" << printable(*rounding) << "' is not supported";
  // Opset 18's axes and aspect policies change which sizes apply: only the
  // defaults (every axis, stretched) are read.
  if (*policy != "stretch" || node.hasAttribute("axes"))
    return node.emitError() << "axes and keep_aspect_ratio_policy other than 'stretch' are not "
                               "supported";
  // Antialiasing widens a linear or cubic filter when it shrinks a
  // dimension; enlarging, it changes nothing.
  if (*antialias != 0 && *mode != "nearest" &&
      llvm::any_of(scales, [](double scale) { return scale < 1; }))
    return node.emitError() << "antialias when shrinking a dimension is not supported";
  method.mode = *mode;
  method.transform = *transform;
  method.rounding = *rounding;
  method.cubicA = *cubicA;
  method.excludeOutside = *excludeOutside != 0;
  return method;
}

/// The output sizes and each dimension's scale (the model's, or out / in
/// where it gives sizes).
LogicalResult readSizes(OnnxNode &node, ArrayRef<int64_t> shape, SmallVector<int64_t> &outSizes,
                        SmallVector<double> &scales) {
  size_t rank = shape.size();
  bool opset10 = node.getOpset() < 11;
  // Opset 10's Resize takes (X, scales); from 11 (X, roi, scales, sizes).
  unsigned scalesInput = opset10 ? 1 : 2;
  // Opsets 11 and 12 give sizes with an empty scales tensor in its place.
  DenseElementsAttr givenScales = node.getConstantInput(scalesInput);
  bool hasScales = node.hasInput(scalesInput) &&
                   !(givenScales && givenScales.getNumElements() == 0);
  if (!opset10 && node.hasInput(3)) {
    if (hasScales)
      return node.emitError() << "expects scales or sizes, not both";
    FailureOr<SmallVector<int64_t>> sizes = node.getConstantInts(3, "sizes");
    if (failed(sizes))
      return failure();
    outSizes = *sizes;
    if (outSizes.size() == rank)
      for (size_t d = 0; d < rank; ++d)
        scales.push_back(static_cast<double>(outSizes[d]) / static_cast<double>(shape[d]));
  } else if (hasScales) {
    if (!givenScales || !llvm::isa<FloatType>(givenScales.getElementType()))
      return node.emitError() << "expects input #" << scalesInput
                              << " (scales) to be floats known at import time";
    for (APFloat scale : givenScales.getValues<APFloat>())
      scales.push_back(scale.convertToDouble());
    if (scales.size() == rank)
      for (size_t d = 0; d < rank; ++d) {
        if (!(scales[d] > 0) || std::isinf(scales[d]))
          return node.emitError() << "expects positive scales, got " << scales[d]
                                  << " for dimension " << d;
        double out = std::floor(shape[d] * scales[d]);
        if (out > double(int64_t(1) << 31))
          return node.emitError() << "scales dimension " << d << " (" << shape[d] << ") by "
                                  << scales[d] << ": more than 2^31 elements";
        outSizes.push_back(static_cast<int64_t>(out));
      }
  }
  if (outSizes.size() != rank || scales.size() != rank)
    return node.emitError() << "expects " << rank << " scales or sizes known at import time";
  for (size_t d = 0; d < rank; ++d)
    if (outSizes[d] < 1 || shape[d] < 1)
      return node.emitError() << "resizes dimension " << d << " from " << shape[d] << " to "
                              << outSizes[d] << ": both must be at least 1";
  FailureOr<int64_t> elements = staticElementCount(outSizes);
  if (failed(elements) || *elements > (int64_t(1) << 31))
    return node.emitError() << "would make " << formatIntList(outSizes)
                            << ": more than 2^31 elements";
  return success();
}

LogicalResult convertResize(OnnxNode &node) {
  Value x = node.getInput(0);
  FailureOr<ArrayRef<int64_t>> shape = node.getStaticShape(x, "an input");
  if (failed(shape))
    return failure();
  SmallVector<int64_t> outSizes;
  SmallVector<double> scales;
  if (failed(readSizes(node, *shape, outSizes, scales)))
    return failure();
  FailureOr<ResizeMethod> method = readMethod(node, scales);
  if (failed(method))
    return failure();
  if (method->mode != "nearest" && failed(node.requireFloat(x, "an input")))
    return failure();
  FailureOr<Value> y = buildResize(node, x, outSizes, scales, *method);
  return failed(y) ? failure() : node.setResult(0, *y);
}

constexpr OnnxOpConversion kResizeOps[] = {
    {"Resize", 1, 4, 1,
     "mode coordinate_transformation_mode nearest_mode cubic_coeff_a exclude_outside "
     "extrapolation_value antialias keep_aspect_ratio_policy axes",
     convertResize, 10},
};

} // namespace

ArrayRef<OnnxOpConversion> getOnnxResizeOps() { return kResizeOps; }

} // namespace kiln
