//===- FloatRounding.h - f32 to and from f16 and bf16 -----------*- C++ -*-===//
//
// The conversions the runtime uses wherever a 16-bit float is produced from an
// f32 (variable initializers, .npy feeds): IEEE round to nearest, ties to
// even; values beyond the largest finite number become infinities; NaNs stay
// (quiet) NaNs with their sign.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SUPPORT_FLOATROUNDING_H
#define KILN_RUNTIME_SUPPORT_FLOATROUNDING_H

#include <cstddef>
#include <cstdint>

namespace kiln {

/// The IEEE binary16 bits nearest to `value` (ties to even).
uint16_t roundToF16(float value);

/// The bfloat16 bits nearest to `value` (ties to even).
uint16_t roundToBF16(float value);

/// The f32 equal to the IEEE binary16 `bits` (exact).
float f16ToFloat(uint16_t bits);

/// The f32 equal to the bfloat16 `bits` (exact).
float bf16ToFloat(uint16_t bits);

/// `count` values at once, as roundToF16 and f16ToFloat each (the same
/// bits), eight at a time with F16C where the CPU has it (every x86 CPU
/// with AVX2). The 16-bit side is bytes at any address (a message's).
void roundToF16Bytes(const float *in, void *out, size_t count);
void f16BytesToFloat(const void *in, float *out, size_t count);

} // namespace kiln

#endif // KILN_RUNTIME_SUPPORT_FLOATROUNDING_H
