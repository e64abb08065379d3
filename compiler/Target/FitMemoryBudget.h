//===- FitMemoryBudget.h - Recomputation checked by the plan ----*- C++ -*-===//
//
// kiln-remat chooses on a model of the arena; the execution plan then packs
// the real slots, and fragmentation can make the arena larger than the
// model's peak. Under a memory budget the choice is checked against the plan
// and, where the arena is over, made again for a model target lowered by the
// excess, a few times; the error for an unreachable budget names the
// smallest arena the plan gets.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_TARGET_FITMEMORYBUDGET_H
#define KILN_COMPILER_TARGET_FITMEMORYBUDGET_H

#include "compiler/Target/ExecutionPlan.h"

namespace kiln {

/// Applies the train spec's recomputation policy to `module` (after fusion).
/// Under `memory_budget` the planned arena ends at most the budget: the
/// cheapest set kiln-remat finds for it, checked by the plan, else the set of
/// policy `all` when that fits; when not even that fits, one error names the
/// arena `all` reaches and `module` is left as it was.
mlir::LogicalResult fitMemoryBudget(mlir::ModuleOp module, const PlanOptions &options);

} // namespace kiln

#endif // KILN_COMPILER_TARGET_FITMEMORYBUDGET_H
