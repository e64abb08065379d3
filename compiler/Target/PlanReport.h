//===- PlanReport.h - What the execution plan decided -----------*- C++ -*-===//

#ifndef KILN_COMPILER_TARGET_PLANREPORT_H
#define KILN_COMPILER_TARGET_PLANREPORT_H

#include "compiler/Target/ExecutionPlan.h"

#include "llvm/Support/raw_ostream.h"

#include <string>

namespace kiln {

/// The precision of the plan's matrix products and convolutions.
struct PrecisionSummary {
  /// "bf16" or "fp16" when a GEMM call (or, bf16, a convolution) is.
  std::string precision = "fp32";
  int64_t lowPrecisionCalls = 0;  ///< GEMM calls of that precision (every program).
  int64_t calls = 0;              ///< GEMM calls in all.
  /// How this host multiplies them: "native (avx512bf16)", "native
  /// (amx-bf16)" or "emulated (...)"; empty for fp32.
  std::string host;
  int64_t bf16Convolutions = 0; ///< Convolution calls marked bf16 (every program).
  int64_t convolutions = 0;     ///< Convolution calls in all.
  /// How this host runs the bf16 ones (runtime/cpu/Convolution.cpp, where
  /// oneDNN takes its blocked bf16 kernels): "bf16 (avx512bf16)", "bf16
  /// (amx-bf16)" or "f32 (...)"; empty without any.
  std::string convolutionHost;
  /// bf16 tensors that the training programs' kernels read: the forward
  /// values kept in bf16 for the backward pass (kiln-mixed-precision's
  /// store-activations; product inputs are read by products only), and
  /// their bytes.
  int64_t bf16Activations = 0;
  uint64_t bf16ActivationBytes = 0;
};
PrecisionSummary summarizePrecision(const ExecutionPlan &plan);

/// Prints the steps (kernels, GEMM calls), the region sizes, and the arena
/// against the bytes its values would take with no reuse.
void printPlanReport(const ExecutionPlan &plan, llvm::raw_ostream &os);

} // namespace kiln

#endif // KILN_COMPILER_TARGET_PLANREPORT_H
