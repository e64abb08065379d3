//===- RuntimeInstructionRatesTest.cpp - bf16 dot products against FMAs ---===//

#include "runtime/cpu/CpuFeatures.h"
#include "runtime/cpu/LowPrecisionGemm.h"
#include "runtime/support/InstructionRates.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

using namespace kiln;

// Tests the measured rates the runtime chooses bf16 kernels by: none
// without AVX512_BF16; with it, both of a core's order (10^9 to 10^12
// multiply-adds a second), and the choice they make.
TEST(RuntimeInstructionRatesTest, RatesOfACoreChooseTheBF16Kernels) {
  const std::optional<DotProductRates> &rates = bf16DotProductRates();
  bool hasBF16 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bf16");
  ASSERT_EQ(rates.has_value(), hasBF16);
  if (!rates)
    GTEST_SKIP() << "this CPU has no AVX512_BF16: nothing measured";
  for (double macs : {rates->bf16Macs, rates->f32Macs}) {
    EXPECT_GT(macs, 1e9);
    EXPECT_LT(macs, 1e12);
  }
  // Without AMX (whose kernels oneDNN takes whatever the rates), bf16
  // products run natively exactly where the dot products are not much
  // slower than the FMAs.
  if (!std::getenv("KILN_EMULATE_LOW_PRECISION") &&
      !cpu::hostHasCpuFeature("amx-bf16").value_or(false)) {
    EXPECT_EQ(cpu::nativeLowPrecisionAllowed(), rates->ratio() >= kMinNativeBF16Ratio);
  }
  std::printf("bf16 dot products %.1f G multiply-adds/s, f32 FMAs %.1f G: ratio %.2f\n",
              rates->bf16Macs / 1e9, rates->f32Macs / 1e9, rates->ratio());
}

// Tests KILN_EMULATE_LOW_PRECISION's three readings: "1" emulates, "0"
// takes the bf16 instructions, anything else (or unset) leaves the choice
// to the measurement.
TEST(RuntimeInstructionRatesTest, EnvironmentPinsTheChoice) {
  const char *saved = std::getenv("KILN_EMULATE_LOW_PRECISION");
  std::string kept = saved ? saved : "";
  unsetenv("KILN_EMULATE_LOW_PRECISION");
  EXPECT_EQ(lowPrecisionEmulationSetByEnvironment(), std::nullopt);
  for (auto [text, expected] : {std::pair<const char *, std::optional<bool>>{"1", true},
                                {"0", false}, {"yes", std::nullopt}, {"", std::nullopt}}) {
    setenv("KILN_EMULATE_LOW_PRECISION", text, 1);
    EXPECT_EQ(lowPrecisionEmulationSetByEnvironment(), expected) << "'" << text << "'";
  }
  if (saved)
    setenv("KILN_EMULATE_LOW_PRECISION", kept.c_str(), 1);
  else
    unsetenv("KILN_EMULATE_LOW_PRECISION");
}
