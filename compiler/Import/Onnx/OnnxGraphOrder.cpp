//===- OnnxGraphOrder.cpp - Order and check an ONNX graph's nodes ---------===//

#include "compiler/Import/Onnx/OnnxGraphOrder.h"

#include "compiler/Import/DiagnosticText.h"
#include "compiler/Import/NodeOrder.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringMap.h"

using namespace mlir;

namespace kiln {

namespace {

/// Adds to `outer` the names `graph` reads that neither it nor `defined`
/// (what the graphs around it define) defines.
void collectOuterNames(const onnx::GraphProto &graph, llvm::StringSet<> defined,
                       llvm::StringSet<> &seen, SmallVectorImpl<std::string> &outer) {
  for (const onnx::ValueInfoProto &input : graph.input())
    defined.insert(input.name());
  for (const onnx::TensorProto &initializer : graph.initializer())
    defined.insert(initializer.name());
  for (const onnx::NodeProto &node : graph.node())
    for (const std::string &output : node.output())
      defined.insert(output);
  auto read = [&](const std::string &name) {
    if (!name.empty() && !defined.contains(name) && seen.insert(name).second)
      outer.push_back(name);
  };
  for (const onnx::NodeProto &node : graph.node()) {
    for (const std::string &input : node.input())
      read(input);
    for (const onnx::AttributeProto &attribute : node.attribute()) {
      if (attribute.has_g())
        collectOuterNames(attribute.g(), defined, seen, outer);
      for (const onnx::GraphProto &nested : attribute.graphs())
        collectOuterNames(nested, defined, seen, outer);
    }
  }
  for (const onnx::ValueInfoProto &output : graph.output())
    read(output.name());
}

} // namespace

SmallVector<std::string> subgraphOuterNames(const onnx::NodeProto &node) {
  SmallVector<std::string> outer;
  llvm::StringSet<> seen;
  for (const onnx::AttributeProto &attribute : node.attribute()) {
    if (attribute.has_g())
      collectOuterNames(attribute.g(), {}, seen, outer);
    for (const onnx::GraphProto &nested : attribute.graphs())
      collectOuterNames(nested, {}, seen, outer);
  }
  return outer;
}

SmallVector<std::string> graphOuterNames(const onnx::GraphProto &graph) {
  SmallVector<std::string> outer;
  llvm::StringSet<> seen;
  collectOuterNames(graph, {}, seen, outer);
  return outer;
}

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
  // Each node's inputs, its subgraphs' reads from this graph after them.
  SmallVector<SmallVector<std::string>> reads(numNodes);
  for (int i = 0; i < numNodes; ++i) {
    for (const std::string &input : graph.node(i).input()) {
      if (!input.empty() && !available.contains(input) &&
          !producer.count(input))
        return emitError(nodeLoc(i))
               << "input '" << printable(input)
               << "' is not produced by any node, graph input or initializer";
    }
    for (std::string &name : subgraphOuterNames(graph.node(i))) {
      if (!available.contains(name) && !producer.count(name))
        return emitError(nodeLoc(i))
               << "has a subgraph that reads '" << printable(name)
               << "', which no node, graph input or initializer produces";
      reads[i].push_back(std::move(name));
    }
  }

  SmallVector<int> cycle;
  FailureOr<SmallVector<int>> order = orderNodes(
      numNodes,
      [&](int node, SmallVectorImpl<int> &producers) {
        for (const std::string &input : graph.node(node).input())
          if (auto it = producer.find(input); it != producer.end())
            producers.push_back(it->second);
        for (const std::string &name : reads[node])
          if (auto it = producer.find(name); it != producer.end())
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
  auto input = llvm::find_if(graph.node(first).input(), fedByLast);
  if (input == graph.node(first).input().end())
    return emitError(nodeLoc(first))
           << "is part of a cycle: its subgraph reads '"
           << printable(*llvm::find_if(reads[first], fedByLast))
           << "', which depends on its own output";
  return emitError(nodeLoc(first))
         << "is part of a cycle: its input '" << printable(*input)
         << "' depends on its own output";
}

} // namespace kiln
