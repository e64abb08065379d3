//===- Convolution.h - f32 and bf16 convolutions through oneDNN -*- C++ -*-===//
//
// The artifact's Convolution instruction: a convolution, or one of its two
// gradients, over channels-first f32 tensors with 1 to 3 spatial
// dimensions, run by a oneDNN primitive made once per session over the
// buffers' fixed addresses (plain, row-major memory) and executed each step.
// The primitive may want its tensors in blocked layouts (channels in blocks
// of 8 or 16): then it has buffers of its own in those layouts, filled and
// drained by reorders around each run.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_CPU_CONVOLUTION_H
#define KILN_RUNTIME_CPU_CONVOLUTION_H

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kiln::cpu {

enum class ConvolutionKind { Forward, BackwardData, BackwardFilter };

/// input [N, C, D...], filter [F, C / groups, K...], output [N, F, O...].
struct ConvolutionShape {
  ConvolutionKind kind = ConvolutionKind::Forward;
  std::vector<int64_t> input, filter, output;
  std::vector<int64_t> strides, dilations, padLow, padHigh;
  int64_t groups = 1;
  /// The two buffers read rounded to bf16, the products summed in f32 into
  /// the f32 buffer written (kilnc --precision=bf16), where the runtime
  /// takes the CPU's bf16 instructions (convolutionsInBF16) and oneDNN has a
  /// bf16 kernel for the shape; else in f32 (Convolution::bf16 says).
  bool bf16 = false;
};

/// Below this many input channels per group a convolution's data gradient
/// keeps the plain layouts (see prefersBlockedLayouts).
constexpr int64_t kMinBlockedInputChannels = 16;

/// Whether the convolution runs oneDNN's kernel for blocked layouts (the
/// buffers reordered into them and out again each run; 1.5-15x faster than
/// the plain im2col one on the shapes measured) rather than the plain one.
/// Decided by the shape alone, so results never depend on timing:
/// KILN_CONV_LAYOUT=plain forces the plain kernels, for comparison.
bool prefersBlockedLayouts(const ConvolutionShape &shape);

/// Whether convolutions asked in bf16 run so on this CPU: where its bf16
/// instructions (AVX512_BF16 or AMX) are the runtime's choice for bf16
/// products too (nativeLowPrecisionAllowed: not slower than f32, not turned
/// off by KILN_EMULATE_LOW_PRECISION); else in f32.
bool convolutionsInBF16();

class Convolution {
public:
  /// Makes the primitive for buffers at these addresses (the two read and
  /// the one written, as `shape.kind` says). Null with `error` set when
  /// oneDNN refuses the shape.
  static std::unique_ptr<Convolution> create(const ConvolutionShape &shape,
                                             float *input, float *filter,
                                             float *output, std::string &error);
  ~Convolution();

  /// Runs it; false with `error` set on a library failure.
  bool run(std::string &error) const;

  /// Whether it runs in bf16 (asked for, convolutionsInBF16, and oneDNN
  /// has a blocked bf16 kernel for the shape).
  bool bf16() const;

private:
  struct Impl;
  explicit Convolution(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace kiln::cpu

#endif // KILN_RUNTIME_CPU_CONVOLUTION_H
