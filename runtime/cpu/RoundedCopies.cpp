//===- RoundedCopies.cpp - An emulated 16-bit product's inputs ------------===//

#include "runtime/cpu/RoundedCopies.h"

#include "runtime/support/FloatRounding.h"

// GCC 12's AVX-512 intrinsics pass a self-initialized "undefined" source
// (_mm512_undefined_epi32) that -Wmaybe-uninitialized reports once they
// are inlined into a function of another target.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#include <omp.h>

#include <algorithm>
#include <cstring>

namespace kiln::cpu {

namespace {

/// Fewer values than this a thread are converted on one: waking a second
/// thread costs more than it saves.
constexpr int64_t kValuesPerThread = 32768;

/// `convert(begin, end)` over [0, count), in one contiguous range a thread.
template <typename Convert>
void onThreads(int64_t count, int threads, const Convert &convert) {
  int used = static_cast<int>(std::min<int64_t>(threads, count / kValuesPerThread));
  if (used <= 1) {
    convert(0, count);
    return;
  }
#pragma omp parallel num_threads(used)
  {
    int64_t t = omp_get_thread_num(), n = omp_get_num_threads();
    convert(count * t / n, count * (t + 1) / n);
  }
}

bool hasAvx512() {
  static const bool has = __builtin_cpu_supports("avx512f");
  return has;
}

/// One f32's bits rounded to bfloat16's (in the high half): ties to even,
/// a NaN kept a (quiet) NaN.
uint32_t roundedBF16Bits(uint32_t bits) {
  bool nan = (bits & 0x7fffffffu) > 0x7f800000u;
  uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) & 0xffff0000u;
  return nan ? (bits | 0x00400000u) & 0xffff0000u : rounded;
}

void roundToBF16Plain(const float *in, float *out, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) {
    uint32_t bits;
    std::memcpy(&bits, &in[i], 4);
    bits = roundedBF16Bits(bits);
    std::memcpy(&out[i], &bits, 4);
  }
}

/// roundedBF16Bits sixteen at a time.
__attribute__((target("avx512f"))) void roundToBF16Avx512(const float *in, float *out,
                                                          int64_t begin, int64_t end) {
  const __m512i one = _mm512_set1_epi32(1), bias = _mm512_set1_epi32(0x7fff);
  const __m512i high = _mm512_set1_epi32(static_cast<int>(0xffff0000u));
  const __m512i magnitude = _mm512_set1_epi32(0x7fffffff);
  const __m512i infinity = _mm512_set1_epi32(0x7f800000), quiet = _mm512_set1_epi32(0x00400000);
  int64_t i = begin;
  for (; i + 16 <= end; i += 16) {
    __m512i bits = _mm512_loadu_si512(in + i);
    __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(bits, 16), one);
    __m512i rounded = _mm512_and_si512(_mm512_add_epi32(_mm512_add_epi32(bits, bias), lsb), high);
    __mmask16 nan =
        _mm512_cmpgt_epu32_mask(_mm512_and_si512(bits, magnitude), infinity);
    __m512i quieted = _mm512_and_si512(_mm512_or_si512(bits, quiet), high);
    _mm512_storeu_si512(out + i, _mm512_mask_blend_epi32(nan, rounded, quieted));
  }
  roundToBF16Plain(in, out, i, end);
}

void widenBF16Plain(const uint16_t *in, float *out, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) {
    uint32_t bits = static_cast<uint32_t>(in[i]) << 16;
    std::memcpy(&out[i], &bits, 4);
  }
}

__attribute__((target("avx512f"))) void widenBF16Avx512(const uint16_t *in, float *out,
                                                        int64_t begin, int64_t end) {
  int64_t i = begin;
  for (; i + 16 <= end; i += 16) {
    __m256i half = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(in + i));
    _mm512_storeu_si512(out + i, _mm512_slli_epi32(_mm512_cvtepu16_epi32(half), 16));
  }
  widenBF16Plain(in, out, i, end);
}

/// With F16C (every x86 CPU with AVX2 has it): eight at a time, the
/// instruction's round to nearest even.
__attribute__((target("avx,f16c"))) void roundToF16F16c(const float *in, float *out,
                                                        int64_t begin, int64_t end) {
  int64_t i = begin;
  for (; i + 8 <= end; i += 8) {
    __m128i half = _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT);
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(half));
  }
  for (; i < end; ++i)
    out[i] = f16ToFloat(roundToF16(in[i]));
}

void roundRangeToF16(const float *in, float *out, int64_t begin, int64_t end) {
  static const bool f16c = __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx");
  if (f16c)
    return roundToF16F16c(in, out, begin, end);
  for (int64_t i = begin; i < end; ++i)
    out[i] = f16ToFloat(roundToF16(in[i]));
}

} // namespace

void roundToValues(GemmPrecision precision, const float *in, float *out, int64_t count,
                   int threads) {
  onThreads(count, threads, [&](int64_t begin, int64_t end) {
    if (precision != GemmPrecision::BF16)
      roundRangeToF16(in, out, begin, end);
    else if (hasAvx512())
      roundToBF16Avx512(in, out, begin, end);
    else
      roundToBF16Plain(in, out, begin, end);
  });
}

void widenValues(GemmPrecision precision, const uint16_t *in, float *out, int64_t count,
                 int threads) {
  onThreads(count, threads, [&](int64_t begin, int64_t end) {
    if (precision != GemmPrecision::BF16)
      f16BytesToFloat(in + begin, out + begin, static_cast<size_t>(end - begin));
    else if (hasAvx512())
      widenBF16Avx512(in, out, begin, end);
    else
      widenBF16Plain(in, out, begin, end);
  });
}

} // namespace kiln::cpu
