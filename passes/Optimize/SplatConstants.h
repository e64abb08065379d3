//===- SplatConstants.h - The one value of a splat kiln.constant -*- C++ -*-===//
//
// Graph rewrites that match a constant operand (a loss's scale, a mask's
// zero) ask it the same way.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_OPTIMIZE_SPLATCONSTANTS_H
#define KILN_PASSES_OPTIMIZE_SPLATCONSTANTS_H

#include "dialects/Kiln/KilnOps.h"

#include "llvm/ADT/APFloat.h"

#include <optional>

namespace kiln {

/// The value of every element of `value` when a kiln.constant of floats,
/// all equal, defines it; nullopt otherwise.
inline std::optional<llvm::APFloat> splatFloat(mlir::Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  auto dense = constant ? llvm::dyn_cast<mlir::DenseElementsAttr>(constant.getValue())
                        : mlir::DenseElementsAttr();
  if (!dense || !dense.isSplat() || !llvm::isa<mlir::FloatType>(dense.getElementType()))
    return std::nullopt;
  return dense.getSplatValue<llvm::APFloat>();
}

} // namespace kiln

#endif // KILN_PASSES_OPTIMIZE_SPLATCONSTANTS_H
