//===- OnnxEinsumOps.cpp - ONNX Einsum ------------------------------------===//
//
// Einsum, built by compiler/Import/Einsum.cpp.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/Onnx/OnnxOps.h"

#include "compiler/Import/Einsum.h"

using namespace mlir;

namespace kiln {
namespace {

LogicalResult convertEinsum(OnnxNode &node) {
  FailureOr<std::string> equation = node.getStringAttr("equation", "");
  if (failed(equation))
    return failure();
  return buildEinsum(node, *equation, node.getNumInputs());
}

constexpr OnnxOpConversion kEinsumOps[] = {
    {"Einsum", 1, OnnxOpConversion::kVariadic, 1, "equation", convertEinsum, 12},
};

} // namespace

ArrayRef<OnnxOpConversion> getOnnxEinsumOps() { return kEinsumOps; }

} // namespace kiln
