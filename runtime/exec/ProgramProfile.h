//===- ProgramProfile.h - Where a program's time goes -----------*- C++ -*-===//
//
// `kiln run --profile`: each instruction of a program timed over its runs
// (after warm-up runs: the first ones measure each product's threads), then
// summed by kind (GEMM, convolutions, generated kernels, communication, the
// rest) and the slowest instructions named, as a few lines of text.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_EXEC_PROGRAMPROFILE_H
#define KILN_RUNTIME_EXEC_PROGRAMPROFILE_H

#include "proto/kiln/artifact_generated.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::exec {

/// The timed runs of a program and each instruction's seconds over them.
struct ProgramProfile {
  int64_t warmRuns = 0;  ///< Runs not timed, first.
  int64_t timedRuns = 0;
  std::vector<double> seconds; ///< By instruction.
  /// By instruction: the threads a product or a row-parallel kernel runs
  /// on (cpu::ThreadChoice), 0 for the others and while still measuring.
  std::vector<int> threads;
  /// By instruction: a convolution that runs oneDNN's bf16 kernel
  /// (cpu::Convolution::bf16(): asked in bf16, on a CPU with bf16
  /// instructions, in blocked layouts oneDNN has a bf16 kernel for).
  std::vector<bool> convolutionInBF16;
  /// By instruction: a 16-bit product multiplied in f32 on this CPU
  /// (cpu::LowPrecisionGemm::native() false: no bf16 instructions, ones
  /// slower than f32's, or a shape oneDNN has no fast or safe kernel for).
  std::vector<bool> productEmulated;
};

/// What instruction `index` of `program` is, in a few words: "Gemm
/// 512x1000x128 bf16", "Convolution filter gradient bf16" (where
/// `convolutionInBF16`), "KernelCall 12 (row-parallel)".
std::string describeInstruction(const artifact::Program &program, size_t index,
                                bool convolutionInBF16 = false);

/// How many of `profile`'s instructions are convolutions in bf16.
int64_t countConvolutionsInBF16(const ProgramProfile &profile);
/// How many of `profile`'s instructions are 16-bit products emulated in f32.
int64_t countEmulatedProducts(const ProgramProfile &profile);

/// The profile as text: one line with the runs and the time a run, a line
/// per kind of instruction (ms a run, share, count), then the `slowest`
/// instructions.
std::string formatProgramProfile(const artifact::Program &program, std::string_view name,
                                 const ProgramProfile &profile, size_t slowest = 5);

} // namespace kiln::exec

#endif // KILN_RUNTIME_EXEC_PROGRAMPROFILE_H
