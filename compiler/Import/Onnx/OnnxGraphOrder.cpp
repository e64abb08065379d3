//===- OnnxGraphOrder.cpp - Order and check an ONNX graph's nodes ---------===//

#include "compiler/Import/Onnx/OnnxGraphOrder.h"

#include "compiler/Import/DiagnosticText.h"
#include "compiler/Import/NodeOrder.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringMap.h"

using namespace mlir;

namespace kiln {

FailureOr<SmallVector<int>>
orderOnnxNodes(const onnx::GraphProto &graph,
               const llvm::StringSet<> &available,
               function_ref<Location(int)> nodeLoc) {
  int numNodes = graph.node_size();
  llvm::StringMap<int> producer;
  for (int i = 0; i < numNodes; ++i) {
    for (const std::string &output : graph.node(i).output()) {
      if (output.empty())
        continue;
      if (available.contains(output))
        return emitError(nodeLoc(i))
               << "output '" << printable(output)
               << "' has the name of a graph input or initializer";
      auto [it, inserted] = producer.try_emplace(output, i);
      if (!inserted)
        return emitError(nodeLoc(i))
               << "output '" << printable(output)
               << "' is already produced by node #" << it->second;
    }
  }
  for (int i = 0; i < numNodes; ++i) {
    for (const std::string &input : graph.node(i).input()) {
      if (!input.empty() && !available.contains(input) &&
          !producer.count(input))
        return emitError(nodeLoc(i))
               << "input '" << printable(input)
               << "' is not produced by any node, graph input or initializer";
    }
  }

  SmallVector<int> cycle;
  FailureOr<SmallVector<int>> order = orderNodes(
      numNodes,
      [&](int node, SmallVectorImpl<int> &producers) {
        for (const std::string &input : graph.node(node).input())
          if (auto it = producer.find(input); it != producer.end())
            producers.push_back(it->second);
      },
      cycle);
  if (succeeded(order))
    return order;
  // The last node of the cycle feeds the first: name that input.
  int first = cycle.front(), last = cycle.back();
  auto fedByLast = [&](const std::string &name) {
    auto it = producer.find(name);
    return it != producer.end() && it->second == last;
  };
  const std::string &input = *llvm::find_if(graph.node(first).input(), fedByLast);
  return emitError(nodeLoc(first))
         << "is part of a cycle: its input '" << printable(input)
         << "' depends on its own output";
}

} // namespace kiln
