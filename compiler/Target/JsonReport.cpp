//===- JsonReport.cpp - kilnc --report=json -------------------------------===//

#include "compiler/Target/JsonReport.h"

#include "compiler/Target/PlanReport.h"

#include "dialects/Kiln/KilnOps.h"
#include "dialects/Kiln/OpCost.h"
#include "dialects/Kiln/TrainSpec.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/JSON.h"

using namespace mlir;

namespace kiln {

int64_t countFlops(func::FuncOp func) { return estimateFlopsWithin(func); }

void printJsonReport(ModuleOp module, const ExecutionPlan &plan, llvm::StringRef kernelCache,
                     const CompileTimings &timings, double compileSeconds,
                     llvm::raw_ostream &os) {
  int64_t gemms = 0, convolutions = 0, rowParallel = 0, blocked = 0, epilogues = 0;
  llvm::json::Object programs;
  for (const ProgramPlan &program : plan.programs) {
    int64_t programGemms = program.count<GemmStep>();
    int64_t programConvs = program.count<ConvStep>();
    gemms += programGemms;
    convolutions += programConvs;
    rowParallel += program.numRowParallelKernels();
    blocked += program.numBlockedGemms();
    epilogues += program.numEpilogueGemms();
    programs[program.name] = llvm::json::Object{{"steps", int64_t(program.steps.size())},
                                                {"kernels", int64_t(program.numKernels())},
                                                {"row_parallel_kernels",
                                                 int64_t(program.numRowParallelKernels())},
                                                {"gemm_calls", programGemms},
                                                {"blocked_gemm_calls",
                                                 int64_t(program.numBlockedGemms())},
                                                {"epilogue_gemm_calls",
                                                 int64_t(program.numEpilogueGemms())},
                                                {"convolution_calls", programConvs}};
  }
  // The function a step's forward and backward run in: a micro-batch's
  // under gradient accumulation.
  auto accumulate = module.lookupSymbol<func::FuncOp>("accumulate_step");
  auto train = module.lookupSymbol<func::FuncOp>("train_step");
  auto forward = module.lookupSymbol<func::FuncOp>("forward");
  func::FuncOp step = accumulate ? accumulate : train ? train : forward;
  PrecisionSummary precision = summarizePrecision(plan);
  RematSettings remat = RematSettings::of(module);
  int64_t fusionGroups = 0;
  if (step)
    step.walk([&](FusionOp) { ++fusionGroups; });
  llvm::json::Array passes;
  for (const auto &[name, seconds] : timings.entries())
    passes.push_back(llvm::json::Object{{"name", name}, {"seconds", seconds}});
  llvm::json::Object report{
      {"model", std::string(module.getName().value_or("model"))},
      {"naive_bytes", int64_t(plan.arenaBytesWithoutReuse())},
      {"peak_bytes", int64_t(plan.arenaBytes)},
      {"state_bytes", int64_t(plan.stateBytes)},
      {"fusion_groups", fusionGroups},
      {"kernels", int64_t(plan.numKernels())},
      {"distinct_kernels", int64_t(plan.kernelFunctions)},
      {"row_parallel_kernels", rowParallel},
      {"gemm_calls", gemms},
      {"blocked_gemm_calls", blocked},
      {"epilogue_gemm_calls", epilogues},
      {"convolution_calls", convolutions},
      {"flops_per_step", step ? countFlops(step) : int64_t(0)},
      {"flops_of", step ? step.getSymName().str() : std::string("")},
      {"recompute_flops", step ? estimateRecomputedFlops(step) : int64_t(0)},
      {"remat", remat.policy},
      {"memory_budget_bytes", remat.budgetBytes},
      {"precision", precision.precision},
      {"low_precision_gemm_calls", precision.lowPrecisionCalls},
      {"low_precision_gemm", precision.host},
      {"bf16_convolution_calls", precision.bf16Convolutions},
      {"bf16_convolution", precision.convolutionHost},
      {"bf16_activations", precision.bf16Activations},
      {"bf16_activation_bytes", int64_t(precision.bf16ActivationBytes)},
      {"compile_seconds", compileSeconds},
      {"kernel_cache", kernelCache.str()},
      {"programs", std::move(programs)},
      {"passes", std::move(passes)}};
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(report))) << "\n";
}

} // namespace kiln
