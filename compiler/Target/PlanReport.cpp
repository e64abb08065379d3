//===- PlanReport.cpp - What the execution plan decided -------------------===//

#include "compiler/Target/PlanReport.h"


namespace kiln {

void printPlanReport(const ExecutionPlan &plan, llvm::raw_ostream &os) {
  for (const ProgramPlan &program : plan.programs) {
    unsigned kernels = program.numKernels();
    unsigned gemms = program.count<GemmStep>();
    unsigned convs = program.count<ConvStep>();
    unsigned buckets = 0, gathers = 0, fusions = 0;
    uint64_t reducedBytes = 0, gatheredBytes = 0;
    for (const Step &step : program.steps) {
      if (const auto *kernel = std::get_if<KernelStep>(&step))
        fusions += llvm::isa<FusionOp>(kernel->op);
      if (const auto *start = std::get_if<AllReduceStartStep>(&step)) {
        ++buckets;
        for (int buffer : start->inputs)
          reducedBytes += tensorBytes(plan.buffers[buffer].type);
      }
      if (const auto *start = std::get_if<SparseAllReduceStartStep>(&step)) {
        ++gathers;
        gatheredBytes += tensorBytes(plan.buffers[start->indices].type) +
                         tensorBytes(plan.buffers[start->rows].type);
      }
    }
    os << "  " << program.name << ": " << program.steps.size() << " steps (" << kernels
       << " kernels (" << fusions << " of them fusions, " << program.numRowParallelKernels()
       << " row-parallel), " << gemms << " GEMM calls, ";
    if (convs)
      os << convs << " convolution calls, ";
    if (buckets)
      os << buckets << " all-reduce buckets of " << reducedBytes << " bytes, ";
    if (gathers)
      os << gathers << " sparse all-reduces of " << gatheredBytes << " bytes a replica, ";
    os << program.steps.size() - kernels - gemms - convs - 2 * buckets - 2 * gathers
       << " copies and sparse updates)\n";
  }
  os << "  memory:    arena " << plan.arenaBytes << " bytes (" << plan.arenaBytesWithoutReuse()
     << " without reuse), state " << plan.stateBytes << ", constants "
     << plan.constantsBytes << "\n";
}

} // namespace kiln
