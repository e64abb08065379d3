//===- ServerOptimizer.cpp - The optimizer a parameter server applies -----===//

#include "runtime/ps/ServerOptimizer.h"

#include <algorithm>
#include <cmath>

namespace kiln::ps {

int OptimizerSpec::slotCount() const {
  if (kind == "momentum" || kind == "adagrad")
    return 1;
  if (kind == "adam" || kind == "adamw")
    return 2;
  return 0;
}

float OptimizerSpec::slotInitialValue() const {
  return kind == "adagrad" ? static_cast<float>(initialAccumulator) : 0.0f;
}

float OptimizerSpec::learningRateAt(int64_t stepNumber) const {
  // The f32 operations of kiln-expand-optimizer's learningRate().
  float step = static_cast<float>(stepNumber);
  float base = static_cast<float>(learningRate);
  float warmup = static_cast<float>(warmupSteps);
  float warm = warmupSteps > 0 ? base * std::min(step / warmup, 1.0f) : base;
  if (schedule != "cosine_decay")
    return schedule == "linear_warmup" ? warm : base;
  float span = static_cast<float>(
      std::max(1.0, static_cast<double>(decaySteps) - static_cast<double>(warmupSteps)));
  float progress = std::min(std::max((step - warmup) / span, 0.0f), 1.0f);
  float cosine = std::cos(progress * static_cast<float>(M_PI));
  float decayed = static_cast<float>(minLearningRate) +
                  (cosine + 1.0f) * static_cast<float>(0.5 * (learningRate - minLearningRate));
  if (warmupSteps <= 0)
    return decayed;
  return step <= warmup ? warm : decayed;
}

cpu::SparseHyperParameters OptimizerSpec::hyperParameters(bool table) const {
  cpu::SparseHyperParameters hyper;
  hyper.optimizer = kind == "momentum"                    ? cpu::SparseOptimizer::Momentum
                    : kind == "adam" || kind == "adamw"   ? cpu::SparseOptimizer::Adam
                    : kind == "adagrad"                   ? cpu::SparseOptimizer::Adagrad
                                                          : cpu::SparseOptimizer::Sgd;
  hyper.momentum = momentum;
  hyper.nesterov = nesterov;
  hyper.beta1 = beta1;
  hyper.beta2 = beta2;
  hyper.epsilon = epsilon;
  hyper.weightDecay = kind == "adamw" ? weightDecay : 0.0;
  hyper.dense = table && !lazySparse;
  return hyper;
}

std::string OptimizerSpec::check() const {
  if (kind != "sgd" && kind != "momentum" && kind != "adam" && kind != "adamw" &&
      kind != "adagrad")
    return "unknown optimizer '" + kind + "'";
  if (schedule != "constant" && schedule != "linear_warmup" && schedule != "cosine_decay")
    return "unknown learning-rate schedule '" + schedule + "'";
  return {};
}

} // namespace kiln::ps
