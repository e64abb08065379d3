//===- TfGraph.cpp - The node graph of a TensorFlow GraphDef --------------===//

#include "compiler/Import/TensorFlow/TfGraph.h"

#include "compiler/Import/TensorFlow/TfFrames.h"

#include "compiler/Import/DiagnosticText.h"
#include "compiler/Import/NodeOrder.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;

namespace kiln {
namespace {

bool isIdentityOp(StringRef op) { return op == "Identity" || op == "Snapshot"; }

bool isFloatType(int dataType) {
  return dataType == tensorflow::DT_FLOAT || dataType == tensorflow::DT_HALF ||
         dataType == tensorflow::DT_BFLOAT16;
}

/// The name scope of a node: its name up to the last '/'.
StringRef scopeOf(StringRef name) {
  size_t slash = name.rfind('/');
  return slash == StringRef::npos ? StringRef() : name.take_front(slash);
}

/// Whether a node is in the scope tf.nn.batch_normalization opens.
bool inBatchNormScope(const tensorflow::NodeDef &node) {
  StringRef scope = scopeOf(node.name());
  return scope == "batchnorm" || scope.ends_with("/batchnorm");
}

int getDataType(const tensorflow::NodeDef &node, StringRef attr) {
  auto it = node.attr().find(attr.str());
  return it == node.attr().end() ? tensorflow::DT_INVALID : it->second.type();
}

} // namespace

FailureOr<TfInputName> parseTfInputName(StringRef input) {
  TfInputName name;
  if (input.consume_front("^"))
    name.control = true;
  auto [node, output] = input.rsplit(':');
  name.node = node;
  if (node.size() != input.size()) {
    // "name:k": k must be a number (names never hold ':').
    if (name.control || output.empty() || output.getAsInteger(10, name.output))
      return failure();
  }
  if (name.node.empty())
    return failure();
  return name;
}

std::string tfValueKey(StringRef node, unsigned output) {
  return (node + ":" + Twine(output)).str();
}

LogicalResult TfGraph::index() {
  int count = size();
  for (int i = 0; i < count; ++i) {
    const std::string &name = graph.node(i).name();
    if (name.empty())
      return emitError(nodeLoc(i)) << "has no name";
    auto [it, inserted] = names.try_emplace(name, i + 1);
    if (!inserted)
      return emitError(nodeLoc(i))
             << "has the name of node #" << it->second - 1 << " (names must "
             << "be unique)";
  }
  inputs.resize(count);
  consumers.resize(count);
  for (int i = 0; i < count; ++i) {
    for (auto [position, input] : llvm::enumerate(graph.node(i).input())) {
      FailureOr<TfInputName> name = parseTfInputName(input);
      if (failed(name))
        return emitError(nodeLoc(i))
               << "input #" << position << " '" << printable(input)
               << "' is not 'node', 'node:k' or '^node'";
      int producer = find(name->node);
      if (producer < 0)
        return emitError(nodeLoc(i))
               << "input #" << position << " '" << printable(input)
               << "' names no node in the graph";
      if (name->control)
        continue;
      if (!inputs[i].empty() && inputs[i].size() != position)
        return emitError(nodeLoc(i))
               << "input #" << position << " '" << printable(input)
               << "' follows a control input (control inputs come last)";
      inputs[i].push_back({producer, name->output});
      if (!llvm::is_contained(consumers[producer], i))
        consumers[producer].push_back(i);
    }
  }
  return success();
}

bool TfGraph::isConsumed(TfOutputRef ref) const {
  return llvm::any_of(consumers[ref.node], [&](int consumer) {
    return llvm::is_contained(inputs[consumer], ref);
  });
}

TfOutputRef TfGraph::skipIdentities(TfOutputRef ref) const {
  // Identity chains cannot loop back on themselves in a graph order() accepts;
  // the bound keeps a cyclic file from hanging this walk.
  for (int steps = 0;
       steps < size() && isIdentityOp(graph.node(ref.node).op()) &&
       !inputs[ref.node].empty();
       ++steps)
    ref = inputs[ref.node].front();
  return ref;
}

SmallVector<TfOutputRef> TfGraph::getDanglingOutputs() const {
  SmallVector<TfOutputRef> outputs;
  for (int i = 0, e = size(); i < e; ++i) {
    StringRef op = graph.node(i).op();
    if (consumers[i].empty() && op != "NoOp" && op != "Const" &&
        op != "Placeholder")
      outputs.push_back({i, 0});
  }
  return outputs;
}

std::vector<bool> TfGraph::getNeeded(ArrayRef<TfOutputRef> outputs) const {
  std::vector<bool> needed(size(), false);
  SmallVector<int> work;
  for (TfOutputRef output : outputs)
    work.push_back(output.node);
  while (!work.empty()) {
    int i = work.pop_back_val();
    if (needed[i])
      continue;
    needed[i] = true;
    for (TfOutputRef input : inputs[i])
      work.push_back(input.node);
  }
  return needed;
}

FailureOr<SmallVector<int>>
TfGraph::order(const std::vector<bool> &needed, const TfFrames &frames) const {
  SmallVector<int> nodes, compact(size(), -1);
  for (int i = 0, e = size(); i < e; ++i) {
    if (needed[i]) {
      compact[i] = nodes.size();
      nodes.push_back(i);
    }
  }
  SmallVector<int> cycle;
  FailureOr<SmallVector<int>> order = orderNodes(
      nodes.size(),
      [&](int n, SmallVectorImpl<int> &producers) {
        for (TfOutputRef input : inputs[nodes[n]])
          if (!frames.isBackEdge(*this, nodes[n], input))
            producers.push_back(compact[input.node]);
        SmallVector<int> more;
        frames.addFrameProducers(*this, nodes[n], more);
        for (int producer : more)
          if (compact[producer] >= 0)
            producers.push_back(compact[producer]);
      },
      cycle);
  if (succeeded(order)) {
    for (int &n : *order)
      n = nodes[n];
    return order;
  }
  // A while loop's back edges are cut: a cycle through control flow ops is
  // one a frame does not hold (a NextIteration with no Merge, say).
  for (int n : cycle) {
    StringRef op = graph.node(nodes[n]).op();
    if (op == "NextIteration" || op == "Merge" || op == "Enter" || op == "Switch" ||
        op == "LoopCond" || op == "Exit")
      return emitError(nodeLoc(nodes[n]))
             << "is part of a cycle through control flow that is no while loop kiln can "
                "unroll (an Enter, Merges of it and NextIterations, a LoopCond, Switches "
                "and Exits)";
  }
  // Each node of the cycle feeds the next, the last feeds the first.
  InFlightDiagnostic error = emitError(nodeLoc(nodes[cycle.front()]));
  error << "is part of a cycle: ";
  for (int n : cycle)
    error << "'" << printable(graph.node(nodes[n]).name()) << "' -> ";
  return error << "'" << printable(graph.node(nodes[cycle.front()]).name())
               << "'";
}

std::vector<bool> TfGraph::findFrozenVariables() const {
  std::vector<bool> variables(size(), false);
  for (int i = 0, e = size(); i < e; ++i) {
    // An Identity is what freezing makes of ReadVariableOp (and TF1's
    // `<variable>/read`); a GatherV2 of a Const what it makes of
    // ResourceGather (an embedding lookup).
    StringRef op = graph.node(i).op();
    bool reads = isIdentityOp(op) || op == "GatherV2" || op == "Gather";
    if (!reads || inputs[i].empty())
      continue;
    int source = inputs[i].front().node;
    const tensorflow::NodeDef &node = graph.node(source);
    if (node.op() == "Const" && isFloatType(getDataType(node, "dtype")))
      variables[source] = true;
  }
  return variables;
}

int TfGraph::constantBehind(TfOutputRef ref) const {
  ref = skipIdentities(ref);
  return isOp(ref, "Const") ? ref.node : -1;
}

std::vector<bool> TfGraph::findMovingStatistics() const {
  std::vector<bool> statistics(size(), false);
  auto mark = [&](TfOutputRef ref) {
    // Keras 3 reshapes the statistics for a BatchNormalization given its
    // axis (ResNet's and EfficientNet's axis=3) to broadcast along it.
    ref = skipIdentities(ref);
    if (isOp(ref, "Reshape") && !inputs[ref.node].empty())
      ref = inputs[ref.node].front();
    if (int c = constantBehind(ref); c >= 0)
      statistics[c] = true;
  };
  for (int i = 0, e = size(); i < e; ++i) {
    const tensorflow::NodeDef &node = graph.node(i);
    StringRef op = node.op();
    ArrayRef<TfOutputRef> in = inputs[i];
    // Keras' and tf.compat.v1's variable names.
    if (op == "Const" && (StringRef(node.name()).ends_with("moving_mean") ||
                          StringRef(node.name()).ends_with("moving_variance")))
      statistics[i] = true;
    // FusedBatchNorm(x, scale, offset, mean, variance).
    if (op.starts_with("FusedBatchNorm") && in.size() == 5) {
      mark(in[3]);
      mark(in[4]);
    }
    if (!inBatchNormScope(node))
      continue;
    // tf.nn.batch_normalization: inv = rsqrt(variance + epsilon) (* scale);
    // x * inv + (offset - mean * inv), or + (-mean * inv) without offset.
    if (op == "Rsqrt" && in.size() == 1 &&
        (isOp(in[0], "AddV2") || isOp(in[0], "Add")) &&
        inBatchNormScope(graph.node(in[0].node)) && !inputs[in[0].node].empty())
      mark(inputs[in[0].node].front());
    if (op == "Sub" && in.size() == 2 && isOp(in[1], "Mul") &&
        inBatchNormScope(graph.node(in[1].node)) && !inputs[in[1].node].empty())
      mark(inputs[in[1].node].front());
    if (op == "Neg" && in.size() == 1)
      mark(in[0]);
  }
  std::vector<bool> variables = findFrozenVariables();
  for (int i = 0, e = size(); i < e; ++i)
    statistics[i] = statistics[i] && variables[i];
  return statistics;
}

} // namespace kiln
