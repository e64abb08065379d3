//===- TfGraph.h - The node graph of a TensorFlow GraphDef ------*- C++ -*-===//
//
// Indexes a GraphDef's nodes by name and resolves their inputs ("node",
// "node:k", "^node"); picks the outputs, the nodes they need and an order to
// convert them in; and finds what a frozen graph no longer says outright:
// which Consts were variables (they are read through an Identity, the
// frozen form of ReadVariableOp, or gathered from, the frozen form of
// ResourceGather), which of those are BatchNorm's moving
// statistics (not trained), and which StopGradients stop nothing.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORT_TENSORFLOW_TFGRAPH_H
#define KILN_COMPILER_IMPORT_TENSORFLOW_TFGRAPH_H

#include "proto/tensorflow/graph.pb.h"

#include "mlir/IR/Location.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include <functional>
#include <string>
#include <vector>

namespace kiln {

struct TfFrames;

/// Output `output` of node `node` (an index into the GraphDef's nodes).
struct TfOutputRef {
  int node = -1;
  unsigned output = 0;
  bool operator==(const TfOutputRef &other) const {
    return node == other.node && output == other.output;
  }
  bool operator!=(const TfOutputRef &other) const { return !(*this == other); }
};

/// A parsed input string: "name" or "name:k" (data), "^name" (control).
struct TfInputName {
  llvm::StringRef node;
  unsigned output = 0;
  bool control = false;
};

/// Parses an input string; failure on an empty name or a bad ":k".
mlir::FailureOr<TfInputName> parseTfInputName(llvm::StringRef input);

/// The key of a node output among the importer's values: "name:k".
std::string tfValueKey(llvm::StringRef node, unsigned output);

class TfGraph {
public:
  /// `nodeLoc(i)` is node i's location, for diagnostics.
  TfGraph(const tensorflow::GraphDef &graph, std::function<mlir::Location(int)> nodeLoc)
      : graph(graph), nodeLoc(std::move(nodeLoc)) {}

  /// Indexes the nodes; one error at a node with no name, a name used
  /// before, or an input that is malformed or names no node.
  mlir::LogicalResult index();

  int size() const { return graph.node_size(); }
  const tensorflow::NodeDef &node(int i) const { return graph.node(i); }
  /// The node named `name`, or -1.
  int find(llvm::StringRef name) const { return names.lookup(name) - 1; }
  /// Node i's data inputs, in order (control inputs left out).
  llvm::ArrayRef<TfOutputRef> getInputs(int i) const { return inputs[i]; }
  /// The nodes that read any output of node i as data.
  llvm::ArrayRef<int> getConsumers(int i) const { return consumers[i]; }
  /// Whether some node reads output `ref` as data.
  bool isConsumed(TfOutputRef ref) const;
  /// Follows Identity and Snapshot nodes back from `ref` to the output that
  /// is not one.
  TfOutputRef skipIdentities(TfOutputRef ref) const;

  /// The outputs nothing consumes as data, in file order: output 0 of every
  /// node no node reads, except NoOp, Const and Placeholder nodes.
  llvm::SmallVector<TfOutputRef> getDanglingOutputs() const;
  /// Which nodes the outputs need (through data inputs).
  std::vector<bool> getNeeded(llvm::ArrayRef<TfOutputRef> outputs) const;
  /// The needed nodes, each after its data inputs' producers (file order
  /// where the file allows), a while loop's back edges cut and its Exits
  /// after its body (`frames`); one error naming a cycle.
  mlir::FailureOr<llvm::SmallVector<int>>
  order(const std::vector<bool> &needed, const TfFrames &frames) const;

  /// Float Consts read through an Identity or gathered from (GatherV2):
  /// frozen variables.
  std::vector<bool> findFrozenVariables() const;
  /// Frozen variables that hold BatchNorm's moving statistics, which do not
  /// train (docs/tensorflow.md, "Weights").
  std::vector<bool> findMovingStatistics() const;

private:
  bool isOp(TfOutputRef ref, llvm::StringRef op) const {
    return ref.node >= 0 && graph.node(ref.node).op() == op;
  }
  /// The node of an input after skipping Identities, if it is a Const.
  int constantBehind(TfOutputRef ref) const;

  const tensorflow::GraphDef &graph;
  /// Kept for the graph's life (a function_ref would outlive the lambda
  /// it was made from).
  std::function<mlir::Location(int)> nodeLoc;
  /// Index + 1 by name (0: none).
  llvm::StringMap<int> names;
  std::vector<llvm::SmallVector<TfOutputRef>> inputs;
  std::vector<llvm::SmallVector<int>> consumers;
};

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_TENSORFLOW_TFGRAPH_H
