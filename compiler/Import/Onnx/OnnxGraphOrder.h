//===- OnnxGraphOrder.h - Order and check an ONNX graph's nodes -*- C++ -*-===//

#ifndef KILN_COMPILER_IMPORT_ONNX_ONNXGRAPHORDER_H
#define KILN_COMPILER_IMPORT_ONNX_ONNXGRAPHORDER_H

#include "mlir/IR/Location.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringSet.h"

#include "onnx/onnx_pb.h"

namespace kiln {

/// The names `node`'s subgraphs (a Loop's body, an If's branches, and the
/// graphs nested in those) read from the graphs enclosing it: its implicit
/// inputs, each once, in the order the subgraphs first read them.
llvm::SmallVector<std::string> subgraphOuterNames(const onnx::NodeProto &node);
/// The names `graph` (a subgraph) and the graphs nested in it read from the
/// graphs around it.
llvm::SmallVector<std::string> graphOuterNames(const onnx::GraphProto &graph);

/// The node indices of `graph` in an order where every node follows the
/// producers of its inputs (file order where the file allows it).
/// `available` holds the names defined before any node (graph inputs and
/// initializers); `nodeLoc(i)` is node i's location. A node with subgraphs
/// follows the producers of what they read too. Emits one error at a node on
/// a name produced twice, an input nothing produces, or a cycle.
mlir::FailureOr<llvm::SmallVector<int>>
orderOnnxNodes(const onnx::GraphProto &graph,
               const llvm::StringSet<> &available,
               llvm::function_ref<mlir::Location(int)> nodeLoc);

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_ONNX_ONNXGRAPHORDER_H
