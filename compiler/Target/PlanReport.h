//===- PlanReport.h - What the execution plan decided -----------*- C++ -*-===//

#ifndef KILN_COMPILER_TARGET_PLANREPORT_H
#define KILN_COMPILER_TARGET_PLANREPORT_H

#include "compiler/Target/ExecutionPlan.h"

#include "llvm/Support/raw_ostream.h"

namespace kiln {

/// Prints the steps (kernels, GEMM calls), the region sizes, and the arena
/// against the bytes its values would take with no reuse.
void printPlanReport(const ExecutionPlan &plan, llvm::raw_ostream &os);

} // namespace kiln

#endif // KILN_COMPILER_TARGET_PLANREPORT_H
