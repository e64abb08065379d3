//===- TrainSpecImport.h - TrainSpec → kiln.train_spec ----------*- C++ -*-===//

#ifndef KILN_COMPILER_IMPORT_GRAPH_TRAINSPECIMPORT_H
#define KILN_COMPILER_IMPORT_GRAPH_TRAINSPECIMPORT_H

#include "proto/kiln/graph.pb.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"

namespace kiln {

/// Converts the graph's train spec into the `kiln.train_spec` dictionary
/// with every default filled in (docs/graph-format.md lists them). Checks
/// values and names: the loss is a node, the label an input, hash embeddings
/// are variables. Errors are emitted at `loc` and name the field, e.g.
/// "train.optimizer.learning_rate".
mlir::FailureOr<mlir::DictionaryAttr>
importTrainSpec(const graph::GraphDef &graph, mlir::Location loc);

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_GRAPH_TRAINSPECIMPORT_H
