//===- OnnxLoopBody.h - Reading an ONNX Loop's body -------------*- C++ -*-===//
//
// What a Loop conversion reads of the subgraphs it holds: their nodes by
// output (only the branches of an If that can run), the numbers their
// Constant nodes hold, conditions their constants decide. The body is read
// as ONNX protos: nothing of it is imported as it stands.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORT_ONNX_ONNXLOOPBODY_H
#define KILN_COMPILER_IMPORT_ONNX_ONNXLOOPBODY_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include "onnx/onnx_pb.h"

#include <initializer_list>
#include <optional>

namespace kiln {

bool isOneOf(llvm::StringRef opType, std::initializer_list<llvm::StringRef> types);

/// Input `i` of `node`, or "" past its inputs (a malformed file).
const std::string &nodeInput(const onnx::NodeProto &node, int i);

/// The int attribute `name` of `node`, or `defaultValue`.
int64_t intAttribute(const onnx::NodeProto &node, llvm::StringRef name, int64_t defaultValue);

/// A one-element integer or boolean tensor's value, read from the proto.
std::optional<int64_t> scalarOf(const onnx::TensorProto &tensor);

/// The nodes of a Loop's body and of every graph nested in it that can run,
/// by output: of an If whose condition its own constants decide (the dynamo
/// exporter, unoptimized, chooses EmbeddingBag's mode so), the branch taken.
class LoopBodyNodes {
public:
  explicit LoopBodyNodes(const onnx::GraphProto &body) { add(body); }
  const onnx::NodeProto *producer(llvm::StringRef name) const { return producers.lookup(name); }
  bool isInside(llvm::StringRef name) const { return defined.contains(name); }
  llvm::ArrayRef<const onnx::NodeProto *> all() const { return nodes; }
  /// Whether `graph` (the body or a graph nested in it) can run.
  bool isLive(const onnx::GraphProto &graph) const { return live.contains(&graph); }
  /// Whether `name` holds zeros only: a Constant, a subgraph initializer or
  /// an Expand of one (an empty bag's row).
  bool isZeros(llvm::StringRef name) const;
  /// A condition the body's constants decide: a constant, Equal of two, Not.
  std::optional<bool> condition(llvm::StringRef name) const;

private:
  void add(const onnx::GraphProto &graph);
  /// A Constant's value, when it is one integer (a Cast to bool makes it 0
  /// or 1).
  std::optional<int64_t> constant(llvm::StringRef name) const;

  llvm::StringMap<const onnx::NodeProto *> producers;
  llvm::StringMap<const onnx::TensorProto *> initializers;
  llvm::StringSet<> defined;
  llvm::SmallPtrSet<const onnx::GraphProto *, 8> live;
  llvm::SmallVector<const onnx::NodeProto *> nodes;
};

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_ONNX_ONNXLOOPBODY_H
