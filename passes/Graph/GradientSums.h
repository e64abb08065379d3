//===- GradientSums.h - A value's gradient from its uses' -------*- C++ -*-===//
//
// A value used several times gets the sum of its uses' gradients. A weight
// used at every step of an unrolled recurrent layer (h R^T at each of T
// steps) gets T products g_t^T h_t, each over a batch's rows: T small
// products and T - 1 full-size adds. Products of that form (A^T B, both
// matrices) are one product over the rows stacked instead:
// [A_1; ...; A_T]^T [B_1; ...; B_T], which is what the sum is.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_GRAPH_GRADIENTSUMS_H
#define KILN_PASSES_GRAPH_GRADIENTSUMS_H

#include "passes/Graph/GradientBuilder.h"

namespace kiln {

/// The sum of `parts` (gradients of one value): products contracting over
/// their rows that nothing reads yet merged into one (the merged ones left
/// unused), the rest added.
mlir::Value sumGradients(llvm::ArrayRef<mlir::Value> parts, GradientBuilder &gb);

} // namespace kiln

#endif // KILN_PASSES_GRAPH_GRADIENTSUMS_H
