//===- RematPlan.h - Which activations to recompute, on a model -*- C++ -*-===//
//
// kiln-remat decides on an abstract copy of a function: its top-level ops in
// program order, the values they read and write, the bytes each value takes
// in the arena and the work of each op (OpCost.h). Liveness follows the
// execution plan's rules: a value computed at step d is alive from d through
// its last use; a function argument from before the first step; a returned
// value to the end; a reshape or stop_gradient is a view of its operand's
// bytes; variable reads and constants take no arena bytes; a value only
// assigned to a variable is written in place.
//
// Dropping a value (with the views of it) splits its uses at their widest
// gap: the uses before the gap keep the value computed where it is, which
// then dies; the first use after it gets a clone of the defining op, and
// every later use reads the clone. A clone's operands are found the same
// way: a dropped one past its gap, or any other recomputable value dead
// there, is cloned too (once: later readers share the clone), so the chain
// is recomputed back to values still alive, arguments and variables.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_OPTIMIZE_REMATPLAN_H
#define KILN_PASSES_OPTIMIZE_REMATPLAN_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <vector>

namespace kiln {

/// The function as the planner sees it.
struct RematModel {
  struct ValueInfo {
    mlir::Value value;
    int def = -1;           // Index of the defining op; -1 for an argument.
    int root = -1;          // Value whose bytes it is (itself, or its view's
                            // source); -1: no arena bytes.
    uint64_t bytes = 0;     // Arena bytes, on roots only.
    bool recomputable = false;
    llvm::SmallVector<int> uses; // Ops reading it as a kernel operand, by index.
  };
  struct OpInfo {
    mlir::Operation *op;
    llvm::SmallVector<int> operands, results; // Value indices (-1: not modeled).
    int64_t flops = 0;
    /// What recomputing it costs: its flops plus the elements it writes
    /// (an op that only moves data is not free).
    int64_t cost = 0;
    bool view = false; // reshape or stop_gradient: no step of its own.
  };
  std::vector<ValueInfo> values;
  std::vector<OpInfo> ops;
  /// Per root that can be dropped: the last use before its widest gap of
  /// uses (`split`) and the first after it (`resume`).
  struct Gap {
    int split = -1, resume = -1;
  };
  std::vector<Gap> gaps; // By value index; split == -1: cannot be dropped.
  /// Per root: the last op reading it (or a view of it), and whether a
  /// clone of its defining op (and its views') computes it again.
  std::vector<int> lastUse;
  std::vector<bool> cloneable;

  /// Builds the model of `block` (a function body).
  static RematModel build(mlir::Block &block);
};

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
  int64_t extraFlops = 0, extraCost = 0;
};

/// Simulates dropping `dropped` (root value indices with a gap).
RematOutcome simulateRemat(const RematModel &model, const llvm::DenseSet<int> &dropped);

/// Roots that can be dropped and are alive but unused where `outcome` peaks.
llvm::SmallVector<int> rematCandidates(const RematModel &model, const RematOutcome &outcome,
                                       const llvm::DenseSet<int> &dropped);

/// The greedy choice: while the peak is above `target`, drop the candidate
/// that lowers the bytes alive at the peak most per unit of recomputation
/// cost (OpInfo::cost; ties: the most bytes). Returns the set with the lowest peak it met, and that
/// peak is <= target when it could be reached.
llvm::DenseSet<int> chooseGreedy(const RematModel &model, uint64_t target);

/// Chen et al.'s sqrt(n) segments: of the n candidates where the unchanged
/// function peaks, in program order, every ceil(sqrt(n))-th is kept as a
/// checkpoint and the others are dropped.
llvm::DenseSet<int> chooseSqrt(const RematModel &model);

} // namespace kiln

#endif // KILN_PASSES_OPTIMIZE_REMATPLAN_H
