//===- SparseApply.h - Lazy optimizer updates of embedding rows -*- C++ -*-===//
//
// The runtime side of kiln.sparse_apply (artifact.fbs, table SparseApply):
// the gradient arrives as ids and rows; duplicate ids are summed first, in
// order of first appearance, then each named row of the parameter and its
// slots gets the dense optimizer's update (lazily), or every row does with a
// zero gradient where none is named (dense, for momentum and Adam). Ids outside [0, rows) are
// skipped (the data readers reject them before a step runs). The parameter
// servers will apply the same code to their shards.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_CPU_SPARSEAPPLY_H
#define KILN_RUNTIME_CPU_SPARSEAPPLY_H

#include "runtime/cpu/UniqueIds.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kiln::cpu {

enum class SparseOptimizer { Sgd, Momentum, Adam, Adagrad };

struct SparseHyperParameters {
  SparseOptimizer optimizer = SparseOptimizer::Sgd;
  double momentum = 0, beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8, weightDecay = 0;
  bool nesterov = false;
  /// Momentum and Adam: every row gets the dense update (zero gradient where
  /// no id names it), with dense Adam's formula; else only the named rows,
  /// with SparseAdam's.
  bool dense = false;
};

/// The tensors of one update; `param` and `slots` are [tableRows, rowWidth].
struct SparseUpdate {
  float *param;
  std::vector<float *> slots;
  const void *indices;
  bool indices64;
  const float *rows; ///< [count, rowWidth]
  int64_t count, tableRows, rowWidth;
  /// Scalars an earlier kernel of the same program writes: read when the
  /// update runs.
  const float *lr, *step;
};

/// Buffers an update reuses between calls, so that a step allocates nothing.
struct SparseScratch {
  std::vector<float> sums;
  std::vector<int64_t> rowSlot;
  std::vector<int64_t> order; ///< The distinct ids, in order of first appearance.
  UniqueIds places;           ///< Id -> its place in `order`.
  std::vector<float> zeros; ///< A row of zeros, for a dense update.
};

/// Applies the dense optimizer update (kiln.apply_sgd, _momentum, _adam,
/// _adagrad, in the same f32 operations as their compiled kernels) to
/// `count` contiguous elements of `param` and `slots` with gradient `grad`:
/// what a parameter server does to its shard of a dense variable.
void denseApply(const SparseHyperParameters &hyper, float *param, const std::vector<float *> &slots,
                const float *grad, int64_t count, float lr, float step);

/// Applies the update in place, on the calling thread.
void sparseApply(const SparseHyperParameters &hyper, const SparseUpdate &update,
                 SparseScratch &scratch);

/// The fewest ids (rows, for an update of every row) a thread of a split
/// update takes: below it, waking a thread costs more than it saves.
constexpr int64_t kSparseIdsPerThread = 64;

/// Whether more than one of `threads` threads can share the update.
bool canSplitSparse(const SparseHyperParameters &hyper, const SparseUpdate &update, int threads);

/// How many of `threads` threads share the update: at most one per
/// kSparseIdsPerThread ids (or table rows, for an update of every row).
int sparseThreads(const SparseHyperParameters &hyper, const SparseUpdate &update, int threads);

/// Applies the update in place on sparseThreads(hyper, update, threads)
/// OpenMP threads, each with its scratch (`scratches` grows to as many):
/// each takes the distinct ids whose hash falls in its part (for an update
/// of every row, its range of rows), sums their rows in order and updates
/// them. Every row is summed and updated as on one thread: the same bits.
void sparseApply(const SparseHyperParameters &hyper, const SparseUpdate &update,
                 std::vector<SparseScratch> &scratches, int threads);

} // namespace kiln::cpu

#endif // KILN_RUNTIME_CPU_SPARSEAPPLY_H
