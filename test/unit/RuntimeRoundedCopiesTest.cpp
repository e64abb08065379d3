//===- RuntimeRoundedCopiesTest.cpp - An emulated product's inputs --------===//

#include "runtime/cpu/RoundedCopies.h"
#include "runtime/support/FloatRounding.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using namespace kiln;

namespace {

uint32_t bitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  return bits;
}

float fromBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, 4);
  return value;
}

/// Values of every kind (ties both ways, the largest finite and beyond,
/// denormals, signed zeros, infinities, NaNs with payloads) then random
/// bits and random small integers scaled, `count` in all.
std::vector<float> valuesOfEveryKind(size_t count) {
  std::vector<float> values;
  for (uint32_t bits : {0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00000u,
                        0xFFC00001u, 0x7F80ABCDu, 0x7FBFFFFFu, 0x7F7FFFFFu, 0x7F7F8000u,
                        0x7F7F7FFFu, 0x3F808000u, 0x3F818000u, 0x3F808001u, 0x00000001u,
                        0x00008000u, 0x80018000u, 0x477FF000u, 0x38800000u, 0x33000001u})
    values.push_back(fromBits(bits));
  std::mt19937 rng(7);
  while (values.size() < count) {
    uint32_t bits = rng();
    values.push_back(values.size() % 2
                         ? fromBits(bits)
                         : std::ldexp(float(rng() % 4096), int(rng() % 50) - 40));
  }
  return values;
}

/// `rounded` (values of `precision` in f32) against the scalar conversions:
/// the same bits, except that a NaN need only stay a NaN of its sign.
void expectScalarBits(cpu::GemmPrecision precision, const std::vector<float> &in,
                      const std::vector<float> &rounded) {
  for (size_t i = 0; i < in.size(); ++i) {
    float expected = precision == cpu::GemmPrecision::BF16 ? bf16ToFloat(roundToBF16(in[i]))
                                                           : f16ToFloat(roundToF16(in[i]));
    if (std::isnan(in[i])) {
      ASSERT_TRUE(std::isnan(rounded[i])) << "value " << i;
      ASSERT_EQ(std::signbit(rounded[i]), std::signbit(in[i])) << "value " << i;
      continue;
    }
    ASSERT_EQ(bitsOf(rounded[i]), bitsOf(expected))
        << "value " << i << " bits " << std::hex << bitsOf(in[i]);
  }
}

} // namespace

// Tests that the emulated product's rounding (sixteen at a time with
// AVX-512 where the CPU has it, eight with F16C, then one by one) gives the
// scalar conversions' bits, in a count that leaves a tail, and that two
// threads (the values split in two ranges) give what one does.
TEST(RuntimeRoundedCopiesTest, RoundingGivesTheScalarBitsOnAnyThreads) {
  std::vector<float> in = valuesOfEveryKind(3 * 32768 + 13);
  for (cpu::GemmPrecision precision : {cpu::GemmPrecision::BF16, cpu::GemmPrecision::F16}) {
    SCOPED_TRACE(precision == cpu::GemmPrecision::BF16 ? "bf16" : "f16");
    std::vector<float> one(in.size(), NAN), two(in.size(), NAN);
    cpu::roundToValues(precision, in.data(), one.data(), static_cast<int64_t>(in.size()), 1);
    cpu::roundToValues(precision, in.data(), two.data(), static_cast<int64_t>(in.size()), 2);
    expectScalarBits(precision, in, one);
    ASSERT_EQ(std::memcmp(one.data(), two.data(), 4 * one.size()), 0);
  }
}

// Tests that widening gives every 16-bit value exactly, from any start
// (an odd one: unaligned for the sixteen-at-a-time loads), on one thread
// and two.
TEST(RuntimeRoundedCopiesTest, WideningIsExactOnAnyThreads) {
  std::vector<uint16_t> every(2 * 65536 + 1);
  for (size_t i = 0; i < every.size(); ++i)
    every[i] = static_cast<uint16_t>(i - 1);
  for (cpu::GemmPrecision precision : {cpu::GemmPrecision::BF16, cpu::GemmPrecision::F16})
    for (int threads : {1, 2}) {
      SCOPED_TRACE(std::string(precision == cpu::GemmPrecision::BF16 ? "bf16" : "f16") +
                   " on " + std::to_string(threads));
      std::vector<float> out(every.size() - 1, NAN);
      cpu::widenValues(precision, every.data() + 1, out.data(),
                       static_cast<int64_t>(out.size()), threads);
      for (size_t i = 0; i < out.size(); ++i) {
        uint16_t half = every[i + 1];
        float expected = precision == cpu::GemmPrecision::BF16 ? bf16ToFloat(half)
                                                               : f16ToFloat(half);
        if (std::isnan(expected))
          ASSERT_TRUE(std::isnan(out[i])) << "16-bit value " << half;
        else
          ASSERT_EQ(bitsOf(out[i]), bitsOf(expected)) << "16-bit value " << half;
      }
    }
}
