//===- SparseApply.cpp - Optimizer updates of embedding rows --------------===//

#include "runtime/cpu/SparseApply.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace kiln::cpu {
namespace {

int64_t idAt(const SparseUpdate &update, int64_t i) {
  return update.indices64 ? static_cast<const int64_t *>(update.indices)[i]
                          : static_cast<const int32_t *>(update.indices)[i];
}

/// One row's update in f32: the dense kiln.apply_* lowering's math, except
/// Adam, which is PyTorch's SparseAdam (TensorFlow's LazyAdam): epsilon is
/// added to sqrt(v) before the bias correction, not after.
/// Inlined into each of updateNamedRows' clones (one per instruction set).
[[gnu::always_inline]] inline void updateRow(const SparseHyperParameters &h,
                                             const SparseUpdate &u, int64_t row, const float *g) {
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

/// How many distinct ids ahead an update asks for the rows it will write
/// (the first line of the table's and each slot's): the rows of a large
/// table are cache misses, one after another otherwise (each row's update
/// waits on its row's loads). Inline in the loop: GCC finds a function that
/// only prefetches free of effects and drops its calls.
constexpr size_t kPrefetchIdsAhead = 8;

/// One row's dense update, the kiln.apply_momentum / kiln.apply_adam
/// lowering's math in the same f32 operations (passes/Conversion/
/// KilnToLinalg/TrainingPatterns.cpp), so that a table updated densely
/// matches a dense variable bit for bit.
/// Inlined into each of updateEveryRow's clones.
[[gnu::always_inline]] inline void denseRow(const SparseHyperParameters &h, const SparseUpdate &u,
                                            int64_t row, const float *g) {
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

/// The ids one thread of a split update takes: those in [begin, end) whose
/// hash falls in its part (`parts` 1: all of them). Each distinct id is one
/// thread's, so every thread sums and updates its own rows.
struct IdPart {
  int64_t begin, end;
  uint64_t part = 0, parts = 1;

  static uint64_t hash(int64_t id) {
    return static_cast<uint64_t>(id) * 0x9E3779B97F4A7C15ull; // Fibonacci hashing.
  }
  bool contains(int64_t id) const {
    // The hash's high 32 bits scaled to [0, parts).
    return id >= begin && id < end && (parts == 1 || ((hash(id) >> 32) * parts >> 32) == part);
  }
};

/// Fills `scratch.order` with the distinct ids of `update` that `mine`
/// contains, in order of first appearance, and `scratch.sums` with each
/// one's rows summed in order: one pass.
void sumDuplicateRows(const SparseUpdate &update, const IdPart &mine, SparseScratch &scratch) {
  scratch.places.reset(static_cast<size_t>(update.count));
  scratch.order.clear();
  std::vector<float> &sums = scratch.sums;
  sums.assign(static_cast<size_t>(update.count * update.rowWidth), 0.0f);
  for (int64_t i = 0; i < update.count; ++i) {
    int64_t id = idAt(update, i);
    if (!mine.contains(id))
      continue;
    auto [place, first] = scratch.places.insert(id);
    if (first)
      scratch.order.push_back(id);
    float *sum = sums.data() + place * update.rowWidth;
    const float *row = update.rows + i * update.rowWidth;
    for (int64_t j = 0; j < update.rowWidth; ++j)
      sum[j] += row[j];
  }
}

bool updatesEveryRow(const SparseHyperParameters &hyper) {
  return hyper.dense &&
         (hyper.optimizer == SparseOptimizer::Momentum || hyper.optimizer == SparseOptimizer::Adam);
}

// The rows' updates, compiled for AVX-512, AVX2 and the baseline and
// picked at load time (the baseline's 4-wide square roots and divisions
// were most of a large update's time): the same bits on each, since the
// file is compiled without contraction into FMAs and vector square roots
// and divisions are correctly rounded as scalar ones are.

/// The rows of the distinct ids `order`, whose summed gradients are
/// `sums`, each asking for the row kPrefetchIdsAhead ids ahead.
__attribute__((target_clones("avx512f", "avx2", "default"))) void
updateNamedRows(const SparseHyperParameters &hyper, const SparseUpdate &update,
                const std::vector<int64_t> &order, const float *sums) {
  for (size_t k = 0; k < order.size(); ++k) {
    if (k + kPrefetchIdsAhead < order.size()) {
      int64_t ahead = order[k + kPrefetchIdsAhead] * update.rowWidth;
      __builtin_prefetch(update.param + ahead);
      for (const float *slot : update.slots)
        __builtin_prefetch(slot + ahead);
    }
    updateRow(hyper, update, order[k], sums + k * update.rowWidth);
  }
}

/// Every row of [begin, end): its summed gradient (sums at rowSlot's
/// place), or `zeros`.
__attribute__((target_clones("avx512f", "avx2", "default"))) void
updateEveryRow(const SparseHyperParameters &hyper, const SparseUpdate &update, int64_t begin,
               int64_t end, const std::vector<int64_t> &rowSlot, const float *sums,
               const float *zeros) {
  for (int64_t row = begin; row < end; ++row) {
    int64_t k = rowSlot[row - begin];
    denseRow(hyper, update, row, k < 0 ? zeros : sums + k * update.rowWidth);
  }
}

/// Part `part` of `parts` of the update: the ids whose hash falls in it, or,
/// when every row is updated, the rows of its range of the table.
void applyPart(const SparseHyperParameters &hyper, const SparseUpdate &update,
               SparseScratch &scratch, int64_t part, int64_t parts) {
  int64_t rows = update.tableRows;
  bool everyRow = updatesEveryRow(hyper);
  IdPart mine = everyRow ? IdPart{rows * part / parts, rows * (part + 1) / parts}
                         : IdPart{0, rows, static_cast<uint64_t>(part), static_cast<uint64_t>(parts)};
  sumDuplicateRows(update, mine, scratch);
  const std::vector<int64_t> &order = scratch.order;
  const std::vector<float> &sums = scratch.sums;
  if (!everyRow) {
    updateNamedRows(hyper, update, order, sums.data());
    return;
  }
  // Every row of the range: its summed gradient, or zeros.
  std::vector<int64_t> &rowSlot = scratch.rowSlot;
  rowSlot.assign(static_cast<size_t>(mine.end - mine.begin), -1);
  for (size_t k = 0; k < order.size(); ++k)
    rowSlot[order[k] - mine.begin] = static_cast<int64_t>(k);
  scratch.zeros.assign(static_cast<size_t>(update.rowWidth), 0.0f);
  updateEveryRow(hyper, update, mine.begin, mine.end, rowSlot, sums.data(), scratch.zeros.data());
}

} // namespace

__attribute__((target_clones("avx512f", "avx2", "default"))) void
denseApply(const SparseHyperParameters &hyper, float *param, const std::vector<float *> &slots,
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
  applyPart(hyper, update, scratch, 0, 1);
}

bool canSplitSparse(const SparseHyperParameters &hyper, const SparseUpdate &update, int threads) {
  return threads > 1 &&
         (updatesEveryRow(hyper) ? update.tableRows : update.count) >= kSparseIdsPerThread * 2;
}

int sparseThreads(const SparseHyperParameters &hyper, const SparseUpdate &update, int threads) {
  int64_t work = updatesEveryRow(hyper) ? update.tableRows : update.count;
  return static_cast<int>(
      std::max<int64_t>(1, std::min<int64_t>(threads, work / kSparseIdsPerThread)));
}

void sparseApply(const SparseHyperParameters &hyper, const SparseUpdate &update,
                 std::vector<SparseScratch> &scratches, int threads) {
  threads = sparseThreads(hyper, update, threads);
  if (scratches.size() < static_cast<size_t>(threads))
    scratches.resize(static_cast<size_t>(threads));
  if (threads < 2) {
    applyPart(hyper, update, scratches[0], 0, 1);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    int64_t team = omp_get_num_threads(), thread = omp_get_thread_num();
    applyPart(hyper, update, scratches[static_cast<size_t>(thread)], thread, team);
  }
}

} // namespace kiln::cpu
