//===- TfRewrites.h - Helpers of the GraphDef rewrites ----------*- C++ -*-===//
//
// What the rewrites that run on a GraphDef before it is imported share
// (TfSparseLookups.cpp, TfDilatedConvs.cpp): reading the small constants a
// pattern is checked against, naming a node's inputs, and emptying the
// nodes a rewrite absorbs.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORT_TENSORFLOW_TFREWRITES_H
#define KILN_COMPILER_IMPORT_TENSORFLOW_TFREWRITES_H

#include "compiler/Import/TensorFlow/TfGraph.h"

#include <functional>
#include <optional>
#include <string>

namespace kiln {

/// The integer values of the Const `ref` names (of rank at most `maxRank`,
/// at most 8 elements: axes, bounds, block shapes), or nullopt for anything
/// else; `dims`, when given, receives its shape. A Const that does not
/// decode is reported (one error at its location) and sets `broken`.
std::optional<llvm::SmallVector<int64_t>>
readSmallConstantInts(const TfGraph &graph, TfOutputRef ref,
                      const std::function<mlir::Location(int)> &nodeLoc, bool &broken,
                      int maxRank = 1, llvm::SmallVectorImpl<int64_t> *dims = nullptr);

/// What the rewrites' pattern matchers share: the graph they walk and the
/// small constants they read.
class TfPatternMatcher {
public:
  /// Set when a constant of a pattern failed to decode (reported).
  bool broken = false;

protected:
  TfPatternMatcher(const TfGraph &graph, const std::function<mlir::Location(int)> &nodeLoc)
      : graph(graph), nodeLoc(nodeLoc) {}

  /// Data input `k` of `node`, or an invalid ref.
  TfOutputRef input(int node, unsigned k) const {
    llvm::ArrayRef<TfOutputRef> inputs = graph.getInputs(node);
    return k < inputs.size() ? inputs[k] : TfOutputRef{};
  }
  /// Whether `ref` is an output of a node of `op`.
  bool is(TfOutputRef ref, llvm::StringRef op) const {
    return ref.node >= 0 && graph.node(ref.node).op() == op;
  }
  /// Node `node`'s attributes, each its default when absent: an int (0), a
  /// type (DT_INVALID), a list of ints (empty), a string (empty).
  int64_t intAttr(int node, llvm::StringRef name) const {
    const tensorflow::AttrValue *value = attr(node, name);
    return value ? value->i() : 0;
  }
  int dataType(int node, llvm::StringRef name) const {
    const tensorflow::AttrValue *value = attr(node, name);
    return value ? value->type() : tensorflow::DT_INVALID;
  }
  llvm::SmallVector<int64_t> intsAttr(int node, llvm::StringRef name) const {
    const tensorflow::AttrValue *value = attr(node, name);
    if (!value)
      return {};
    return llvm::SmallVector<int64_t>(value->list().i().begin(), value->list().i().end());
  }
  std::string stringAttr(int node, llvm::StringRef name) const {
    const tensorflow::AttrValue *value = attr(node, name);
    return value ? value->s() : std::string();
  }
  std::optional<llvm::SmallVector<int64_t>>
  constantInts(TfOutputRef ref, int maxRank = 1, llvm::SmallVectorImpl<int64_t> *dims = nullptr) {
    return readSmallConstantInts(graph, ref, nodeLoc, broken, maxRank, dims);
  }

  const TfGraph &graph;
  const std::function<mlir::Location(int)> &nodeLoc;

private:
  const tensorflow::AttrValue *attr(int node, llvm::StringRef name) const {
    auto it = graph.node(node).attr().find(name.str());
    return it == graph.node(node).attr().end() ? nullptr : &it->second;
  }
};

/// The string naming a node's first data input (control inputs, `^name`,
/// may come anywhere in a file TensorFlow did not write).
std::string firstDataInput(const tensorflow::NodeDef &node);

/// Makes a node a NoOp with no inputs or attributes: what a rewrite
/// absorbed, which nothing reads any more.
void makeNoOp(tensorflow::NodeDef &node);

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_TENSORFLOW_TFREWRITES_H
