//===- ComputePrecision.h - The precision a matrix product runs in -*- C++ -*-===//
//
// kiln-mixed-precision marks a kiln.matmul with `kiln.compute_precision =
// bf16` (or f16): its f32 inputs are rounded to that type and the products
// summed in f32 (the artifact's Gemm.precision); and in bf16 a convolution
// or convolution gradient (Convolution.precision). The kiln dialect
// verifies the attribute: on a kiln.matmul a bf16 or f16 type, on a
// convolution bf16.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_KILN_COMPUTEPRECISION_H
#define KILN_DIALECTS_KILN_COMPUTEPRECISION_H

#include "mlir/IR/Operation.h"

namespace kiln {

inline constexpr llvm::StringLiteral kComputePrecisionAttrName = "kiln.compute_precision";

/// The type `op`'s inputs are rounded to (bf16 or f16), or null for f32.
inline mlir::Type computePrecisionOf(mlir::Operation *op) {
  if (auto attr = op->getAttrOfType<mlir::TypeAttr>(kComputePrecisionAttrName))
    return attr.getValue();
  return {};
}

} // namespace kiln

#endif // KILN_DIALECTS_KILN_COMPUTEPRECISION_H
