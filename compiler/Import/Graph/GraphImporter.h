//===- GraphImporter.h - Kiln graph file → kiln module ----------*- C++ -*-===//

#ifndef KILN_COMPILER_IMPORT_GRAPH_GRAPHIMPORTER_H
#define KILN_COMPILER_IMPORT_GRAPH_GRAPHIMPORTER_H

#include "compiler/Import/Graph/TrainFlags.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace kiln {

/// Reads a graph file (binary .pb or text .pbtxt, by extension) into a kiln
/// module: variables become `kiln.variable`s, inputs the arguments and
/// outputs the results of @forward, and the train spec the module's
/// `kiln.train_spec`. On failure, emits one error (naming the file and the
/// node, variable, input or field) on the context and returns null.
/// `trainFlags` overrides parts of the file's train spec (kilnc --train).
mlir::OwningOpRef<mlir::ModuleOp>
importGraphFile(llvm::StringRef path, mlir::MLIRContext &context,
                const TrainFlags &trainFlags = {});

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_GRAPH_GRAPHIMPORTER_H
