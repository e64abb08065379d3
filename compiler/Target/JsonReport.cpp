//===- JsonReport.cpp - kilnc --report=json -------------------------------===//

#include "compiler/Target/JsonReport.h"

#include "dialects/Kiln/KilnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/JSON.h"

using namespace mlir;

namespace kiln {

int64_t countFlops(func::FuncOp func) {
  int64_t flops = 0;
  func.walk([&](Operation *op) {
    if (op->getNumResults() != 1 || llvm::isa<FusionOp>(op))
      return; // A fusion's ops count inside it.
    auto result = llvm::dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!result || !result.hasStaticShape())
      return;
    int64_t elements = result.getNumElements();
    if (auto matmul = llvm::dyn_cast<MatmulOp>(op)) {
      auto lhs = llvm::cast<RankedTensorType>(matmul.getLhs().getType());
      int64_t k = matmul.getTransposeA() ? lhs.getDimSize(lhs.getRank() - 2)
                                         : lhs.getShape().back();
      flops += 2 * elements * k;
    } else if (auto conv = llvm::dyn_cast<ConvOp>(op)) {
      auto filter = llvm::cast<RankedTensorType>(conv.getFilter().getType());
      flops += 2 * elements * (filter.getNumElements() / filter.getDimSize(0));
    } else if (llvm::isa<FloatType>(result.getElementType()) &&
               !llvm::isa<ReadOp, ConstantOp, ReshapeOp, BroadcastOp, TransposeOp, ConcatOp,
                          SliceOp, GatherOp, GatherElementsOp, PadOp, OneHotOp, StopGradientOp,
                          CastOp>(op)) {
      flops += elements; // Data movement and conversion count nothing.
    }
  });
  return flops;
}

void printJsonReport(ModuleOp module, const ExecutionPlan &plan, llvm::StringRef kernelCache,
                     const CompileTimings &timings, double compileSeconds,
                     llvm::raw_ostream &os) {
  int64_t gemms = 0, convolutions = 0, rowParallel = 0;
  llvm::json::Object programs;
  for (const ProgramPlan &program : plan.programs) {
    int64_t programGemms = program.count<GemmStep>();
    int64_t programConvs = program.count<ConvStep>();
    gemms += programGemms;
    convolutions += programConvs;
    rowParallel += program.numRowParallelKernels();
    programs[program.name] = llvm::json::Object{{"steps", int64_t(program.steps.size())},
                                                {"kernels", int64_t(program.numKernels())},
                                                {"row_parallel_kernels",
                                                 int64_t(program.numRowParallelKernels())},
                                                {"gemm_calls", programGemms},
                                                {"convolution_calls", programConvs}};
  }
  auto train = module.lookupSymbol<func::FuncOp>("train_step");
  auto forward = module.lookupSymbol<func::FuncOp>("forward");
  func::FuncOp step = train ? train : forward;
  std::string precision = "fp32";
  if (auto spec = module->getAttrOfType<DictionaryAttr>(KilnDialect::kTrainSpecAttrName))
    if (auto value = spec.getAs<StringAttr>("precision"))
      precision = value.str();
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
      {"convolution_calls", convolutions},
      {"flops_per_step", step ? countFlops(step) : int64_t(0)},
      {"flops_of", step ? step.getSymName().str() : std::string("")},
      {"recompute_flops", int64_t(0)},
      {"precision", precision},
      {"compile_seconds", compileSeconds},
      {"kernel_cache", kernelCache.str()},
      {"programs", std::move(programs)},
      {"passes", std::move(passes)}};
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(report))) << "\n";
}

} // namespace kiln
