//===- SliceGradients.h - One gradient from many slices' --------*- C++ -*-===//
//
// A value read through several slices (an unrolled recurrent layer's steps
// reading rows of one product, its gates reading columns of another; the
// parts torch.chunk and Split make) would get a zero-padded copy of the
// value per slice, summed: T slices of a [T*B, N] value cost T full-size
// pads and adds, quadratic in T. Where the slices tile the value along one
// axis, its gradient is their gradients concatenated instead (zeros where
// no slice reads), linear in the value's size.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_GRAPH_SLICEGRADIENTS_H
#define KILN_PASSES_GRAPH_SLICEGRADIENTS_H

#include "passes/Graph/GradientBuilder.h"

namespace kiln {

/// A slice of some value and the gradient of its result.
struct SliceGradient {
  SliceOp slice;
  mlir::Value grad;
};

/// Whether a slice's gradient may wait to be combined with its operand's
/// other slices' (unit steps only).
bool isTileableSlice(SliceOp slice);

/// The gradient of `operand` from its slices' `parts` (each a tileable
/// slice of `operand`): concatenated along an axis they tile (identical
/// slices' gradients summed first, gaps filled with zeros), else each
/// zero-padded to the operand's shape and summed.
mlir::Value combineSliceGradients(mlir::Value operand, llvm::ArrayRef<SliceGradient> parts,
                                  GradientBuilder &gb);

} // namespace kiln

#endif // KILN_PASSES_GRAPH_SLICEGRADIENTS_H
