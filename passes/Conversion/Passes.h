//===- Passes.h - Conversions out of the kiln dialect -----------*- C++ -*-===//

#ifndef KILN_PASSES_CONVERSION_PASSES_H
#define KILN_PASSES_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace kiln {

/// Module attribute kiln-split-rows leaves for the code generator: a
/// dictionary from each split kernel's name to its row count. It is not a
/// kiln-dialect attribute because it lives only between that pass and
/// lowerKernelsToLLVMDialect, which removes it.
inline constexpr llvm::StringLiteral kKernelRowsAttrName = "split_rows.kernel_rows";

/// Integer attribute on a kernel function that must get a row entry
/// whatever its size, and whose argument of that number it must read only
/// at the row being computed (a block of a product's rows: the update of a
/// gradient computed by blocks, a product's epilogue, called on each
/// block's rows); kiln-split-rows removes it.
inline constexpr llvm::StringLiteral kRowsRequiredAttrName = "split_rows.required";

#define GEN_PASS_DECL
#include "passes/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Conversion/Passes.h.inc"

} // namespace kiln

#endif // KILN_PASSES_CONVERSION_PASSES_H
