//===- TrainFromFlags.h - kilnc --train on an imported model ----*- C++ -*-===//
//
// After import, `kilnc --train` makes sure the module carries a train spec.
// A graph file's own spec already has the flags' overrides (the graph
// importer applies them). A model without a spec (ONNX, or a graph file
// without `train`) gets one from the flags: @forward gains the label as a
// new argument and the loss (mean over the batch) as a new result.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORT_TRAINFROMFLAGS_H
#define KILN_COMPILER_IMPORT_TRAINFROMFLAGS_H

#include "compiler/Import/Graph/TrainFlags.h"

#include "mlir/IR/BuiltinOps.h"

namespace kiln {

/// Applies the --train flags to an imported module. `hadSpecInFile` tells
/// whether the spec (if any) came from a graph file, which took the
/// overrides already. Emits one error and fails on a flag that does not
/// fit the model: an unknown output, a label of the wrong type, a loss
/// given for a model that names its own.
mlir::LogicalResult applyTrainFlags(mlir::ModuleOp module,
                                    const TrainFlags &flags, bool hadSpecInFile);

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_TRAINFROMFLAGS_H
