//===- PlanReport.cpp - What the execution plan decided -------------------===//

#include "compiler/Target/PlanReport.h"

#include "runtime/support/InstructionRates.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/TargetParser/Host.h"

namespace kiln {

PrecisionSummary summarizePrecision(const ExecutionPlan &plan) {
  PrecisionSummary summary;
  llvm::DenseSet<int> bf16Read;
  for (const ProgramPlan &program : plan.programs) {
    // A training program's kernels read bf16 tensors only as the copies
    // kiln-mixed-precision keeps for the backward pass.
    bool training = program.name == "train_step" || program.name == "accumulate_step";
    for (const Step &step : program.steps) {
      if (const auto *kernel = std::get_if<KernelStep>(&step); kernel && training)
        for (int buffer : kernel->inputs)
          if (plan.buffers[buffer].type.getElementType().isBF16() &&
              bf16Read.insert(buffer).second) {
            ++summary.bf16Activations;
            summary.bf16ActivationBytes += tensorBytes(plan.buffers[buffer].type);
          }
      if (const auto *conv = std::get_if<ConvStep>(&step)) {
        ++summary.convolutions;
        summary.bf16Convolutions += conv->bf16;
      }
      const auto *gemm = std::get_if<GemmStep>(&step);
      if (!gemm)
        continue;
      ++summary.calls;
      if (!gemm->precision)
        continue;
      ++summary.lowPrecisionCalls;
      summary.precision = gemm->precision.isBF16() ? "bf16" : "fp16";
    }
  }
  // The runtime's choices (runtime/cpu/LowPrecisionGemm.cpp, Convolution.cpp)
  // on this host; nothing to choose (nor to measure) for an f32 program.
  if (!summary.bf16Convolutions && !summary.lowPrecisionCalls)
    return summary;
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  const char *bf16Instructions = features.lookup("amx-bf16")      ? "amx-bf16"
                                 : features.lookup("avx512bf16") ? "avx512bf16"
                                                                 : nullptr;
  // As the runtime chooses (runtime/support/InstructionRates.h): without
  // AMX, AVX512_BF16 only where its dot products are not much slower than
  // f32 FMAs; KILN_EMULATE_LOW_PRECISION pins the choice.
  std::string notTaken = bf16Instructions ? "" : "this CPU has neither avx512bf16 nor amx-bf16";
  std::optional<bool> emulate = lowPrecisionEmulationSetByEnvironment();
  if (emulate == true)
    notTaken = "KILN_EMULATE_LOW_PRECISION=1";
  else if (bf16Instructions && !emulate.has_value() &&
           bf16DotProductsTooSlow(features.lookup("amx-bf16")))
    notTaken = "this CPU's avx512bf16 dot products do " +
               llvm::formatv("{0:F2}", bf16DotProductRates()->ratio()).str() +
               "x the multiply-adds of its f32 FMAs";
  if (summary.bf16Convolutions) {
    summary.precision = "bf16";
    summary.convolutionHost = notTaken.empty()
                                  ? std::string("bf16 (") + bf16Instructions + ")"
                                  : "f32 (" + notTaken + ")";
  }
  if (!summary.lowPrecisionCalls)
    return summary;
  if (summary.precision == "fp16")
    summary.host = "emulated (inputs rounded to f16, multiplied in f32)";
  else if (notTaken.empty())
    summary.host = std::string("native (") + bf16Instructions + ")";
  else
    summary.host = "emulated (" + notTaken + ")";
  return summary;
}

void printPlanReport(const ExecutionPlan &plan, llvm::raw_ostream &os) {
  for (const ProgramPlan &program : plan.programs) {
    unsigned kernels = program.numKernels();
    unsigned gemms = program.count<GemmStep>();
    unsigned convs = program.count<ConvStep>();
    unsigned buckets = 0, inPlace = 0, gathers = 0, fusions = 0;
    llvm::DenseMap<int64_t, const AllReduceStartStep *> started;
    uint64_t reducedBytes = 0, gatheredBytes = 0;
    for (const Step &step : program.steps) {
      if (const auto *kernel = std::get_if<KernelStep>(&step))
        fusions += llvm::isa<FusionOp>(kernel->op);
      if (const auto *start = std::get_if<AllReduceStartStep>(&step)) {
        ++buckets;
        started[start->tag] = start;
        for (int buffer : start->inputs)
          reducedBytes += tensorBytes(plan.buffers[buffer].type);
      }
      // In place: the results are the gradients' own buffers.
      if (const auto *wait = std::get_if<AllReduceWaitStep>(&step))
        if (const AllReduceStartStep *start = started.lookup(wait->tag))
          inPlace += start->inputs == wait->outputs;
      if (const auto *start = std::get_if<SparseAllReduceStartStep>(&step)) {
        ++gathers;
        gatheredBytes += tensorBytes(plan.buffers[start->indices].type) +
                         tensorBytes(plan.buffers[start->rows].type);
      }
    }
    os << "  " << program.name << ": " << program.steps.size() << " steps (" << kernels
       << " kernels (" << fusions << " of them fusions, " << program.numRowParallelKernels()
       << " row-parallel), " << gemms << " GEMM calls, ";
    if (unsigned blocked = program.numBlockedGemms())
      os << blocked << " of them by blocks of rows, each block then updated, ";
    if (unsigned epilogues = program.numEpilogueGemms())
      os << epilogues << " of them with their elementwise epilogue, ";
    if (convs)
      os << convs << " convolution calls, ";
    if (buckets)
      os << buckets << " all-reduce buckets of " << reducedBytes << " bytes (" << inPlace
         << " reduced in place), ";
    if (gathers)
      os << gathers << " sparse all-reduces of " << gatheredBytes << " bytes a replica, ";
    os << program.steps.size() - kernels - gemms - convs - 2 * buckets - 2 * gathers
       << " copies and sparse updates)\n";
  }
  PrecisionSummary precision = summarizePrecision(plan);
  if (precision.lowPrecisionCalls || precision.bf16Convolutions) {
    os << "  precision: ";
    if (precision.lowPrecisionCalls)
      os << precision.precision << " matrix products in " << precision.lowPrecisionCalls
         << " of " << precision.calls << " GEMM calls, " << precision.host << " on this CPU; ";
    if (precision.bf16Convolutions)
      os << "bf16 convolutions in " << precision.bf16Convolutions << " of "
         << precision.convolutions << " calls, " << precision.convolutionHost
         << " on this CPU; ";
    if (precision.bf16Activations)
      os << precision.bf16Activations << " activations kept in bf16 for the backward pass ("
         << precision.bf16ActivationBytes << " bytes); ";
    os << "weights, optimizer state and elementwise ops f32\n";
  }
  os << "  memory:    arena " << plan.arenaBytes << " bytes (" << plan.arenaBytesWithoutReuse()
     << " without reuse), state " << plan.stateBytes << ", constants "
     << plan.constantsBytes << "\n";
}

} // namespace kiln
