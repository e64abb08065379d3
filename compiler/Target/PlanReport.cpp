//===- PlanReport.cpp - What the execution plan decided -------------------===//

#include "compiler/Target/PlanReport.h"

#include "compiler/Target/MemoryPlan.h"

namespace kiln {

void printPlanReport(const ExecutionPlan &plan, llvm::raw_ostream &os) {
  unsigned kernels = plan.numKernels();
  os << "  steps:     " << plan.steps.size() << " (" << kernels << " kernels, "
     << plan.steps.size() - kernels << " GEMM calls)\n";
  uint64_t unshared = 0;
  for (const Slot &slot : plan.slots)
    if (slot.region == Region::Arena)
      unshared += alignTo(slot.bytes);
  os << "  memory:    arena " << plan.arenaBytes << " bytes (" << unshared
     << " without reuse), state " << plan.stateBytes << ", constants "
     << plan.constantsBytes << "\n";
}

} // namespace kiln
