//===- NodeOrder.h - Topological order of a model's nodes -------*- C++ -*-===//

#ifndef KILN_COMPILER_IMPORT_NODEORDER_H
#define KILN_COMPILER_IMPORT_NODEORDER_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

namespace kiln {

/// Orders `count` nodes so that each comes after the nodes it reads from
/// (Kahn's algorithm taking the lowest ready index first, so a file already
/// in order keeps it). `producers(i, out)` appends the indices of the nodes
/// node i reads. On a cycle, returns failure and fills `cycle` with the
/// nodes of one cycle in data-flow order: each feeds the next, the last
/// feeds the first.
mlir::FailureOr<llvm::SmallVector<int>>
orderNodes(int count,
           llvm::function_ref<void(int, llvm::SmallVectorImpl<int> &)> producers,
           llvm::SmallVectorImpl<int> &cycle);

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_NODEORDER_H
