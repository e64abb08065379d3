//===- RuntimeSparseApplyTest.cpp - Optimizer updates of embedding rows ---===//

#include "runtime/cpu/SparseApply.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>

using namespace kiln;

namespace {

/// Adagrad on the rows `ids` name, the obvious way: each distinct id in
/// [0, rows) gets its rows summed in order, then acc += g², p -= lr g /
/// (sqrt(acc) + eps).
void referenceAdagrad(std::vector<float> &param, std::vector<float> &acc,
                      const std::vector<int64_t> &ids, const std::vector<float> &grads,
                      int64_t rows, int64_t width, float lr, float eps) {
  std::map<int64_t, std::vector<float>> sums;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= rows)
      continue;
    std::vector<float> &sum = sums[ids[i]];
    sum.resize(width, 0.0f);
    for (int64_t j = 0; j < width; ++j)
      sum[j] += grads[i * width + j];
  }
  for (auto &[id, g] : sums)
    for (int64_t j = 0; j < width; ++j) {
      float &a = acc[id * width + j];
      a += g[j] * g[j];
      param[id * width + j] -= lr * g[j] / (std::sqrt(a) + eps);
    }
}

// Tests lazy Adagrad over many calls sharing one scratch, against the
// reference, bit for bit: updates of 1 to 300 ids (the scratch's id table
// grows and is reused), ids repeated, negative or past the table (skipped),
// and ids far apart that share their low 14 bits (multiples of 2^14).
TEST(RuntimeSparseApplyTest, SumsRepeatedIdsOverManyCalls) {
  const int64_t rows = int64_t(1) << 20, width = 2;
  std::mt19937 rng(7);
  std::vector<int64_t> named;
  for (int64_t k = 0; k < 64; ++k) {
    named.push_back(k << 14);
    named.push_back(k + 1);
  }
  std::uniform_real_distribution<float> value(-1, 1);
  std::vector<float> param(rows * width), acc(rows * width, 0.1f);
  for (int64_t id : named)
    for (int64_t j = 0; j < width; ++j)
      param[id * width + j] = value(rng);
  std::vector<float> wantParam = param, wantAcc = acc;
  cpu::SparseHyperParameters hyper;
  hyper.optimizer = cpu::SparseOptimizer::Adagrad;
  hyper.epsilon = 1e-7;
  float lr = 0.05f, step = 1;
  cpu::SparseScratch scratch;
  for (int call = 0; call < 40; ++call) {
    int64_t count = 1 + static_cast<int64_t>(rng() % (call % 3 == 0 ? 300 : 20));
    std::vector<int64_t> ids(count);
    for (int64_t &id : ids) {
      uint32_t pick = rng() % 100;
      id = pick < 3   ? -1 - int64_t(pick)
           : pick < 5 ? rows + pick
                      : named[rng() % named.size()];
    }
    std::vector<float> grads(count * width);
    for (float &g : grads)
      g = value(rng);
    referenceAdagrad(wantParam, wantAcc, ids, grads, rows, width, lr,
                     static_cast<float>(hyper.epsilon));
    cpu::SparseUpdate update{param.data(), {acc.data()}, ids.data(), true, grads.data(),
                             count, rows, width, &lr, &step};
    cpu::sparseApply(hyper, update, scratch);
    ASSERT_TRUE(param == wantParam) << "call " << call;
    ASSERT_TRUE(acc == wantAcc) << "call " << call;
  }
}

} // namespace
