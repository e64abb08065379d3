//===- RematPlan.h - Which activations to recompute, on a model -*- C++ -*-===//
//
// kiln-remat decides on the function's ArenaModel. Dropping a value (with
// the views of it) splits its uses at their widest gap: the uses before the
// gap keep the value computed where it is, which then dies; the first use
// after it gets a clone of the defining op, and
// every later use reads the clone. A clone's operands are found the same
// way: a dropped one past its gap, or any other recomputable value dead
// there, is cloned too (once: later readers share the clone), so the chain
// is recomputed back to values still alive, arguments and variables.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_OPTIMIZE_REMATPLAN_H
#define KILN_PASSES_OPTIMIZE_REMATPLAN_H

#include "passes/Optimize/ArenaModel.h"

#include "llvm/ADT/DenseSet.h"

#include <optional>

namespace kiln {

/// What dropping a set of roots gives: where clones go, the memory and the
/// extra work.
struct RematOutcome {
  /// One clone of `op` (an index) right before op `before`; `cloneOperand[i]`
  /// says whether operand i reads a clone (made earlier) rather than the
  /// original value. In creation order, so each clone's operands come first.
  struct Clone {
    int op, before;
    llvm::SmallVector<bool> cloneOperand;
  };
  /// An operand of an original op that reads the clone of its value.
  struct Redirect {
    int op;
    unsigned operand;
  };
  std::vector<Clone> clones;
  std::vector<Redirect> redirects;
  /// Arena bytes alive at each op (index + 1; entry 0: before the first).
  std::vector<uint64_t> live;
  uint64_t peak = 0;
  int peakAt = 0; // Index into `live`.
  /// What the clones cost (ArenaModel::OpInfo::cost).
  int64_t extraCost = 0;
};

/// Simulates dropping `dropped` (root value indices with a gap).
RematOutcome simulateRemat(const ArenaModel &model, const llvm::DenseSet<int> &dropped);

/// Roots that can be dropped and are alive but unused where `outcome` peaks.
llvm::SmallVector<int> rematCandidates(const ArenaModel &model, const RematOutcome &outcome,
                                       const llvm::DenseSet<int> &dropped);

/// The greedy choice: while the peak is above `target`, drop the candidate
/// that lowers the bytes alive at the peak most per unit of recomputation
/// cost (OpInfo::cost; ties: the most bytes). Returns the set with the lowest peak it met, and that
/// peak is <= target when it could be reached.
llvm::DenseSet<int> chooseGreedy(const ArenaModel &model, uint64_t target);

/// Chen et al.'s sqrt(n) segments: of the n candidates where the unchanged
/// function peaks, in program order, every ceil(sqrt(n))-th is kept as a
/// checkpoint and the others are dropped.
llvm::DenseSet<int> chooseSqrt(const ArenaModel &model);

/// The cheapest of the greedy choice for `target` and the segmentings (every
/// k-th candidate kept, for k from 2 to n growing by a quarter, and
/// sqrt(n)) whose peak is <= `target`; when none is, the one with the lowest
/// peak. `target` 0: the lowest peak found.
llvm::DenseSet<int> chooseForTarget(const ArenaModel &model, uint64_t target);

} // namespace kiln

#endif // KILN_PASSES_OPTIMIZE_REMATPLAN_H
