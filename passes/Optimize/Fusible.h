//===- Fusible.h - Which ops kiln-fuse-elementwise computes in a group -*- C++
//-*-===//
//
// The rule is kiln-fuse-elementwise's; kiln-mixed-precision asks it too, to
// place a kiln.cast where the fusion will take it into its producer's
// kernel.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_OPTIMIZE_FUSIBLE_H
#define KILN_PASSES_OPTIMIZE_FUSIBLE_H

#include "mlir/IR/Operation.h"

namespace kiln {

/// Whether `op` can be computed inside a fusion: one result, static, and an
/// element of it from the same element of each operand (a broadcast reads
/// its operand through the broadcast map, a one_hot its indices along the
/// leading dimensions).
bool isFusible(mlir::Operation *op);

} // namespace kiln

#endif // KILN_PASSES_OPTIMIZE_FUSIBLE_H
