//===- OnnxIfOps.cpp - ONNX If with a condition known at import time ------===//
//
// A static graph has no branches: an If whose condition is known at import
// time (the dynamo exporter writes them, unoptimized, for Python-level
// choices such as EmbeddingBag's include_last_offset) imports the branch it
// takes into the graph; any other If is refused.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/DiagnosticText.h"
#include "compiler/Import/Onnx/OnnxOps.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;

namespace kiln {
namespace {

LogicalResult convertIf(OnnxNode &node) {
  DenseElementsAttr condition = node.getConstantInput(0);
  if (!condition || condition.getNumElements() != 1)
    return node.emitError() << "has a condition known only when the model runs; kiln imports "
                               "an If whose condition is known at import time (a static "
                               "graph has no branches)";
  bool taken = llvm::isa<FloatType>(condition.getElementType())
                   ? !(*condition.getValues<APFloat>().begin()).isZero()
                   : !(*condition.getValues<APInt>().begin()).isZero();
  StringRef name = taken ? "then_branch" : "else_branch";
  const onnx::AttributeProto *branch = node.getAttribute(name);
  if (!branch || !branch->has_g())
    return node.emitError() << "needs a graph attribute '" << name << "'";
  const onnx::GraphProto &graph = branch->g();
  if (static_cast<unsigned>(graph.output_size()) != node.getNumOutputs())
    return node.emitError() << "has " << node.getNumOutputs() << " output"
                            << (node.getNumOutputs() == 1 ? "" : "s") << ", but its " << name
                            << " has " << graph.output_size();
  if (graph.input_size() > 0)
    return node.emitError() << "has a " << name << " that declares " << graph.input_size()
                            << (graph.input_size() == 1 ? " input" : " inputs")
                            << " (an If's branches take none)";
  return node.importBranch(graph, name);
}

constexpr OnnxOpConversion kIfOps[] = {
    {"If", 1, 1, OnnxOpConversion::kVariadic, "then_branch else_branch", convertIf, 1},
};

} // namespace

ArrayRef<OnnxOpConversion> getOnnxIfOps() { return kIfOps; }

} // namespace kiln
