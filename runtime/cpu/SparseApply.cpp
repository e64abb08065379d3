//===- SparseApply.cpp - Optimizer updates of embedding rows --------------===//

#include "runtime/cpu/SparseApply.h"

#include <cmath>
#include <cstring>
#include <unordered_map>

namespace kiln::cpu {
namespace {

int64_t idAt(const SparseUpdate &update, int64_t i) {
  return update.indices64 ? static_cast<const int64_t *>(update.indices)[i]
                          : static_cast<const int32_t *>(update.indices)[i];
}

/// One row's update in f32: the dense kiln.apply_* lowering's math, except
/// Adam, which is PyTorch's SparseAdam (TensorFlow's LazyAdam): epsilon is
/// added to sqrt(v) before the bias correction, not after.
void updateRow(const SparseHyperParameters &h, const SparseUpdate &u, int64_t row,
               const float *g) {
  int64_t width = u.rowWidth;
  float *p = u.param + row * width;
  float lr = *u.lr;
  switch (h.optimizer) {
  case SparseOptimizer::Sgd:
    for (int64_t j = 0; j < width; ++j)
      p[j] -= lr * g[j];
    break;
  case SparseOptimizer::Momentum: {
    float *v = u.slots[0] + row * width;
    float mu = static_cast<float>(h.momentum);
    for (int64_t j = 0; j < width; ++j) {
      v[j] = mu * v[j] + g[j];
      p[j] -= lr * (h.nesterov ? g[j] + mu * v[j] : v[j]);
    }
    break;
  }
  case SparseOptimizer::Adam: {
    float *m = u.slots[0] + row * width, *v = u.slots[1] + row * width;
    float b1 = static_cast<float>(h.beta1), b2 = static_cast<float>(h.beta2);
    // 1 - beta from the double beta: 1 - f32(0.999) is 1.3e-5 off 0.001.
    float oneMinusB1 = static_cast<float>(1.0 - h.beta1);
    float oneMinusB2 = static_cast<float>(1.0 - h.beta2);
    // The bias corrections in double, as PyTorch computes them.
    double c1 = 1.0 - std::pow(h.beta1, static_cast<double>(*u.step));
    double c2 = 1.0 - std::pow(h.beta2, static_cast<double>(*u.step));
    float stepSize = static_cast<float>(static_cast<double>(lr) * std::sqrt(c2) / c1);
    float eps = static_cast<float>(h.epsilon);
    float decay = 1.0f - lr * static_cast<float>(h.weightDecay);
    for (int64_t j = 0; j < width; ++j) {
      float param = h.weightDecay != 0 ? p[j] * decay : p[j];
      m[j] = b1 * m[j] + oneMinusB1 * g[j];
      v[j] = b2 * v[j] + oneMinusB2 * (g[j] * g[j]);
      p[j] = param - stepSize * (m[j] / (std::sqrt(v[j]) + eps));
    }
    break;
  }
  case SparseOptimizer::Adagrad: {
    float *acc = u.slots[0] + row * width;
    float eps = static_cast<float>(h.epsilon);
    for (int64_t j = 0; j < width; ++j) {
      acc[j] += g[j] * g[j];
      p[j] -= lr * g[j] / (std::sqrt(acc[j]) + eps);
    }
    break;
  }
  }
}

/// One row's dense update, the kiln.apply_momentum / kiln.apply_adam
/// lowering's math in the same f32 operations (passes/Conversion/
/// KilnToLinalg/TrainingPatterns.cpp), so that a table updated densely
/// matches a dense variable bit for bit.
void denseRow(const SparseHyperParameters &h, const SparseUpdate &u, int64_t row,
              const float *g) {
  int64_t width = u.rowWidth;
  float *p = u.param + row * width;
  float lr = *u.lr;
  if (h.optimizer == SparseOptimizer::Momentum) {
    float *v = u.slots[0] + row * width;
    float mu = static_cast<float>(h.momentum);
    for (int64_t j = 0; j < width; ++j) {
      v[j] = mu * v[j] + g[j];
      float step = h.nesterov ? g[j] + mu * v[j] : v[j];
      p[j] = p[j] - lr * step;
    }
    return;
  }
  float *m = u.slots[0] + row * width, *v = u.slots[1] + row * width;
  float b1 = static_cast<float>(h.beta1), b2 = static_cast<float>(h.beta2);
  float oneMinusB1 = static_cast<float>(1.0 - h.beta1);
  float oneMinusB2 = static_cast<float>(1.0 - h.beta2);
  double t = static_cast<double>(*u.step);
  float c1 = static_cast<float>(1.0 - std::pow(h.beta1, t));
  float c2 = static_cast<float>(1.0 - std::pow(h.beta2, t));
  float eps = static_cast<float>(h.epsilon);
  float decay = 1.0f - lr * static_cast<float>(h.weightDecay);
  for (int64_t j = 0; j < width; ++j) {
    float param = h.weightDecay != 0 ? p[j] * decay : p[j];
    m[j] = b1 * m[j] + oneMinusB1 * g[j];
    v[j] = b2 * v[j] + oneMinusB2 * (g[j] * g[j]);
    float denom = std::sqrt(v[j] / c2) + eps;
    p[j] = param - (lr * (m[j] / c1)) / denom;
  }
}

} // namespace

void denseApply(const SparseHyperParameters &hyper, float *param, const std::vector<float *> &slots,
                const float *grad, int64_t count, float lr, float step) {
  SparseUpdate update{param, slots, nullptr, false, nullptr, 1, 1, count, &lr, &step};
  bool stateful = hyper.optimizer == SparseOptimizer::Momentum ||
                  hyper.optimizer == SparseOptimizer::Adam;
  if (stateful)
    denseRow(hyper, update, 0, grad);
  else
    updateRow(hyper, update, 0, grad);
}

void sparseApply(const SparseHyperParameters &hyper, const SparseUpdate &update,
                 SparseScratch &scratch) {
  // Sum duplicate ids: unique rows in order of first appearance.
  std::unordered_map<int64_t, int64_t> position;
  position.reserve(static_cast<size_t>(update.count) * 2);
  std::vector<int64_t> order;
  std::vector<float> &sums = scratch.sums;
  sums.assign(static_cast<size_t>(update.count * update.rowWidth), 0.0f);
  for (int64_t i = 0; i < update.count; ++i) {
    int64_t id = idAt(update, i);
    if (id < 0 || id >= update.tableRows)
      continue;
    auto [it, inserted] = position.try_emplace(id, static_cast<int64_t>(order.size()));
    if (inserted)
      order.push_back(id);
    float *sum = sums.data() + it->second * update.rowWidth;
    const float *row = update.rows + i * update.rowWidth;
    for (int64_t j = 0; j < update.rowWidth; ++j)
      sum[j] += row[j];
  }
  bool stateful = hyper.optimizer == SparseOptimizer::Momentum ||
                  hyper.optimizer == SparseOptimizer::Adam;
  if (!hyper.dense || !stateful) {
    for (size_t k = 0; k < order.size(); ++k)
      updateRow(hyper, update, order[k], sums.data() + k * update.rowWidth);
    return;
  }
  // Every row: its summed gradient, or zeros.
  std::vector<int64_t> &rowSlot = scratch.rowSlot;
  rowSlot.assign(static_cast<size_t>(update.tableRows), -1);
  for (size_t k = 0; k < order.size(); ++k)
    rowSlot[order[k]] = static_cast<int64_t>(k);
  std::vector<float> zeros(static_cast<size_t>(update.rowWidth), 0.0f);
  for (int64_t row = 0; row < update.tableRows; ++row) {
    int64_t k = rowSlot[row];
    denseRow(hyper, update, row,
             k < 0 ? zeros.data() : sums.data() + k * update.rowWidth);
  }
}

} // namespace kiln::cpu
