//===- KDistOps.h - kdist dialect ops ---------------------------*- C++ -*-===//

#ifndef KILN_DIALECTS_DIST_KDISTOPS_H
#define KILN_DIALECTS_DIST_KDISTOPS_H

#include "dialects/Dist/KDistDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace kiln::dist {

/// What parameter-server pulls read and pushes write.
struct ParameterServerResource
    : public mlir::SideEffects::Resource::Base<ParameterServerResource> {
  llvm::StringRef getName() final { return "ParameterServers"; }
};

/// The dictionary on a kiln.variable that lives on parameter servers
/// (kiln-insert-ps-ops): its kind and partitioner; see Passes.td.
constexpr llvm::StringLiteral kPlacementAttr = "kdist.placement";

} // namespace kiln::dist

#define GET_OP_CLASSES
#include "dialects/Dist/KDistOps.h.inc"

namespace kiln::dist {

/// The result types the collective `start` (a `*_start` op) gives through
/// its kdist.wait: those of its blocking form. Empty when `start` is not a
/// start op or its own attributes are invalid.
llvm::SmallVector<mlir::Type> pendingResultTypes(mlir::Operation *start);

} // namespace kiln::dist

#endif // KILN_DIALECTS_DIST_KDISTOPS_H
