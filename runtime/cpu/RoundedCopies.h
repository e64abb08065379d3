//===- RoundedCopies.h - An emulated 16-bit product's inputs ----*- C++ -*-===//
//
// A bf16 or f16 product computed in f32 (LowPrecisionGemm's emulated path)
// multiplies f32 copies of its inputs that hold 16-bit values: an f32 input
// rounded to the 16-bit type, or a 16-bit input (a kernel rounded it)
// widened. Both are a pass over the input that costs, on the transformer's
// thin products, a third of the product's own time on one thread in plain
// code; here sixteen values at a time with AVX-512 where the CPU has it, on
// the product's threads when the input is large. Every value is converted
// on its own, so any split and any instruction set give the same bits.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_CPU_ROUNDEDCOPIES_H
#define KILN_RUNTIME_CPU_ROUNDEDCOPIES_H

#include "runtime/cpu/Gemm.h"

#include <cstdint>

namespace kiln::cpu {

/// `out[i]` = `in[i]` rounded to the nearest value of `precision` (bf16 or
/// f16; ties to even, NaNs stay NaNs), as f32; on up to `threads` threads.
void roundToValues(GemmPrecision precision, const float *in, float *out, int64_t count,
                   int threads);

/// `out[i]` = the 16-bit value `in[i]` of `precision`, exactly, as f32; on
/// up to `threads` threads.
void widenValues(GemmPrecision precision, const uint16_t *in, float *out, int64_t count,
                 int threads);

} // namespace kiln::cpu

#endif // KILN_RUNTIME_CPU_ROUNDEDCOPIES_H
