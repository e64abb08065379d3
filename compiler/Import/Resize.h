//===- Resize.h - Resizing a tensor from kiln ops ---------------*- C++ -*-===//
//
// Resize as ONNX (Resize) and TensorFlow (ResizeBilinear,
// ResizeNearestNeighbor) write it, with the output sizes known at import
// time. Every output index of a resized dimension reads a few input indices
// (1 nearest, 2 linear, 4 cubic) with fixed weights, by onnx.ai's coordinate
// transformations and coefficients, input indices clamped to the edge (its
// reference pads by repeating the edge). Each resized dimension becomes
// gathers of those indices, scaled by the weights and summed; linear and
// cubic resizes of several dimensions are their one-dimensional resizes in
// turn, as the operator defines them. Nearest resizes where every element
// is repeated a whole number of times are a reshape and a broadcast instead.
// Autodiff trains through either (a gather's gradient scatters).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORT_RESIZE_H
#define KILN_COMPILER_IMPORT_RESIZE_H

#include "compiler/Import/ImportNode.h"

#include <string>

namespace kiln {

/// How a resize reads its input: mode nearest, linear or cubic; one of
/// onnx.ai's coordinate transformations (half_pixel, pytorch_half_pixel,
/// half_pixel_symmetric, align_corners, asymmetric, tf_half_pixel_for_nn);
/// nearest's rounding (round_prefer_floor, round_prefer_ceil, floor, ceil).
struct ResizeMethod {
  std::string mode, transform, rounding;
  double cubicA = -0.75;
  bool excludeOutside = false;
  /// Coordinates as TensorFlow computes them: in float, the scale in / out
  /// (align_corners: (in - 1) / (out - 1)) multiplied, so that a nearest
  /// resize picks TensorFlow's row where the exact value is a whole number.
  bool tfFloat32 = false;
};

/// `x` resized to `outSizes`, `scales` each dimension's (the model's, or
/// out / in). One error at the node for a dimension resized to more than
/// 2^20 elements (its index table).
mlir::FailureOr<mlir::Value> buildResize(ImportNode &node, mlir::Value x,
                                         llvm::ArrayRef<int64_t> outSizes,
                                         llvm::ArrayRef<double> scales,
                                         const ResizeMethod &method);

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_RESIZE_H
