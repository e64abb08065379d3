//===- FloatRounding.cpp - f32 to and from f16 and bf16 -------------------===//

#include "runtime/support/FloatRounding.h"

#include <cpuid.h>
#include <cstring>
#include <immintrin.h>

namespace kiln {

namespace {

uint32_t bitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

float floatOf(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

/// `value >> shift` rounded to nearest, ties to even; 1 <= shift <= 31.
uint32_t shiftRightRoundingToEven(uint32_t value, uint32_t shift) {
  uint32_t result = value >> shift;
  uint32_t remainder = value & ((1u << shift) - 1);
  uint32_t half = 1u << (shift - 1);
  if (remainder > half || (remainder == half && (result & 1)))
    ++result;
  return result;
}

constexpr uint32_t kF32Infinity = 0x7F800000;
// 65520: halfway between the largest f16 (65504) and 65536, which rounds
// (to even) up to infinity.
constexpr uint32_t kF16OverflowThreshold = 0x477FF000;
constexpr uint32_t kF16SmallestNormal = 0x38800000;       // 2^-14
constexpr uint32_t kF16HalfSmallestDenormal = 0x33000000; // 2^-25
constexpr uint32_t kF32ToF16ExponentRebias = 112u << 23;  // (127 - 15) << 23

} // namespace

uint16_t roundToF16(float value) {
  uint32_t bits = bitsOf(value);
  uint32_t sign = (bits >> 16) & 0x8000;
  uint32_t magnitude = bits & 0x7FFFFFFF;
  if (magnitude > kF32Infinity) // NaN: keep the top payload bits, quiet.
    return sign | 0x7E00 | ((magnitude >> 13) & 0x3FF);
  if (magnitude >= kF16OverflowThreshold)
    return sign | 0x7C00;
  if (magnitude >= kF16SmallestNormal)
    return sign |
           shiftRightRoundingToEven(magnitude - kF32ToF16ExponentRebias, 13);
  if (magnitude <= kF16HalfSmallestDenormal)
    return sign;
  // Denormal: the value in units of 2^-24, from the f32 significand
  // (implicit bit included) scaled by its exponent.
  uint32_t exponent = magnitude >> 23;
  uint32_t significand = (magnitude & 0x7FFFFF) | 0x800000;
  return sign | shiftRightRoundingToEven(significand, 126 - exponent);
}

uint16_t roundToBF16(float value) {
  uint32_t bits = bitsOf(value);
  if ((bits & 0x7FFFFFFF) > kF32Infinity)
    return (bits >> 16) | 0x0040;
  return shiftRightRoundingToEven(bits, 16);
}

float f16ToFloat(uint16_t bits) {
  uint32_t sign = uint32_t(bits & 0x8000) << 16;
  uint32_t exponent = (bits >> 10) & 0x1F;
  uint32_t mantissa = bits & 0x3FF;
  if (exponent == 0) {
    float magnitude = float(mantissa) * 0x1p-24f;
    return floatOf(sign | bitsOf(magnitude));
  }
  if (exponent == 31) // An infinity, or a NaN made quiet (as F16C's conversion makes it).
    return floatOf(sign | kF32Infinity | (mantissa << 13) | (mantissa ? 0x400000u : 0u));
  return floatOf(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

float bf16ToFloat(uint16_t bits) { return floatOf(uint32_t(bits) << 16); }

namespace {

/// F16C (and AVX, with the OS saving its registers) from CPUID itself:
/// clang 14, which builds the fuzzers, knows no "f16c" feature for
/// __builtin_cpu_supports.
bool hasF16c() {
  static const bool f16c = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return __builtin_cpu_supports("avx") && __get_cpuid(1, &eax, &ebx, &ecx, &edx) &&
           (ecx & bit_F16C) != 0;
  }();
  return f16c;
}

// The instruction rounds to nearest even, overflows to infinity, keeps
// denormals (MXCSR's flush-to-zero does not apply to it) and quiets a NaN
// keeping its top payload bits: roundToF16 to the bit.
__attribute__((target("avx,f16c"))) size_t roundToF16F16c(const float *in, void *out,
                                                           size_t count) {
  size_t i = 0;
  for (; i + 8 <= count; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i *>(static_cast<char *>(out) + 2 * i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT));
  return i;
}

__attribute__((target("avx,f16c"))) size_t f16ToFloatF16c(const void *in, float *out,
                                                           size_t count) {
  size_t i = 0;
  for (; i + 8 <= count; i += 8)
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(
                                  reinterpret_cast<const __m128i *>(
                                      static_cast<const char *>(in) + 2 * i))));
  return i;
}

} // namespace

void roundToF16Bytes(const float *in, void *out, size_t count) {
  size_t i = hasF16c() ? roundToF16F16c(in, out, count) : 0;
  for (; i < count; ++i) {
    uint16_t bits = roundToF16(in[i]);
    std::memcpy(static_cast<char *>(out) + 2 * i, &bits, sizeof bits);
  }
}

void f16BytesToFloat(const void *in, float *out, size_t count) {
  size_t i = hasF16c() ? f16ToFloatF16c(in, out, count) : 0;
  for (; i < count; ++i) {
    uint16_t bits;
    std::memcpy(&bits, static_cast<const char *>(in) + 2 * i, sizeof bits);
    out[i] = f16ToFloat(bits);
  }
}

} // namespace kiln
