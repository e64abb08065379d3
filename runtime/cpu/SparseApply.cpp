//===- SparseApply.cpp - Lazy optimizer updates of embedding rows ---------===//

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

} // namespace

void sparseApply(const SparseHyperParameters &hyper, const SparseUpdate &update,
                 std::vector<float> &scratch) {
  // Sum duplicate ids: unique rows in order of first appearance.
  std::unordered_map<int64_t, int64_t> position;
  position.reserve(static_cast<size_t>(update.count) * 2);
  std::vector<int64_t> order;
  scratch.assign(static_cast<size_t>(update.count * update.rowWidth), 0.0f);
  for (int64_t i = 0; i < update.count; ++i) {
    int64_t id = idAt(update, i);
    if (id < 0 || id >= update.tableRows)
      continue;
    auto [it, inserted] = position.try_emplace(id, static_cast<int64_t>(order.size()));
    if (inserted)
      order.push_back(id);
    float *sum = scratch.data() + it->second * update.rowWidth;
    const float *row = update.rows + i * update.rowWidth;
    for (int64_t j = 0; j < update.rowWidth; ++j)
      sum[j] += row[j];
  }
  for (size_t k = 0; k < order.size(); ++k)
    updateRow(hyper, update, order[k], scratch.data() + k * update.rowWidth);
}

} // namespace kiln::cpu
