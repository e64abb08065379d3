//===- TrainSpec.h - The kiln.train_spec module attribute -------*- C++ -*-===//
//
// A model's training specification travels in the IR as a dictionary on the
// module (`kiln.train_spec`). docs/graph-format.md lists its keys; importers
// fill in every default so passes read values, never re-derive them.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_KILN_TRAINSPEC_H
#define KILN_DIALECTS_KILN_TRAINSPEC_H

#include "mlir/IR/BuiltinOps.h"

namespace kiln {

/// Checks the keys, value kinds and enumerated values of a train spec, and
/// that its `loss` names a result of the module's `forward` function.
mlir::LogicalResult verifyTrainSpec(mlir::ModuleOp module, mlir::Attribute spec);

} // namespace kiln

#endif // KILN_DIALECTS_KILN_TRAINSPEC_H
