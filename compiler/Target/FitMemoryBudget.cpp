//===- FitMemoryBudget.cpp - Recomputation checked by the plan ------------===//

#include "compiler/Target/FitMemoryBudget.h"

#include "dialects/Kiln/TrainSpec.h"
#include "passes/Optimize/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;

namespace kiln {

namespace {

/// kiln-remat over `module` with `options`.
LogicalResult runRemat(ModuleOp module, const KilnRematOptions &options) {
  PassManager pm(module.getContext());
  pm.addNestedPass<func::FuncOp>(createKilnRemat(options));
  return pm.run(module);
}

} // namespace

LogicalResult fitMemoryBudget(ModuleOp module, const PlanOptions &options) {
  RematSettings remat = RematSettings::of(module);
  if (remat.policy == "none")
    return success();
  if (remat.policy != "auto")
    return runRemat(module, {});
  int64_t budget = remat.budgetBytes;

  // The cheapest set for the budget, its modeled target lowered by what the
  // plan needed beyond it.
  constexpr int kTries = 4;
  int64_t target = budget;
  for (int attempt = 0; attempt < kTries && target > 0; ++attempt) {
    OwningOpRef<ModuleOp> candidate = module.clone();
    KilnRematOptions rematOptions;
    rematOptions.memoryTarget = target;
    ScopedDiagnosticHandler quiet(module.getContext(), [](Diagnostic &) { return success(); });
    if (failed(runRemat(*candidate, rematOptions)))
      break;
    FailureOr<ExecutionPlan> plan = planModule(*candidate, options);
    if (failed(plan))
      break;
    if (plan->arenaBytes <= uint64_t(budget)) {
      module.getBodyRegion().takeBody(candidate->getBodyRegion());
      return success();
    }
    target -= int64_t(plan->arenaBytes) - budget;
  }

  // The least the solver reaches: policy `all`.
  OwningOpRef<ModuleOp> smallest = module.clone();
  KilnRematOptions all;
  all.policy = "all";
  if (failed(runRemat(*smallest, all)))
    return failure();
  FailureOr<ExecutionPlan> smallestPlan = planModule(*smallest, options);
  if (failed(smallestPlan))
    return failure();
  if (smallestPlan->arenaBytes > uint64_t(budget))
    return emitError(module.getLoc())
           << "cannot fit the memory budget of " << budget
           << " bytes: the smallest peak recomputation reaches is " << smallestPlan->arenaBytes
           << " bytes (--remat=all)";
  module.getBodyRegion().takeBody(smallest->getBodyRegion());
  return success();
}

} // namespace kiln
