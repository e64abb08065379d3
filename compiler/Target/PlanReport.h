//===- PlanReport.h - What the execution plan decided -----------*- C++ -*-===//

#ifndef KILN_COMPILER_TARGET_PLANREPORT_H
#define KILN_COMPILER_TARGET_PLANREPORT_H

#include "compiler/Target/ExecutionPlan.h"

#include "llvm/Support/raw_ostream.h"

#include <string>

namespace kiln {

/// The precision of the plan's matrix products.
struct GemmPrecisionSummary {
  std::string precision = "fp32"; ///< "bf16" or "fp16" when a GEMM call is.
  int64_t lowPrecisionCalls = 0;  ///< GEMM calls of that precision (every program).
  int64_t calls = 0;              ///< GEMM calls in all.
  /// How this host multiplies them: "native (avx512bf16)", "native
  /// (amx-bf16)" or "emulated (...)"; empty for fp32.
  std::string host;
};
GemmPrecisionSummary summarizeGemmPrecision(const ExecutionPlan &plan);

/// Prints the steps (kernels, GEMM calls), the region sizes, and the arena
/// against the bytes its values would take with no reuse.
void printPlanReport(const ExecutionPlan &plan, llvm::raw_ostream &os);

} // namespace kiln

#endif // KILN_COMPILER_TARGET_PLANREPORT_H
