//===- LowPrecisionGemm.h - bf16 and f16 matrix products --------*- C++ -*-===//
//
// A product of kilnc --precision=bf16 (or fp16): its f32 inputs are rounded
// to the 16-bit type and the products summed in f32 into an f32 output.
// Where the CPU multiplies bf16 itself (AVX512_BF16 or AMX-BF16) faster
// than f32 and oneDNN has a kernel for it, the inputs are converted to bf16
// buffers and oneDNN's bf16 matmul computes the product: 1.5-1.7x the f32
// rate measured. Elsewhere the product is emulated: the inputs are rounded to the
// 16-bit type's values in f32 buffers and oneDNN's sgemm multiplies them,
// with the same rounding of the inputs and f32 sums (not faster than f32).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_CPU_LOWPRECISIONGEMM_H
#define KILN_RUNTIME_CPU_LOWPRECISIONGEMM_H

#include "runtime/cpu/Gemm.h"
#include "runtime/cpu/KernelLibrary.h"

#include <memory>
#include <string>

namespace kiln::cpu {

/// How this process computes products of `precision`, and why: "AVX512_BF16
/// through oneDNN", "emulated in f32 (this CPU has neither AVX512_BF16 nor
/// AMX-BF16)", ...; for F32, "f32".
std::string lowPrecisionGemmPath(GemmPrecision precision);

/// Whether this CPU has instructions that multiply `precision` natively.
bool hasNativeGemm(GemmPrecision precision);

/// Whether this process multiplies bf16 natively where the CPU can: not
/// where its AVX512_BF16 dot products are measured to do fewer
/// multiply-adds than its f32 FMAs (bf16DotProductRates: emulating is then
/// the faster), nor with KILN_EMULATE_LOW_PRECISION=1 (to compare the two);
/// always with KILN_EMULATE_LOW_PRECISION=0. Decided once per process.
bool nativeLowPrecisionAllowed();

/// Where an input's converted copy lives instead of the scratch: `copy`
/// (4 bytes an element, 64-byte aligned: the artifact's copy slot), which the
/// product fills when `convert`, or reads as an earlier product of the
/// program filled it from the same tensor. With `isInput`, `copy` is the
/// product's input itself, already of its 16-bit type (a kernel rounded it:
/// the artifact's buffer is bf16): nothing to convert, and an emulated
/// product widens it into the scratch.
struct ConvertedCopySlot {
  void *copy = nullptr;
  bool convert = true;
  bool isInput = false;
};

/// A product's epilogue: the row entry of the elementwise kernel that reads
/// C (its `argCount` buffer addresses `args`, C's among them), whose rows
/// are `rowsPerKernelRow` rows of the product each. A product computed in
/// parts runs it on each part's rows right after that part, on the part's
/// thread, while they are in its cache; otherwise after the whole product.
struct RowEpilogue {
  KernelFunction rowKernel = nullptr;
  void *const *args = nullptr;
  size_t argCount = 0;
  int64_t rowsPerKernelRow = 1;
};

class LowPrecisionGemm {
public:
  /// Bytes of scratch memory the product `shape` needs for its converted
  /// inputs (64-byte aligned; enough either way, native or emulated).
  static size_t scratchBytes(const GemmShape &shape);

  /// Prepares the product `shape` (its precision BF16 or F16) of the
  /// buffers `a`, `b` into `c`, natively where the CPU can and `allowNative`
  /// (false: always emulated, to compare the two). The converted inputs go
  /// to `scratch` (scratchBytes(shape), 64-byte aligned, which the products
  /// of one program share: they run one at a time), or to memory of its own
  /// when null, or to the copy slots given. Null with `error` set when
  /// oneDNN refuses it.
  static std::unique_ptr<LowPrecisionGemm> create(const GemmShape &shape, const float *a,
                                                  const float *b, float *c, bool allowNative,
                                                  void *scratch, std::string &error,
                                                  ConvertedCopySlot slotA = {},
                                                  ConvertedCopySlot slotB = {});
  ~LowPrecisionGemm();

  /// Computes the product; false with `error` set on a library failure.
  /// An emulated product takes `threads` as gemm() does, and so does a
  /// native one that splits(); any other native one runs on the threads
  /// threadsForMacs gave it when it was made (oneDNN's split).
  bool run(std::string &error, int threads = 0);

  /// Whether this native product is computed in parts kiln runs on one
  /// thread or several with the same bits (its thread choice may then be
  /// measured, as an f32 product's is).
  bool splits() const;

  /// Whether the CPU multiplies the 16-bit values (else emulated in f32).
  bool native() const;

  /// Runs `epilogue` after the product from now on (see RowEpilogue).
  void setEpilogue(const RowEpilogue &epilogue);

  struct Impl;

private:
  explicit LowPrecisionGemm(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace kiln::cpu

#endif // KILN_RUNTIME_CPU_LOWPRECISIONGEMM_H
