//===- InstructionRates.cpp - bf16 dot products against f32 FMAs ----------===//

#include "runtime/support/InstructionRates.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace kiln {

namespace {

/// Each run's loop count: 64,000 instructions of each kind, 13 us of FMAs
/// and 47 us of dot products on the Xeon without AMX (InstructionRates.h).
constexpr int64_t kIterations = 4000;
constexpr int kRuns = 5;

// Sixteen accumulators (zmm0-15), each instruction independent of the
// previous one on its register; every register starts at zero, so no
// value is ever a denormal (which could slow the FMAs).
#define KILN_SIXTEEN(op)                                                                       \
  op " %%zmm16, %%zmm17, %%zmm0\n\t" op " %%zmm16, %%zmm17, %%zmm1\n\t" op                     \
     " %%zmm16, %%zmm17, %%zmm2\n\t" op " %%zmm16, %%zmm17, %%zmm3\n\t" op                     \
     " %%zmm16, %%zmm17, %%zmm4\n\t" op " %%zmm16, %%zmm17, %%zmm5\n\t" op                     \
     " %%zmm16, %%zmm17, %%zmm6\n\t" op " %%zmm16, %%zmm17, %%zmm7\n\t" op                     \
     " %%zmm16, %%zmm17, %%zmm8\n\t" op " %%zmm16, %%zmm17, %%zmm9\n\t" op                     \
     " %%zmm16, %%zmm17, %%zmm10\n\t" op " %%zmm16, %%zmm17, %%zmm11\n\t" op                   \
     " %%zmm16, %%zmm17, %%zmm12\n\t" op " %%zmm16, %%zmm17, %%zmm13\n\t" op                   \
     " %%zmm16, %%zmm17, %%zmm14\n\t" op " %%zmm16, %%zmm17, %%zmm15\n\t"

#define KILN_ZERO(r) "vpxord %%" r ", %%" r ", %%" r "\n\t"
#define KILN_ZEROED                                                                            \
  KILN_ZERO("zmm0") KILN_ZERO("zmm1") KILN_ZERO("zmm2") KILN_ZERO("zmm3") KILN_ZERO("zmm4")     \
  KILN_ZERO("zmm5") KILN_ZERO("zmm6") KILN_ZERO("zmm7") KILN_ZERO("zmm8") KILN_ZERO("zmm9")     \
  KILN_ZERO("zmm10") KILN_ZERO("zmm11") KILN_ZERO("zmm12") KILN_ZERO("zmm13")                  \
  KILN_ZERO("zmm14") KILN_ZERO("zmm15") KILN_ZERO("zmm16") KILN_ZERO("zmm17")

#define KILN_CLOBBERS                                                                          \
  "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",     \
      "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "xmm16", "xmm17", "cc"

// A function running `iterations` rounds of sixteen `op` instructions.
#define KILN_RATE_LOOP(name, op)                                                               \
  __attribute__((target("avx512f"))) void name(int64_t iterations) {                          \
    __asm__ volatile(KILN_ZEROED "1:\n\t" KILN_SIXTEEN(op) "dec %0\n\t"                        \
                     "jnz 1b\n\t"                                                              \
                     "vzeroupper"                                                               \
                     : "+r"(iterations)                                                         \
                     :                                                                          \
                     : KILN_CLOBBERS);                                                          \
  }

KILN_RATE_LOOP(runDotProducts, "vdpbf16ps")
KILN_RATE_LOOP(runFmas, "vfmadd231ps")

#undef KILN_RATE_LOOP
#undef KILN_SIXTEEN
#undef KILN_ZERO
#undef KILN_ZEROED
#undef KILN_CLOBBERS

template <typename Loop> double secondsOf(Loop loop) {
  auto start = std::chrono::steady_clock::now();
  loop(kIterations);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

DotProductRates measure() {
  runFmas(kIterations); // The first wide instructions wait for the vector unit to wake.
  double dot = 1e9, fma = 1e9;
  for (int run = 0; run < kRuns; ++run) {
    dot = std::min(dot, secondsOf(runDotProducts));
    fma = std::min(fma, secondsOf(runFmas));
  }
  double instructions = 16.0 * kIterations;
  return {instructions * 32 / dot, instructions * 16 / fma};
}

} // namespace

const std::optional<DotProductRates> &bf16DotProductRates() {
  static const std::optional<DotProductRates> rates =
      __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bf16")
          ? std::optional<DotProductRates>(measure())
          : std::nullopt;
  return rates;
}

std::optional<bool> lowPrecisionEmulationSetByEnvironment() {
  const char *text = std::getenv("KILN_EMULATE_LOW_PRECISION");
  if (text && std::strcmp(text, "1") == 0)
    return true;
  if (text && std::strcmp(text, "0") == 0)
    return false;
  return std::nullopt;
}

bool bf16DotProductsTooSlow(bool hasAmx) {
  const std::optional<DotProductRates> &rates = bf16DotProductRates();
  return !hasAmx && rates && rates->ratio() < kMinNativeBF16Ratio;
}

} // namespace kiln
