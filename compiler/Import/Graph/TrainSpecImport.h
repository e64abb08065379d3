//===- TrainSpecImport.h - TrainSpec → kiln.train_spec ----------*- C++ -*-===//

#ifndef KILN_COMPILER_IMPORT_GRAPH_TRAINSPECIMPORT_H
#define KILN_COMPILER_IMPORT_GRAPH_TRAINSPECIMPORT_H

#include "proto/kiln/graph.pb.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"

#include <functional>
#include <string>

namespace kiln {

/// The model's names a train spec may refer to.
struct TrainSpecNames {
  /// A value the loss may name (a graph node, or a result of @forward).
  std::function<bool(const std::string &)> isLossCandidate;
  std::function<bool(const std::string &)> isInput;
  std::function<bool(const std::string &)> isVariable;
  /// The batch when the spec leaves it 0: the first input's dimension 0.
  int64_t defaultBatch = 0;
};

/// Converts a train spec into the `kiln.train_spec` dictionary with every
/// default filled in (docs/graph-format.md lists them). Checks values and
/// names: the loss is a node, the label an input, hash embeddings are
/// variables. Errors are emitted at `loc` and name the field, e.g.
/// "train.optimizer.learning_rate".
mlir::FailureOr<mlir::DictionaryAttr>
importTrainSpec(const graph::TrainSpec &spec, const TrainSpecNames &names,
                mlir::Location loc);

/// The names of a graph file's nodes, inputs and variables.
TrainSpecNames graphTrainSpecNames(const graph::GraphDef &graph);

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_GRAPH_TRAINSPECIMPORT_H
