//===- ArenaModel.h - A function's arena, as the plan will see it -*- C++ -*-===//
//
// The scheduler and recomputation reason about memory on an abstract copy of
// a function: its top-level ops in program order, the values they read and
// write, the bytes each value takes in the arena and the work of each op
// (OpCost.h). Liveness follows the execution plan's rules: a value computed
// at step d is alive from d through its last use; a function argument from
// before the first step; a returned value to the end; a reshape or
// stop_gradient is a view of its operand's bytes; variable reads and
// constants take no arena bytes; a value only assigned to a variable is
// written in place.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_OPTIMIZE_ARENAMODEL_H
#define KILN_PASSES_OPTIMIZE_ARENAMODEL_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallVector.h"

#include <climits>
#include <vector>

namespace kiln {

/// The function as the execution plan will see it, and what recomputation
/// needs to know of each value.
struct ArenaModel {
  struct ValueInfo {
    mlir::Value value;
    int def = -1;           // Index of the defining op; -1 for an argument.
    int root = -1;          // Value whose bytes it is (itself, or its view's
                            // source); -1: no arena bytes.
    uint64_t bytes = 0;     // Arena bytes, on roots only.
    bool recomputable = false;
    llvm::SmallVector<int> uses; // Ops reading it as a kernel operand, by index.
    /// For a view of a variable's state (a read, or a view of one): the
    /// variable, and the first op that writes it, by kiln.assign or in place
    /// (a clone reading the view must come before); INT_MAX otherwise.
    mlir::StringAttr stateVariable;
    int stateWrite = INT_MAX;
  };
  struct OpInfo {
    mlir::Operation *op;
    llvm::SmallVector<int> operands, results; // Value indices (-1: not modeled).
    /// What recomputing it costs: its flops (OpCost.h) plus the elements it
    /// writes (an op that only moves data is not free).
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
  static ArenaModel build(mlir::Block &block);
};

} // namespace kiln

#endif // KILN_PASSES_OPTIMIZE_ARENAMODEL_H
