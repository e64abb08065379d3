//===- OnnxGraphOrder.cpp - Order and check an ONNX graph's nodes ---------===//

#include "compiler/Import/Onnx/OnnxGraphOrder.h"

#include "compiler/Import/Onnx/OnnxNames.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <queue>

using namespace mlir;

namespace kiln {
namespace {

/// The first input of `node` produced by a node not yet ordered, if any.
const std::string *findBlockedInput(const onnx::NodeProto &node,
                                    const llvm::StringMap<int> &producer,
                                    ArrayRef<int> pending) {
  for (const std::string &input : node.input()) {
    auto it = producer.find(input);
    if (it != producer.end() && pending[it->second] > 0)
      return &input;
  }
  return nullptr;
}

/// Follows unordered producers from node `start` until a node repeats; that
/// node is on a cycle.
InFlightDiagnostic reportCycle(const onnx::GraphProto &graph, int start,
                               const llvm::StringMap<int> &producer,
                               ArrayRef<int> pending,
                               function_ref<Location(int)> nodeLoc) {
  llvm::DenseMap<int, const std::string *> via;
  int current = start;
  while (!via.count(current)) {
    const std::string *input =
        findBlockedInput(graph.node(current), producer, pending);
    // Every unordered node waits on another unordered node.
    via[current] = input;
    current = producer.lookup(*input);
  }
  return emitError(nodeLoc(current))
         << "is part of a cycle: its input '" << printable(*via[current])
         << "' depends on its own output";
}

} // namespace

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

  // Kahn's algorithm, taking the lowest ready index first so a sorted file
  // keeps its order.
  SmallVector<int> pending(numNodes, 0);
  SmallVector<SmallVector<int>> consumers(numNodes);
  for (int i = 0; i < numNodes; ++i) {
    for (const std::string &input : graph.node(i).input()) {
      auto it = producer.find(input);
      if (it == producer.end())
        continue;
      ++pending[i];
      consumers[it->second].push_back(i);
    }
  }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int i = 0; i < numNodes; ++i)
    if (pending[i] == 0)
      ready.push(i);
  SmallVector<int> order;
  while (!ready.empty()) {
    int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int consumer : consumers[i])
      if (--pending[consumer] == 0)
        ready.push(consumer);
  }
  if (static_cast<int>(order.size()) == numNodes)
    return order;
  int blocked = 0;
  while (pending[blocked] == 0)
    ++blocked;
  return reportCycle(graph, blocked, producer, pending, nodeLoc);
}

} // namespace kiln
