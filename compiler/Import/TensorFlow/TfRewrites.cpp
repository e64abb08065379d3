//===- TfRewrites.cpp - Helpers of the GraphDef rewrites ------------------===//

#include "compiler/Import/TensorFlow/TfRewrites.h"

#include "compiler/Import/TensorFlow/TfTensor.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

namespace kiln {

std::optional<SmallVector<int64_t>>
readSmallConstantInts(const TfGraph &graph, TfOutputRef ref,
                      const std::function<Location(int)> &nodeLoc, bool &broken, int maxRank,
                      SmallVectorImpl<int64_t> *shape) {
  constexpr int64_t kMaxElements = 8;
  if (ref.node < 0 || graph.node(ref.node).op() != "Const")
    return std::nullopt;
  const tensorflow::NodeDef &node = graph.node(ref.node);
  auto value = node.attr().find("value");
  if (value == node.attr().end() ||
      value->second.value_case() != tensorflow::AttrValue::kTensor)
    return std::nullopt;
  // The shape first: a Const declared huge and holding nothing decodes to
  // a splat, which iterating would not survive.
  FailureOr<SmallVector<int64_t>> dims = getTfShape(value->second.tensor().tensor_shape());
  if (failed(dims) || static_cast<int>(dims->size()) > maxRank)
    return std::nullopt;
  int64_t elements = 1;
  for (int64_t d : *dims) {
    if (d < 0 || d > kMaxElements)
      return std::nullopt;
    elements *= d;
  }
  if (elements > kMaxElements)
    return std::nullopt;
  FailureOr<DenseElementsAttr> decoded =
      decodeTfTensor(value->second.tensor(), nodeLoc(ref.node));
  if (failed(decoded)) {
    broken = true;
    return std::nullopt;
  }
  if (!llvm::isa<IntegerType>(decoded->getElementType()))
    return std::nullopt;
  if (shape)
    shape->assign(dims->begin(), dims->end());
  SmallVector<int64_t> ints;
  for (const APInt &v : decoded->getValues<APInt>())
    ints.push_back(v.getSExtValue());
  return ints;
}

std::string firstDataInput(const tensorflow::NodeDef &node) {
  for (const std::string &input : node.input())
    if (!llvm::StringRef(input).starts_with("^"))
      return input;
  return {};
}

void makeNoOp(tensorflow::NodeDef &node) {
  node.set_op("NoOp");
  node.clear_input();
  node.clear_attr();
}

} // namespace kiln
