//===- Activations.h - Activation functions from kiln ops -------*- C++ -*-===//
//
// The activations ONNX and TensorFlow name as one op but kiln builds from
// elementwise ops (compare, select, exp, log, ...), so that autodiff trains
// through them: LeakyRelu, Elu and Selu, Celu, Softplus, Mish, HardSigmoid,
// HardSwish, ThresholdedRelu and PRelu. Each branch a select discards is
// kept finite (exp of min(x, 0), not of x), so that its gradient, masked
// to zero, is not inf * 0.
//
// Every function emits one error at the builder's location on failure.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORT_ACTIVATIONS_H
#define KILN_COMPILER_IMPORT_ACTIVATIONS_H

#include "compiler/Import/KilnOpBuilder.h"

namespace kiln {

using ActivationResult = mlir::FailureOr<mlir::Value>;

/// x > 0 ? x : alpha * x.
ActivationResult buildLeakyRelu(KilnOpBuilder &b, mlir::Value x, double alpha);
/// scale * (x > 0 ? x : alpha * (exp(x) - 1)): Elu (scale 1) and Selu.
ActivationResult buildElu(KilnOpBuilder &b, mlir::Value x, double alpha, double scale = 1);
/// x > 0 ? x : alpha * (exp(x / alpha) - 1).
ActivationResult buildCelu(KilnOpBuilder &b, mlir::Value x, double alpha);
/// log(1 + exp(x)), as x + log(1 + exp(-x)) where x > 0 (no overflow).
ActivationResult buildSoftplus(KilnOpBuilder &b, mlir::Value x);
/// x * tanh(softplus(x)).
ActivationResult buildMish(KilnOpBuilder &b, mlir::Value x);
/// max(0, min(1, alpha * x + beta)).
ActivationResult buildHardSigmoid(KilnOpBuilder &b, mlir::Value x, double alpha, double beta);
/// x * HardSigmoid(x) with alpha 1/6 and beta 1/2.
ActivationResult buildHardSwish(KilnOpBuilder &b, mlir::Value x);
/// x > alpha ? x : 0.
ActivationResult buildThresholdedRelu(KilnOpBuilder &b, mlir::Value x, double alpha);
/// x < 0 ? slope * x : x, `slope` broadcast to x (one way).
ActivationResult buildPRelu(KilnOpBuilder &b, mlir::Value x, mlir::Value slope);

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_ACTIVATIONS_H
