//===- RuntimeSparseApplyTest.cpp - Optimizer updates of embedding rows ---===//

#include "runtime/cpu/SparseApply.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

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

// Tests the update split over threads against one thread, bit for bit, for
// every optimizer, lazy and dense (every row updated): ids drawn from a
// skewed few (many repeats) and the whole table, some outside it, counts
// the threads cannot all share (fewer than 64 ids each).
TEST(RuntimeSparseApplyTest, SplitOverThreadsGivesTheSameBits) {
  const int64_t rows = 1000, width = 5;
  struct Setting {
    cpu::SparseOptimizer optimizer;
    bool dense;
    int slots;
  };
  const Setting settings[] = {{cpu::SparseOptimizer::Sgd, false, 0},
                              {cpu::SparseOptimizer::Momentum, false, 1},
                              {cpu::SparseOptimizer::Momentum, true, 1},
                              {cpu::SparseOptimizer::Adam, false, 2},
                              {cpu::SparseOptimizer::Adam, true, 2},
                              {cpu::SparseOptimizer::Adagrad, false, 1}};
  for (const Setting &setting : settings)
    for (int64_t count : {1, 100, 129, 2000}) {
      SCOPED_TRACE("optimizer " + std::to_string(static_cast<int>(setting.optimizer)) +
                   (setting.dense ? " dense" : " lazy") + ", " + std::to_string(count) + " ids");
      std::mt19937 rng(static_cast<unsigned>(count));
      std::uniform_real_distribution<float> value(-1, 1);
      std::vector<int64_t> ids(count);
      for (int64_t &id : ids) {
        uint32_t pick = rng() % 100;
        id = pick < 2 ? -1 : pick < 4 ? rows + pick : pick < 50 ? rng() % 7 : rng() % rows;
      }
      std::vector<float> grads(count * width);
      for (float &g : grads)
        g = value(rng);
      std::vector<float> start(rows * width);
      for (float &x : start)
        x = value(rng);
      cpu::SparseHyperParameters hyper;
      hyper.optimizer = setting.optimizer;
      hyper.dense = setting.dense;
      hyper.momentum = 0.9;
      hyper.weightDecay = 0.01;
      float lr = 0.05f, step = 3;
      // Two calls each, so that the slots start from what the first wrote.
      auto train = [&](int threads, std::vector<std::vector<float>> &state) {
        state.assign(1 + setting.slots, start);
        for (int s = 1; s <= setting.slots; ++s)
          for (float &x : state[s])
            x = std::fabs(x);
        std::vector<float *> slots;
        for (int s = 1; s <= setting.slots; ++s)
          slots.push_back(state[s].data());
        cpu::SparseUpdate update{state[0].data(), slots, ids.data(), true, grads.data(),
                                 count, rows, width, &lr, &step};
        std::vector<cpu::SparseScratch> scratches;
        for (int call = 0; call < 2; ++call)
          cpu::sparseApply(hyper, update, scratches, threads);
      };
      std::vector<std::vector<float>> one, split;
      train(1, one);
      for (int threads : {2, 3}) {
        train(threads, split);
        for (size_t t = 0; t < one.size(); ++t)
          ASSERT_TRUE(split[t] == one[t]) << threads << " threads, tensor " << t;
      }
    }
}

TEST(RuntimeSparseApplyTest, SharesTheIdsSixtyFourAThread) {
  cpu::SparseHyperParameters lazy;
  lazy.optimizer = cpu::SparseOptimizer::Adagrad;
  cpu::SparseUpdate update{nullptr, {}, nullptr, true, nullptr, 127, 100000, 4, nullptr, nullptr};
  EXPECT_FALSE(cpu::canSplitSparse(lazy, update, 2));
  EXPECT_EQ(cpu::sparseThreads(lazy, update, 8), 1);
  update.count = 128;
  EXPECT_TRUE(cpu::canSplitSparse(lazy, update, 2));
  EXPECT_FALSE(cpu::canSplitSparse(lazy, update, 1));
  update.count = 1152; // multi_hot's item table: 18 threads' worth.
  EXPECT_EQ(cpu::sparseThreads(lazy, update, 8), 8);
  // Dense Adam updates every row: the table's rows are the work.
  cpu::SparseHyperParameters dense;
  dense.optimizer = cpu::SparseOptimizer::Adam;
  dense.dense = true;
  update.count = 10;
  update.tableRows = 200;
  EXPECT_EQ(cpu::sparseThreads(dense, update, 8), 3);
}

} // namespace

// Tests that UniqueIds numbers the distinct ids of each call 0, 1, ... in
// order of first appearance, as a std::map would, over calls of growing and
// shrinking sizes that reuse the table (ids from a small range, so that
// they repeat; negative ones and multiples of large powers of two, which
// share their low bits, too).
TEST(RuntimeSparseApplyTest, UniqueIdsNumberIdsInOrderOfFirstAppearance) {
  cpu::UniqueIds unique;
  std::mt19937_64 rng(17);
  for (int call = 0; call < 200; ++call) {
    size_t count = static_cast<size_t>(rng() % 700);
    int64_t range = 1 + static_cast<int64_t>(rng() % 1000);
    unique.reset(count);
    std::map<int64_t, int64_t> expected;
    for (size_t i = 0; i < count; ++i) {
      int64_t id = static_cast<int64_t>(rng() % range) - range / 2;
      if (call % 3 == 0)
        id *= int64_t(1) << 40;
      auto [number, first] = unique.insert(id);
      auto [at, inserted] = expected.try_emplace(id, static_cast<int64_t>(expected.size()));
      ASSERT_EQ(first, inserted) << "call " << call << ", id " << id;
      ASSERT_EQ(number, at->second) << "call " << call << ", id " << id;
    }
    EXPECT_EQ(unique.size(), static_cast<int64_t>(expected.size()));
  }
}
