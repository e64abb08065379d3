//===- OnnxActivationOps.cpp - ONNX activations built from kiln ops -------===//
//
// LeakyRelu, Elu, Selu, Celu, Softplus, Mish, HardSigmoid, HardSwish,
// ThresholdedRelu and PRelu (what PyTorch's nn.LeakyReLU, ELU, SELU, CELU,
// Softplus, Mish, Hardsigmoid, Hardswish, Threshold-like and PReLU export
// to), each a few elementwise kiln ops (compiler/Import/Activations.h) with
// the attributes' defaults of onnx.ai.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/Onnx/OnnxOps.h"

#include "compiler/Import/Activations.h"

using namespace mlir;

namespace kiln {
namespace {

/// The node's float input, or null (with an error) when it is not float.
Value floatInput(OnnxNode &node) {
  Value x = node.getInput(0);
  return succeeded(node.requireFloat(x, "an input")) ? x : Value();
}

/// An activation with one float attribute `name` (default `fallback`).
template <ActivationResult (*Build)(KilnOpBuilder &, Value, double)>
LogicalResult convertWithAlpha(OnnxNode &node, float fallback) {
  FailureOr<float> alpha = node.getFloatAttr("alpha", fallback);
  Value x = floatInput(node);
  if (failed(alpha) || !x)
    return failure();
  return node.setResult(0, Build(node.getBuilder(), x, *alpha));
}

LogicalResult convertLeakyRelu(OnnxNode &node) {
  return convertWithAlpha<buildLeakyRelu>(node, 0.01f);
}
LogicalResult convertCelu(OnnxNode &node) { return convertWithAlpha<buildCelu>(node, 1.0f); }
LogicalResult convertThresholdedRelu(OnnxNode &node) {
  return convertWithAlpha<buildThresholdedRelu>(node, 1.0f);
}

LogicalResult convertElu(OnnxNode &node) {
  FailureOr<float> alpha = node.getFloatAttr("alpha", 1.0f);
  Value x = floatInput(node);
  if (failed(alpha) || !x)
    return failure();
  return node.setResult(0, buildElu(node.getBuilder(), x, *alpha));
}

LogicalResult convertSelu(OnnxNode &node) {
  FailureOr<float> alpha = node.getFloatAttr("alpha", 1.67326319217681884765625f);
  FailureOr<float> gamma = node.getFloatAttr("gamma", 1.05070102214813232421875f);
  Value x = floatInput(node);
  if (failed(alpha) || failed(gamma) || !x)
    return failure();
  return node.setResult(0, buildElu(node.getBuilder(), x, *alpha, *gamma));
}

LogicalResult convertHardSigmoid(OnnxNode &node) {
  FailureOr<float> alpha = node.getFloatAttr("alpha", 0.2f);
  FailureOr<float> beta = node.getFloatAttr("beta", 0.5f);
  Value x = floatInput(node);
  if (failed(alpha) || failed(beta) || !x)
    return failure();
  return node.setResult(0, buildHardSigmoid(node.getBuilder(), x, *alpha, *beta));
}

template <ActivationResult (*Build)(KilnOpBuilder &, Value)>
LogicalResult convertPlain(OnnxNode &node) {
  Value x = floatInput(node);
  return x ? node.setResult(0, Build(node.getBuilder(), x)) : failure();
}

LogicalResult convertPRelu(OnnxNode &node) {
  Value x = floatInput(node);
  if (!x)
    return failure();
  Value slope = node.getInput(1);
  if (failed(node.requireFloat(slope, "a slope")))
    return failure();
  return node.setResult(0, buildPRelu(node.getBuilder(), x, slope));
}

constexpr OnnxOpConversion kActivationOps[] = {
    {"LeakyRelu", 1, 1, 1, "alpha", convertLeakyRelu, 6},
    {"Elu", 1, 1, 1, "alpha", convertElu, 6},
    {"Selu", 1, 1, 1, "alpha gamma", convertSelu, 6},
    {"Celu", 1, 1, 1, "alpha", convertCelu, 12},
    {"ThresholdedRelu", 1, 1, 1, "alpha", convertThresholdedRelu, 10},
    {"HardSigmoid", 1, 1, 1, "alpha beta", convertHardSigmoid, 6},
    {"HardSwish", 1, 1, 1, "", convertPlain<buildHardSwish>, 14},
    {"Softplus", 1, 1, 1, "", convertPlain<buildSoftplus>},
    {"Mish", 1, 1, 1, "", convertPlain<buildMish>, 18},
    {"PRelu", 2, 2, 1, "", convertPRelu, 7},
};

} // namespace

ArrayRef<OnnxOpConversion> getOnnxActivationOps() { return kActivationOps; }

} // namespace kiln
