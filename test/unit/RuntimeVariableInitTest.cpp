//===- RuntimeVariableInitTest.cpp - Deterministic variable initializers --===//
//
// The generator is a contract (docs/artifact.md): the golden values below
// were computed by an independent implementation of that text (Python), so
// a change to the generator fails here.
//
//===----------------------------------------------------------------------===//

#include "runtime/exec/VariableInit.h"

#include "runtime/artifact/VerifiedArtifact.h"
#include "runtime/support/FloatRounding.h"
#include "test/unit/ArtifactTestBuilder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace kiln;
using namespace kiln::artifact;
using namespace kiln::exec;
using namespace kiln::test;

namespace {

/// The bytes a variable of `dtype` and `shape` gets from its initializer.
std::vector<uint8_t>
initialize(DType dtype, std::vector<int64_t> shape, InitKind init, double a = 0,
           double b = 0, uint64_t seed = 0,
           std::optional<std::vector<uint8_t>> value = {}) {
  ArtifactSpec spec;
  uint32_t v = spec.addVariable("v", dtype, shape, init, a, b, seed);
  spec.variables[v].value = std::move(value);
  std::string error;
  auto artifact =
      VerifiedArtifact::fromFileBytes("v.kiln", spec.fileBytes(), error);
  EXPECT_NE(artifact, nullptr) << error;
  if (!artifact)
    return {};
  const Variable &variable = *artifact->root().variables()->Get(0);
  const BufferLayout &layout = artifact->buffer(variable.buffer());
  std::vector<uint8_t> bytes(layout.byteSize, 0xEE); // Poisoned.
  initializeVariable(variable,
                     *artifact->root().buffers()->Get(variable.buffer()),
                     layout.elementCount, bytes.data());
  return bytes;
}

std::vector<float> floatsOf(const std::vector<uint8_t> &bytes) {
  std::vector<float> values(bytes.size() / 4);
  std::memcpy(values.data(), bytes.data(), values.size() * 4);
  return values;
}

std::vector<uint32_t> bitsOf(const std::vector<uint8_t> &bytes, size_t n) {
  std::vector<uint32_t> bits(n);
  std::memcpy(bits.data(), bytes.data(), n * 4);
  return bits;
}

struct Moments {
  double mean, stddev, min, max;
};

Moments momentsOf(const std::vector<float> &values) {
  double sum = 0, squares = 0, min = INFINITY, max = -INFINITY;
  for (float x : values) {
    sum += x;
    squares += double(x) * x;
    min = std::min<double>(min, x);
    max = std::max<double>(max, x);
  }
  double mean = sum / values.size();
  return {mean, std::sqrt(squares / values.size() - mean * mean), min, max};
}

TEST(RuntimeVariableInitTest, SplitMix64MatchesTheReference) {
  SplitMix64 zero(0);
  EXPECT_EQ(zero.next(), 0xe220a8397b1dcdafull);
  EXPECT_EQ(zero.next(), 0x6e789e6aa1b965f4ull);
  EXPECT_EQ(zero.next(), 0x06c45d188009454full);
  SplitMix64 stream(1234567);
  for (uint64_t expected :
       {6457827717110365317ull, 3203168211198807973ull, 9817491932198370423ull,
        4593380528125082431ull, 16408922859458223821ull})
    EXPECT_EQ(stream.next(), expected);
}

TEST(RuntimeVariableInitTest, UniformsUseTheTop24Bits) {
  SplitMix64 bits(99), uniform(99);
  for (int i = 0; i < 1000; ++i) {
    uint64_t top = bits.next() >> 40;
    EXPECT_EQ(uniform.uniform(), double(top) * 0x1p-24);
  }
  SplitMix64 a(5), b(5);
  EXPECT_EQ(a.uniformNonZero(), b.uniform() + 0x1p-24);
}

TEST(RuntimeVariableInitTest, MatchesGoldenValues) {
  EXPECT_EQ(bitsOf(initialize(DType_F32, {6}, InitKind_Uniform, -1, 1, 42), 6),
            (std::vector<uint32_t>{0x3ef75cc8, 0xbf2e203a, 0xbee2b664,
                                   0xbe9f8c7c, 0xbf6c8750, 0x3f3c8862}));
  EXPECT_EQ(bitsOf(initialize(DType_F32, {6}, InitKind_Normal, 0.5, 2, 42), 6),
            (std::vector<uint32_t>{0x3faa2b0f, 0xbfa452a7, 0x407d634c,
                                   0x3fcbadc8, 0xbfd495ec, 0xc043b14b}));
  EXPECT_EQ(
      bitsOf(initialize(DType_F32, {6}, InitKind_TruncatedNormal, 0, 1, 42), 6),
      (std::vector<uint32_t>{0x3ed4561e, 0xbf6452a7, 0x3fdd634c, 0x3f0badc8,
                             0xbf8a4af6, 0xbfe3b14b}));
  EXPECT_EQ(
      bitsOf(initialize(DType_F32, {4, 3}, InitKind_GlorotUniform, 0, 0, 7), 6),
      (std::vector<uint32_t>{0xbe50e444, 0xbf650d4f, 0x3f3df7f1, 0x3e1d3e0d,
                             0xbdb45916, 0xbeed8c86}));
  EXPECT_EQ(
      bitsOf(initialize(DType_F32, {4, 3}, InitKind_GlorotNormal, 0, 0, 7), 6),
      (std::vector<uint32_t>{0x3f5457d8, 0xbe76bd1f, 0x3b332446, 0xbeb4a506,
                             0xbf853b4b, 0x3e31befe}));
}

TEST(RuntimeVariableInitTest, SameSeedSameBitsOtherSeedOtherBits) {
  for (InitKind kind :
       {InitKind_Uniform, InitKind_Normal, InitKind_TruncatedNormal,
        InitKind_GlorotUniform, InitKind_GlorotNormal}) {
    SCOPED_TRACE(EnumNameInitKind(kind));
    auto first = initialize(DType_F32, {64, 32}, kind, 0, 1, 1234);
    EXPECT_EQ(first, initialize(DType_F32, {64, 32}, kind, 0, 1, 1234));
    EXPECT_NE(first, initialize(DType_F32, {64, 32}, kind, 0, 1, 1235));
  }
}

TEST(RuntimeVariableInitTest, UniformMoments) {
  Moments m = momentsOf(
      floatsOf(initialize(DType_F32, {400000}, InitKind_Uniform, -2, 3, 11)));
  EXPECT_NEAR(m.mean, 0.5, 0.02);
  EXPECT_NEAR(m.stddev, 5 / std::sqrt(12.0), 0.01);
  EXPECT_GE(m.min, -2);
  EXPECT_LT(m.max, 3);
}

TEST(RuntimeVariableInitTest, NormalMoments) {
  Moments m = momentsOf(
      floatsOf(initialize(DType_F32, {400000}, InitKind_Normal, 1, 2, 12)));
  EXPECT_NEAR(m.mean, 1, 0.03);
  EXPECT_NEAR(m.stddev, 2, 0.02);
  EXPECT_LT(m.min, 1 - 2 * 4); // Tails beyond four stddevs exist.
}

TEST(RuntimeVariableInitTest, TruncatedNormalStaysWithinTwoStddevs) {
  Moments m = momentsOf(floatsOf(
      initialize(DType_F32, {400000}, InitKind_TruncatedNormal, 3, 0.5, 13)));
  EXPECT_NEAR(m.mean, 3, 0.01);
  // The stddev of a standard normal truncated to [-2, 2].
  EXPECT_NEAR(m.stddev, 0.5 * 0.8796256610342398, 0.005);
  EXPECT_GE(m.min, 3 - 2 * 0.5);
  EXPECT_LE(m.max, 3 + 2 * 0.5);
}

TEST(RuntimeVariableInitTest, GlorotUsesFansOfTheShape) {
  double limit = std::sqrt(6.0 / (256 + 128));
  Moments m = momentsOf(floatsOf(
      initialize(DType_F32, {256, 128}, InitKind_GlorotUniform, 0, 0, 14)));
  EXPECT_GE(m.min, -limit);
  EXPECT_LT(m.max, limit);
  EXPECT_NEAR(m.stddev, limit / std::sqrt(3.0), 0.002);
  double stddev = std::sqrt(2.0 / (256 + 128));
  m = momentsOf(floatsOf(
      initialize(DType_F32, {256, 128}, InitKind_GlorotNormal, 0, 0, 15)));
  // Keras' convention: the truncated values have stddev sqrt(2 / fans), so
  // the normal before truncation (cut at two of its stddevs) is wider.
  EXPECT_GE(m.min, -2 * stddev / 0.8796256610342398);
  EXPECT_LE(m.max, 2 * stddev / 0.8796256610342398);
  EXPECT_NEAR(m.stddev, stddev, 0.001);
}

TEST(RuntimeVariableInitTest, GlorotFans) {
  auto fans = [](std::vector<int64_t> shape) {
    Fans f = glorotFans(shape.data(), shape.size());
    return std::pair{f.in, f.out};
  };
  EXPECT_EQ(fans({}), std::pair(1.0, 1.0));
  EXPECT_EQ(fans({10}), std::pair(10.0, 10.0));
  EXPECT_EQ(fans({10, 20}), std::pair(10.0, 20.0));
  // A convolution kernel [kh, kw, in, out]: receptive field kh * kw.
  EXPECT_EQ(fans({3, 5, 16, 32}), std::pair(16.0 * 15, 32.0 * 15));
}

TEST(RuntimeVariableInitTest, HalfPrecisionRoundsTheF32Value) {
  for (InitKind kind :
       {InitKind_Uniform, InitKind_Normal, InitKind_GlorotNormal}) {
    std::vector<float> f32 =
        floatsOf(initialize(DType_F32, {3, 333}, kind, -1, 1, 21));
    std::vector<uint8_t> f16 = initialize(DType_F16, {3, 333}, kind, -1, 1, 21);
    std::vector<uint8_t> bf16 =
        initialize(DType_BF16, {3, 333}, kind, -1, 1, 21);
    ASSERT_EQ(f16.size(), f32.size() * 2);
    for (size_t i = 0; i < f32.size(); ++i) {
      uint16_t half, brain;
      std::memcpy(&half, f16.data() + 2 * i, 2);
      std::memcpy(&brain, bf16.data() + 2 * i, 2);
      ASSERT_EQ(half, roundToF16(f32[i])) << i;
      ASSERT_EQ(brain, roundToBF16(f32[i])) << i;
    }
  }
}

TEST(RuntimeVariableInitTest, ZerosOnesAndConstants) {
  EXPECT_EQ(initialize(DType_F32, {2}, InitKind_Zeros),
            std::vector<uint8_t>(8, 0));
  EXPECT_EQ(floatsOf(initialize(DType_F32, {2}, InitKind_Ones)),
            (std::vector<float>{1, 1}));
  EXPECT_EQ(initialize(DType_F16, {2}, InitKind_Ones),
            (std::vector<uint8_t>{0x00, 0x3C, 0x00, 0x3C}));
  EXPECT_EQ(initialize(DType_BF16, {1}, InitKind_Ones),
            (std::vector<uint8_t>{0x80, 0x3F}));
  EXPECT_EQ(initialize(DType_I32, {1}, InitKind_Ones),
            (std::vector<uint8_t>{1, 0, 0, 0}));
  EXPECT_EQ(initialize(DType_I64, {1}, InitKind_Ones),
            (std::vector<uint8_t>{1, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(initialize(DType_I1, {3}, InitKind_Ones),
            (std::vector<uint8_t>{1, 1, 1}));
  EXPECT_EQ(initialize(DType_I1, {3}, InitKind_Zeros),
            (std::vector<uint8_t>{0, 0, 0}));
  std::vector<uint8_t> value = {1, 2, 3, 4, 5, 6, 7, 8};
  EXPECT_EQ(initialize(DType_I32, {2}, InitKind_Constant, 0, 0, 0, value),
            value);
  // An empty variable draws nothing and writes nothing.
  EXPECT_TRUE(initialize(DType_F32, {0, 5}, InitKind_GlorotUniform).empty());
}

} // namespace
