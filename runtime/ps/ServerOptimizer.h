//===- ServerOptimizer.h - The optimizer a parameter server applies -*- C++ -*-===//
//
// In parameter-server training the optimizer runs on the servers: each
// applies the train spec's optimizer to the gradients of the rows it holds,
// with the learning-rate schedule of kiln-expand-optimizer and the same f32
// math as the compiled kiln.apply_* kernels (runtime/cpu/SparseApply.h), so
// a synchronous run matches one process within float rounding.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_PS_SERVEROPTIMIZER_H
#define KILN_RUNTIME_PS_SERVEROPTIMIZER_H

#include "runtime/cpu/SparseApply.h"

#include <cstdint>
#include <string>

namespace kiln::ps {

struct OptimizerSpec {
  std::string kind = "sgd"; ///< sgd, momentum, adam, adamw, adagrad.
  double learningRate = 0.01, momentum = 0.9, beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8;
  double weightDecay = 0.0, initialAccumulator = 0.0;
  bool nesterov = false;
  /// Embedding tables: only looked-up rows change (lazy), or every row of a
  /// fixed table does (dense, as torch.optim and Keras).
  bool lazySparse = false;
  std::string schedule = "constant"; ///< constant, linear_warmup, cosine_decay.
  int64_t warmupSteps = 0, decaySteps = 0;
  double minLearningRate = 0.0;

  /// Slots each variable has: momentum's velocity, Adam's m and v,
  /// Adagrad's accumulator.
  int slotCount() const;
  /// The first value of the slots (Adagrad's initial accumulator).
  float slotInitialValue() const;
  /// The rate of optimizer step `step` (1-based), as kiln-expand-optimizer
  /// computes it in f32.
  float learningRateAt(int64_t step) const;
  /// The hyper-parameters of runtime/cpu's update functions; `table` says
  /// whether the variable is an embedding table (sparse updates).
  cpu::SparseHyperParameters hyperParameters(bool table) const;
  /// Empty when the spec is one the servers can apply, else why not.
  std::string check() const;
};

} // namespace kiln::ps

#endif // KILN_RUNTIME_PS_SERVEROPTIMIZER_H
