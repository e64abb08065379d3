//===- RuntimeConvolutionTest.cpp - convolutions against a float64 loop ---===//
//
// The Convolution instruction's three kinds, on oneDNN's blocked kernels and
// on its plain ones (KILN_CONV_LAYOUT=plain), against a direct float64
// convolution of 1 to 3 spatial dimensions with groups, strides, dilations
// and padding.
//
//===----------------------------------------------------------------------===//

#include "runtime/cpu/Convolution.h"
#include "runtime/cpu/LowPrecisionGemm.h"
#include "runtime/support/FloatRounding.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstdlib>
#include <random>

using namespace kiln;

namespace {

using Shape = cpu::ConvolutionShape;
using Kind = cpu::ConvolutionKind;

int64_t count(const std::vector<int64_t> &dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

/// A convolution of `spatial` dimensions: input [N, C, D...], filter
/// [F, C / groups, K...], output [N, F, O...].
Shape makeShape(Kind kind, int64_t n, int64_t c, int64_t f, int64_t groups,
                std::vector<int64_t> size, std::vector<int64_t> window, int64_t stride,
                int64_t dilation, int64_t pad) {
  Shape s;
  s.kind = kind;
  s.groups = groups;
  s.input = {n, c};
  s.filter = {f, c / groups};
  s.output = {n, f};
  for (size_t d = 0; d < size.size(); ++d) {
    s.input.push_back(size[d]);
    s.filter.push_back(window[d]);
    int64_t span = dilation * (window[d] - 1) + 1;
    s.output.push_back((size[d] + 2 * pad - span) / stride + 1);
    s.strides.push_back(stride);
    s.dilations.push_back(dilation);
    s.padLow.push_back(pad);
    s.padHigh.push_back(pad);
  }
  return s;
}

/// Calls `visit(inputIndex, filterIndex, outputIndex)` for every
/// multiply-add of the convolution (row-major flat indices).
template <typename Visit> void forEachProduct(const Shape &s, Visit visit) {
  const size_t spatial = s.input.size() - 2;
  const int64_t perGroupIn = s.input[1] / s.groups, perGroupOut = s.output[1] / s.groups;
  std::vector<int64_t> out(spatial), win(spatial);
  const int64_t outPoints = count({s.output.begin() + 2, s.output.end()});
  const int64_t winPoints = count({s.filter.begin() + 2, s.filter.end()});
  for (int64_t b = 0; b < s.input[0]; ++b)
    for (int64_t o = 0; o < s.output[1]; ++o)
      for (int64_t op = 0; op < outPoints; ++op)
        for (int64_t ci = 0; ci < perGroupIn; ++ci)
          for (int64_t wp = 0; wp < winPoints; ++wp) {
            int64_t rest = op, wrest = wp, inFlat = 0, outFlat = 0, winFlat = 0;
            bool inside = true;
            for (size_t d = spatial; d-- > 0;) {
              int64_t od = rest % s.output[2 + d], kd = wrest % s.filter[2 + d];
              rest /= s.output[2 + d];
              wrest /= s.filter[2 + d];
              out[d] = od;
              win[d] = kd;
            }
            for (size_t d = 0; d < spatial; ++d) {
              int64_t id = out[d] * s.strides[d] - s.padLow[d] + win[d] * s.dilations[d];
              inside = inside && id >= 0 && id < s.input[2 + d];
              inFlat = inFlat * s.input[2 + d] + id;
              outFlat = outFlat * s.output[2 + d] + out[d];
              winFlat = winFlat * s.filter[2 + d] + win[d];
            }
            if (!inside)
              continue;
            int64_t c = (o / perGroupOut) * perGroupIn + ci;
            visit((b * s.input[1] + c) * count({s.input.begin() + 2, s.input.end()}) + inFlat,
                  (o * perGroupIn + ci) * winPoints + winFlat,
                  (b * s.output[1] + o) * outPoints + outFlat);
          }
}

struct Buffers {
  std::vector<float> input, filter, output;
};

/// Runs `shape` through cpu::Convolution on random operands and checks the
/// buffer it writes against the float64 loop, to a few ulps of the sum of
/// magnitudes of each result. A bf16 convolution is checked against the
/// loop over its two read buffers rounded to bf16 (the products summed in
/// f32): the unrounded operands' result is farther off than that.
void expectMatchesReference(const Shape &shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(-1, 1);
  Buffers buffers{std::vector<float>(count(shape.input)), std::vector<float>(count(shape.filter)),
                  std::vector<float>(count(shape.output))};
  for (std::vector<float> *v : {&buffers.input, &buffers.filter, &buffers.output})
    for (float &x : *v)
      x = value(rng);
  std::vector<float> *written = shape.kind == Kind::Forward        ? &buffers.output
                                : shape.kind == Kind::BackwardData ? &buffers.input
                                                                   : &buffers.filter;
  std::fill(written->begin(), written->end(), 7.0f); // must be overwritten
  std::string error;
  auto conv = cpu::Convolution::create(shape, buffers.input.data(), buffers.filter.data(),
                                       buffers.output.data(), error);
  ASSERT_TRUE(conv) << error;
  ASSERT_TRUE(conv->run(error)) << error;
  if (shape.bf16 && conv->bf16())
    for (std::vector<float> *read : {&buffers.input, &buffers.filter, &buffers.output})
      if (read != written)
        for (float &x : *read)
          x = bf16ToFloat(roundToBF16(x));

  std::vector<double> sum(written->size()), magnitude(written->size());
  forEachProduct(shape, [&](int64_t in, int64_t w, int64_t out) {
    double x = buffers.input[in], f = buffers.filter[w], y = buffers.output[out];
    switch (shape.kind) {
    case Kind::Forward:
      sum[out] += x * f, magnitude[out] += std::fabs(x * f);
      break;
    case Kind::BackwardData:
      sum[in] += y * f, magnitude[in] += std::fabs(y * f);
      break;
    case Kind::BackwardFilter:
      sum[w] += y * x, magnitude[w] += std::fabs(y * x);
      break;
    }
  });
  for (size_t i = 0; i < written->size(); ++i)
    ASSERT_NEAR((*written)[i], sum[i], 1e-5 * magnitude[i] + 1e-6)
        << "element " << i << " of " << written->size();
}

/// The shapes: an image's first layer (one channel), a 3x3 layer, strides
/// with padding, dilation, groups, depthwise, 1-D and 3-D.
std::vector<Shape> shapesOf(Kind kind) {
  return {makeShape(kind, 4, 1, 16, 1, {12, 12}, {3, 3}, 1, 1, 1),
          makeShape(kind, 2, 32, 64, 1, {9, 9}, {3, 3}, 1, 1, 1),
          makeShape(kind, 2, 16, 16, 1, {11, 11}, {3, 3}, 2, 1, 1),
          makeShape(kind, 2, 16, 32, 1, {10, 10}, {3, 3}, 1, 2, 2),
          makeShape(kind, 2, 32, 32, 2, {8, 8}, {3, 3}, 1, 1, 1),
          makeShape(kind, 2, 32, 32, 32, {8, 8}, {3, 3}, 1, 1, 1),
          makeShape(kind, 3, 16, 24, 1, {20}, {5}, 1, 1, 2),
          makeShape(kind, 2, 16, 16, 1, {5, 6, 4}, {3, 3, 3}, 1, 1, 1)};
}

class ConvolutionLayouts : public ::testing::TestWithParam<const char *> {
protected:
  void SetUp() override { setenv("KILN_CONV_LAYOUT", GetParam(), 1); }
  void TearDown() override { unsetenv("KILN_CONV_LAYOUT"); }
};

TEST_P(ConvolutionLayouts, EveryKindMatchesTheReference) {
  uint32_t seed = 1;
  for (Kind kind : {Kind::Forward, Kind::BackwardData, Kind::BackwardFilter})
    for (const Shape &shape : shapesOf(kind)) {
      SCOPED_TRACE("kind " + std::to_string(int(kind)) + ", input channels " +
                   std::to_string(shape.input[1]) + ", groups " + std::to_string(shape.groups) +
                   ", spatial dims " + std::to_string(shape.input.size() - 2));
      expectMatchesReference(shape, seed++);
    }
}

INSTANTIATE_TEST_SUITE_P(BlockedAndPlain, ConvolutionLayouts,
                         ::testing::Values("blocked", "plain"));

// Tests bf16 convolutions (kilnc --precision=bf16), with the layouts each
// shape prefers ("default") and forced (KILN_CONV_LAYOUT): on a CPU with
// bf16 instructions every kind of every shape on oneDNN's blocked kernels
// runs in bf16 and equals the float64 loop over the rounded inputs (by
// default the data gradients of few channels, on the plain kernel, run in
// f32; forced plain, every shape does); elsewhere each runs in f32 and
// matches the unrounded one.
class ConvolutionBF16 : public ::testing::TestWithParam<const char *> {
protected:
  void SetUp() override {
    if (std::string(GetParam()) == "default")
      unsetenv("KILN_CONV_LAYOUT");
    else
      setenv("KILN_CONV_LAYOUT", GetParam(), 1);
  }
  void TearDown() override { unsetenv("KILN_CONV_LAYOUT"); }
};

TEST_P(ConvolutionBF16, EveryKindMatchesTheRoundedReference) {
  bool native =
      cpu::hasNativeGemm(cpu::GemmPrecision::BF16) && cpu::nativeLowPrecisionAllowed();
  uint32_t seed = 100;
  int inBF16 = 0, blocked = 0, shapes = 0;
  for (Kind kind : {Kind::Forward, Kind::BackwardData, Kind::BackwardFilter})
    for (Shape shape : shapesOf(kind)) {
      shape.bf16 = true;
      SCOPED_TRACE("kind " + std::to_string(int(kind)) + ", input channels " +
                   std::to_string(shape.input[1]) + ", groups " + std::to_string(shape.groups) +
                   ", spatial dims " + std::to_string(shape.input.size() - 2));
      std::vector<float> input(count(shape.input)), filter(count(shape.filter)),
          output(count(shape.output));
      std::string error;
      auto conv = cpu::Convolution::create(shape, input.data(), filter.data(), output.data(),
                                           error);
      ASSERT_TRUE(conv) << error;
      inBF16 += conv->bf16();
      blocked += cpu::prefersBlockedLayouts(shape);
      ++shapes;
      expectMatchesReference(shape, seed++);
    }
  // By default the two data gradients of one input channel a group (the
  // first layer's, the depthwise one's) take the plain kernel.
  std::string layout = GetParam();
  EXPECT_EQ(blocked, layout == "plain" ? 0 : layout == "blocked" ? shapes : shapes - 2);
  EXPECT_EQ(inBF16, native ? blocked : 0)
      << (native ? "the runtime takes this CPU's bf16 instructions"
                 : "no bf16 instructions (or slower than f32, or turned off)");
}

INSTANTIATE_TEST_SUITE_P(Layouts, ConvolutionBF16,
                         ::testing::Values("default", "blocked", "plain"));

TEST(ConvolutionLayoutChoice, FewChannelDataGradientsStayPlain) {
  unsetenv("KILN_CONV_LAYOUT");
  EXPECT_TRUE(cpu::prefersBlockedLayouts(makeShape(Kind::Forward, 32, 1, 32, 1, {28, 28},
                                                   {3, 3}, 1, 1, 1)));
  EXPECT_TRUE(cpu::prefersBlockedLayouts(makeShape(Kind::BackwardFilter, 32, 1, 32, 1,
                                                   {28, 28}, {3, 3}, 1, 1, 1)));
  EXPECT_FALSE(cpu::prefersBlockedLayouts(makeShape(Kind::BackwardData, 32, 3, 64, 1,
                                                    {32, 32}, {3, 3}, 1, 1, 1)));
  EXPECT_TRUE(cpu::prefersBlockedLayouts(makeShape(Kind::BackwardData, 32, 32, 64, 1,
                                                   {14, 14}, {3, 3}, 1, 1, 1)));
  // Per group: 32 channels in 4 groups are 8 a group.
  EXPECT_FALSE(cpu::prefersBlockedLayouts(makeShape(Kind::BackwardData, 2, 32, 32, 4, {8, 8},
                                                    {3, 3}, 1, 1, 1)));
  setenv("KILN_CONV_LAYOUT", "plain", 1);
  EXPECT_FALSE(cpu::prefersBlockedLayouts(makeShape(Kind::Forward, 32, 32, 64, 1, {14, 14},
                                                    {3, 3}, 1, 1, 1)));
  unsetenv("KILN_CONV_LAYOUT");
}

/// A filter gradient's bits do not depend on the threads OpenMP offers when
/// the primitive is made: oneDNN plans for the threads it will run with.
TEST(ConvolutionThreads, FilterGradientBitsIgnoreTheCallersThreads) {
  unsetenv("KILN_CONV_LAYOUT");
  Shape shape = makeShape(Kind::BackwardFilter, 4, 16, 16, 1, {12, 12}, {3, 3}, 1, 1, 1);
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> value(-1, 1);
  std::vector<float> input(count(shape.input)), output(count(shape.output));
  for (float &x : input)
    x = value(rng);
  for (float &x : output)
    x = value(rng);
  std::vector<std::vector<float>> filters;
  int caller = omp_get_max_threads();
  for (int threads : {1, 2, 4}) {
    omp_set_num_threads(threads);
    std::vector<float> filter(count(shape.filter));
    std::string error;
    auto conv = cpu::Convolution::create(shape, input.data(), filter.data(), output.data(), error);
    ASSERT_TRUE(conv) << error;
    EXPECT_EQ(omp_get_max_threads(), threads) << "create gives the caller's threads back";
    ASSERT_TRUE(conv->run(error)) << error;
    filters.push_back(filter);
  }
  omp_set_num_threads(caller);
  EXPECT_EQ(filters[0], filters[1]);
  EXPECT_EQ(filters[0], filters[2]);
}

} // namespace
