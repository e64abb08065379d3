//===- ProgramProfile.cpp - Where a program's time goes -------------------===//

#include "runtime/exec/ProgramProfile.h"

#include "runtime/cpu/Gemm.h"
#include "runtime/exec/ResolvedProgram.h"

#include <algorithm>
#include <cstdio>
#include <numeric>

namespace kiln::exec {

using namespace artifact;

namespace {

/// The kinds a profile sums instructions by, in the order it prints them.
enum class Kind { Gemm, Convolution, Kernel, Communication, Other, Count };

Kind kindOf(Instruction type) {
  switch (type) {
  case Instruction_Gemm:
  case Instruction_BlockedGemm: // Mostly the product; its update is a few percent.
    return Kind::Gemm;
  case Instruction_Convolution:
    return Kind::Convolution;
  case Instruction_KernelCall:
    return Kind::Kernel;
  case Instruction_AllReduceStart:
  case Instruction_AllReduceWait:
  case Instruction_SparseAllReduceStart:
  case Instruction_SparseAllReduceWait:
  case Instruction_PsPull:
  case Instruction_PsPush:
  case Instruction_PsPullRows:
  case Instruction_PsPushRows:
    return Kind::Communication;
  default:
    return Kind::Other;
  }
}

const char *kindName(Kind kind) {
  static const char *const names[] = {"GEMM", "convolutions", "kernels", "communication",
                                      "other"};
  return names[static_cast<int>(kind)];
}

/// The threads instruction `index` chose (0: no choice, or none yet).
int threadsOf(const ProgramProfile &profile, size_t index) {
  return index < profile.threads.size() ? profile.threads[index] : 0;
}

std::string milliseconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f ms", seconds * 1e3);
  return text;
}

} // namespace

int64_t countConvolutionsInBF16(const ProgramProfile &profile) {
  return std::count(profile.convolutionInBF16.begin(), profile.convolutionInBF16.end(), true);
}

int64_t countEmulatedProducts(const ProgramProfile &profile) {
  return std::count(profile.productEmulated.begin(), profile.productEmulated.end(), true);
}

std::string describeInstruction(const Program &program, size_t index, bool convolutionInBF16) {
  Instruction type = program.instructions_type()->GetEnum<Instruction>(index);
  std::string what = EnumNameInstruction(type);
  const Gemm *gemm = type == Instruction_Gemm ? program.instructions()->GetAs<Gemm>(index)
                     : type == Instruction_BlockedGemm
                         ? program.instructions()->GetAs<BlockedGemm>(index)->gemm()
                         : nullptr;
  if (gemm) {
    what += " " + std::to_string(gemm->m()) + "x" + std::to_string(gemm->n()) + "x" +
            std::to_string(gemm->k());
    if (gemm->batch() > 1)
      what += " (" + std::to_string(gemm->batch()) + " products)";
    if (gemm->precision() == DType_F32 && cpu::computesTransposedProduct(gemmShapeOf(*gemm)))
      what += " as C^T = B A^T";
    if (gemm->precision() == DType_BF16)
      what += " bf16";
    else if (gemm->precision() == DType_F16)
      what += " f16";
    if (type == Instruction_BlockedGemm) {
      const auto *blocked = program.instructions()->GetAs<BlockedGemm>(index);
      std::string kernel = "KernelCall " + std::to_string(blocked->update()->kernel());
      what += blocked->block_rows() == gemm->m()
                  ? ", each thread's rows then " + kernel
                  : " in blocks of " + std::to_string(blocked->block_rows()) +
                        " rows, each then " + kernel;
    }
  } else if (type == Instruction_Convolution) {
    const auto *conv = program.instructions()->GetAs<Convolution>(index);
    ConvolutionKind kind = conv->kind();
    what += kind == ConvolutionKind_Forward        ? " forward"
            : kind == ConvolutionKind_BackwardData ? " data gradient"
                                                   : " filter gradient";
    if (convolutionInBF16)
      what += " bf16";
  } else if (type == Instruction_KernelCall) {
    const auto *call = program.instructions()->GetAs<KernelCall>(index);
    what += " " + std::to_string(call->kernel());
    if (call->rows() > 0)
      what += " (row-parallel)";
  }
  return what;
}

std::string formatProgramProfile(const Program &program, std::string_view name,
                                 const ProgramProfile &profile, size_t slowest) {
  std::string text = "profile of " + std::string(name) + ": ";
  if (profile.timedRuns == 0)
    return text + "no run after the " + std::to_string(profile.warmRuns) +
           " warm-up runs (train more steps)\n";
  double runs = static_cast<double>(profile.timedRuns);
  double total = std::accumulate(profile.seconds.begin(), profile.seconds.end(), 0.0);
  text += milliseconds(total / runs) + " a run in its instructions, over " +
          std::to_string(profile.timedRuns) + " runs after " +
          std::to_string(profile.warmRuns) + " warm-up runs\n";
  double byKind[static_cast<int>(Kind::Count)] = {};
  int64_t counts[static_cast<int>(Kind::Count)] = {};
  int64_t split[static_cast<int>(Kind::Count)] = {}; // Chose more than one thread.
  size_t count = std::min<size_t>(profile.seconds.size(), program.instructions()->size());
  for (size_t i = 0; i < count; ++i) {
    int kind = static_cast<int>(kindOf(program.instructions_type()->GetEnum<Instruction>(i)));
    byKind[kind] += profile.seconds[i];
    ++counts[kind];
    split[kind] += threadsOf(profile, i) > 1;
  }
  for (int kind = 0; kind < static_cast<int>(Kind::Count); ++kind) {
    if (!counts[kind])
      continue;
    char share[16];
    std::snprintf(share, sizeof share, "%.0f%%", total > 0 ? byKind[kind] / total * 100 : 0.0);
    text += "  " + std::string(kindName(static_cast<Kind>(kind))) + ": " +
            milliseconds(byKind[kind] / runs) + " (" + share + ", " +
            std::to_string(counts[kind]) + " instructions" +
            (split[kind] ? ", " + std::to_string(split[kind]) + " on more than one thread" : "") +
            ")\n";
  }
  std::vector<size_t> order(count);
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return profile.seconds[a] > profile.seconds[b];
  });
  order.resize(std::min(order.size(), slowest));
  text += "  slowest:";
  for (size_t i : order) {
    int threads = threadsOf(profile, i);
    bool inBF16 = i < profile.convolutionInBF16.size() && profile.convolutionInBF16[i];
    text += " [" + std::to_string(i) + "] " + describeInstruction(program, i, inBF16) +
            (threads > 1 ? " on " + std::to_string(threads) + " threads" : "") + " " +
            milliseconds(profile.seconds[i] / runs) + (i == order.back() ? "" : ";");
  }
  return text + "\n";
}

} // namespace kiln::exec
