//===- RuntimeFloatRoundingTest.cpp - f32 to and from f16 and bf16 --------===//

#include "runtime/support/FloatRounding.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <xmmintrin.h>
#include <cstring>
#include <limits>
#include <random>

using namespace kiln;

namespace {

float floatOf(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

TEST(RuntimeFloatRoundingTest, F16ExactValuesAndLimits) {
  EXPECT_EQ(roundToF16(0.0f), 0x0000);
  EXPECT_EQ(roundToF16(-0.0f), 0x8000);
  EXPECT_EQ(roundToF16(1.0f), 0x3C00);
  EXPECT_EQ(roundToF16(-2.0f), 0xC000);
  EXPECT_EQ(roundToF16(65504.0f), 0x7BFF); // Largest finite.
  EXPECT_EQ(roundToF16(0x1p-14f), 0x0400); // Smallest normal.
  EXPECT_EQ(roundToF16(0x1p-24f), 0x0001); // Smallest denormal.
  EXPECT_EQ(roundToF16(std::numeric_limits<float>::infinity()), 0x7C00);
  EXPECT_EQ(roundToF16(-std::numeric_limits<float>::infinity()), 0xFC00);
}

TEST(RuntimeFloatRoundingTest, F16RoundsToNearestEven) {
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even (1).
  EXPECT_EQ(roundToF16(1.0f + 0x1p-11f), 0x3C00);
  // 1 + 3 * 2^-11 is halfway between odd 0x3C01 and even 0x3C02.
  EXPECT_EQ(roundToF16(1.0f + 3 * 0x1p-11f), 0x3C02);
  EXPECT_EQ(roundToF16(1.0f + 0x1p-11f + 0x1p-20f), 0x3C01);
  // Overflow: 65519 rounds down to 65504, 65520 (the tie) up to infinity.
  EXPECT_EQ(roundToF16(65519.0f), 0x7BFF);
  EXPECT_EQ(roundToF16(65520.0f), 0x7C00);
  // Denormals: 2^-25 ties to 0, a little more rounds to the smallest.
  EXPECT_EQ(roundToF16(0x1p-25f), 0x0000);
  EXPECT_EQ(roundToF16(0x1.000002p-25f), 0x0001);
  EXPECT_EQ(roundToF16(3 * 0x1p-25f), 0x0002); // 1.5 units: ties to even.
  // The largest denormal rounds up into the smallest normal.
  EXPECT_EQ(roundToF16(0x1p-14f - 0x1p-26f), 0x0400);
}

TEST(RuntimeFloatRoundingTest, NaNsStayQuietNaNs) {
  float nan = std::numeric_limits<float>::quiet_NaN();
  uint16_t f16 = roundToF16(nan);
  EXPECT_EQ(f16 & 0x7C00, 0x7C00);
  EXPECT_NE(f16 & 0x03FF, 0);
  EXPECT_TRUE(std::isnan(f16ToFloat(f16)));
  // A signalling NaN whose payload lives only in the low bits stays a NaN.
  EXPECT_TRUE(std::isnan(f16ToFloat(roundToF16(floatOf(0x7F800001)))));
  EXPECT_TRUE(std::isnan(bf16ToFloat(roundToBF16(floatOf(0x7F800001)))));
  EXPECT_TRUE(std::isnan(bf16ToFloat(roundToBF16(-nan))));
}

TEST(RuntimeFloatRoundingTest, BF16RoundsToNearestEven) {
  EXPECT_EQ(roundToBF16(1.0f), 0x3F80);
  EXPECT_EQ(roundToBF16(-1.0f), 0xBF80);
  EXPECT_EQ(roundToBF16(floatOf(0x3F808000)), 0x3F80); // Tie: even.
  EXPECT_EQ(roundToBF16(floatOf(0x3F818000)), 0x3F82); // Tie: even.
  EXPECT_EQ(roundToBF16(floatOf(0x3F808001)), 0x3F81);
  EXPECT_EQ(roundToBF16(floatOf(0x7F7FFFFF)), 0x7F80); // Overflows.
  EXPECT_EQ(roundToBF16(std::numeric_limits<float>::infinity()), 0x7F80);
}

// Tests on random floats that rounding picks the nearest of the two
// neighbouring 16-bit values, and that widening is exact.
TEST(RuntimeFloatRoundingTest, RoundingPicksTheNearestValue) {
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> exponent(-26, 17);
  std::uniform_real_distribution<float> mantissa(1, 2);
  for (int i = 0; i < 100000; ++i) {
    float value = std::ldexp(mantissa(rng), int(exponent(rng)));
    if (i % 2)
      value = -value;
    for (auto [round, widen] :
         {std::pair{roundToF16, f16ToFloat}, {roundToBF16, bf16ToFloat}}) {
      uint16_t bits = round(value);
      float rounded = widen(bits);
      if (std::isinf(rounded))
        continue;
      EXPECT_EQ(round(rounded), bits); // Exact round trip.
      float below = widen(bits - 1), above = widen(bits + 1);
      double error = std::fabs(double(rounded) - value);
      if (!std::isnan(below) && (bits & 0x7FFF) != 0) {
        EXPECT_LE(error, std::fabs(double(below) - value)) << value;
      }
      if (!std::isnan(above) && !std::isinf(above)) {
        EXPECT_LE(error, std::fabs(double(above) - value)) << value;
      }
    }
  }
}

// Tests that the bulk conversions (F16C eight at a time where the CPU has
// it, then one by one) give the scalar ones' bits: every f16 widened, and
// f32 values of every kind rounded (ties, the overflow threshold,
// denormals, signed zeros, infinities, NaNs with payloads, random), from
// and to unaligned bytes, in counts that leave a tail.
TEST(RuntimeFloatRoundingTest, BulkConversionsGiveTheScalarBits) {
  std::vector<char> halves(2 * 65536 + 1);
  for (uint32_t bits = 0; bits < 65536; ++bits) {
    uint16_t half = static_cast<uint16_t>(bits);
    std::memcpy(halves.data() + 1 + 2 * bits, &half, 2);
  }
  std::vector<float> widened(65536);
  f16BytesToFloat(halves.data() + 1, widened.data(), widened.size());
  for (uint32_t bits = 0; bits < 65536; ++bits) {
    float expected = f16ToFloat(static_cast<uint16_t>(bits));
    ASSERT_EQ(std::memcmp(&widened[bits], &expected, 4), 0) << "f16 bits " << bits;
  }
  std::vector<uint32_t> specials = {0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000,
                                    0xFFC00001, 0x7F80ABCD, 0x7FBFFFFF, 0x477FEFFF, 0x477FF000,
                                    0x477FF001, 0x38800000, 0x387FFFFF, 0x33000000, 0x33000001,
                                    0x33800000, 0x00000001, 0x3F801000, 0x3F803000, 0x3F802000};
  std::mt19937 rng(5);
  std::vector<float> values;
  for (uint32_t bits : specials) {
    float value;
    std::memcpy(&value, &bits, 4);
    values.push_back(value);
  }
  for (int i = 0; i < 20000; ++i) {
    uint32_t bits = rng();
    float value;
    std::memcpy(&value, &bits, 4);
    values.push_back(i % 2 ? value : std::ldexp(float(rng() % 4096), int(rng() % 50) - 40));
  }
  // Under MXCSR's round toward zero too: the conversion must round to
  // nearest even whatever the thread's mode.
  unsigned mode = _MM_GET_ROUNDING_MODE();
  for (size_t count : {values.size(), size_t(7), size_t(13), values.size() + 1}) {
    bool towardZero = count > values.size();
    count = std::min(count, values.size());
    std::vector<char> out(2 * count + 3);
    if (towardZero)
      _MM_SET_ROUNDING_MODE(_MM_ROUND_TOWARD_ZERO);
    roundToF16Bytes(values.data(), out.data() + 3, count);
    _MM_SET_ROUNDING_MODE(mode);
    for (size_t i = 0; i < count; ++i) {
      uint16_t got;
      std::memcpy(&got, out.data() + 3 + 2 * i, 2);
      uint32_t bits;
      std::memcpy(&bits, &values[i], 4);
      ASSERT_EQ(got, roundToF16(values[i])) << "f32 bits " << std::hex << bits;
    }
  }
}

} // namespace
