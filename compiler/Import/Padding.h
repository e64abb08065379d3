//===- Padding.h - Padding a tensor from kiln ops ---------------*- C++ -*-===//
//
// Pad as ONNX (Pad) and TensorFlow (Pad, PadV2, MirrorPad) write it, built
// one dimension at a time from ops autodiff trains through: negative pads
// crop (a slice); a constant pad concatenates blocks of the value on either
// side; the other modes gather the input indices each output reads
// (mirrored without or with the edge, clamped, or modulo the dimension).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORT_PADDING_H
#define KILN_COMPILER_IMPORT_PADDING_H

#include "compiler/Import/ImportNode.h"

namespace kiln {

enum class PadMode {
  Constant,
  /// Mirrored without repeating the edge: [1 2 3] by 2 -> 3 2 | 1 2 3 | 2 1.
  Reflect,
  /// Mirrored with the edge: [1 2 3] by 2 -> 2 1 | 1 2 3 | 3 2.
  Symmetric,
  /// The edge repeated.
  Edge,
  /// Modulo the dimension.
  Wrap,
};

/// `x` padded along `axes[k]` (distinct) by `before[k]` and `after[k]`
/// (negative crops), in that order, with `value` (an attribute of x's element type)
/// in Constant mode. One error at the node for a reflection wider than the
/// dimension allows, a result of no elements or of more than 2^31, more
/// than 2^24 added per side, or an index table over 2^20 elements.
mlir::FailureOr<mlir::Value> buildPad(ImportNode &node, mlir::Value x,
                                      llvm::ArrayRef<int64_t> axes,
                                      llvm::ArrayRef<int64_t> before,
                                      llvm::ArrayRef<int64_t> after, PadMode mode,
                                      mlir::Attribute value);

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_PADDING_H
