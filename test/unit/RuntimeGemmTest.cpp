//===- RuntimeGemmTest.cpp - GEMM against a float64 reference -------------===//

#include "runtime/cpu/CpuFeatures.h"
#include "runtime/cpu/Gemm.h"
#include "runtime/cpu/ThreadChoice.h"
#include "runtime/cpu/LowPrecisionGemm.h"
#include "runtime/cpu/Threads.h"

#include "runtime/exec/Session.h"
#include "runtime/support/FloatRounding.h"
#include "test/unit/ArtifactTestBuilder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>

using namespace kiln;
using namespace kiln::test;

namespace {

/// Whether this CPU multiplies bf16 with AMX (oneDNN's kernels there fault
/// on an inner dimension of 63: such products are emulated).
bool hasAmx() { return cpu::hostHasCpuFeature("amx-bf16").value_or(false); }

struct Operands {
  std::vector<float> a, b;
};

Operands randomOperands(const cpu::GemmShape &shape, std::mt19937 &rng) {
  std::uniform_real_distribution<float> value(-1, 1);
  Operands operands;
  operands.a.resize(shape.batch * shape.m * shape.k);
  operands.b.resize((shape.sharedB ? 1 : shape.batch) * shape.k * shape.n);
  for (float &x : operands.a)
    x = value(rng);
  for (float &x : operands.b)
    x = value(rng);
  return operands;
}

/// `operands` rounded to the 16-bit type of `precision` (ties to even), as
/// f32: the values a bf16 or f16 product multiplies.
Operands roundedTo(cpu::GemmPrecision precision, Operands operands) {
  for (std::vector<float> *values : {&operands.a, &operands.b})
    for (float &x : *values)
      x = precision == cpu::GemmPrecision::BF16 ? bf16ToFloat(roundToBF16(x))
                                                : f16ToFloat(roundToF16(x));
  return operands;
}

/// Checks `c` against a float64 product, element by element, allowing the
/// rounding error of an f32 dot product of length k: a few ulps of the sum
/// of magnitudes.
void expectProduct(const cpu::GemmShape &shape, const Operands &operands,
                   const std::vector<float> &c) {
  const int64_t m = shape.m, n = shape.n, k = shape.k;
  for (int64_t p = 0; p < shape.batch; ++p) {
    const float *a = operands.a.data() + p * m * k;
    const float *b = operands.b.data() + (shape.sharedB ? 0 : p * k * n);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0, magnitude = 0;
        for (int64_t l = 0; l < k; ++l) {
          double x = shape.transposeA ? a[l * m + i] : a[i * k + l];
          double y = shape.transposeB ? b[j * k + l] : b[l * n + j];
          sum += x * y;
          magnitude += std::fabs(x * y);
        }
        float got = c[(p * m + i) * n + j];
        ASSERT_NEAR(got, sum, 4 * k * 0x1p-24 * magnitude + 1e-30)
            << "batch " << p << " row " << i << " column " << j;
      }
  }
}

std::string describe(const cpu::GemmShape &shape) {
  return "batch " + std::to_string(shape.batch) + " m " +
         std::to_string(shape.m) + " n " + std::to_string(shape.n) + " k " +
         std::to_string(shape.k) + (shape.transposeA ? " A^T" : "") +
         (shape.transposeB ? " B^T" : "") + (shape.sharedB ? " shared B" : "");
}

/// A shape of random sizes (1 to `maxSize`, batches 1 to `maxBatch`) with
/// the flags of `trial`'s three low bits.
cpu::GemmShape randomShape(std::mt19937 &rng, int64_t maxSize, int64_t maxBatch, int trial) {
  std::uniform_int_distribution<int64_t> size(1, maxSize), batches(1, maxBatch);
  cpu::GemmShape shape;
  shape.batch = batches(rng);
  shape.m = size(rng);
  shape.n = size(rng);
  shape.k = size(rng);
  shape.transposeA = trial & 1;
  shape.transposeB = trial & 2;
  shape.sharedB = trial & 4;
  return shape;
}

// Tests random shapes with every combination of the flags; outputs are
// poisoned (NaN) first so an element left unwritten fails.
TEST(RuntimeGemmTest, MatchesAFloat64ReferenceOnRandomShapes) {
  std::mt19937 rng(std::random_device{}());
  for (int trial = 0; trial < 64; ++trial) {
    cpu::GemmShape shape = randomShape(rng, 70, 4, trial);
    SCOPED_TRACE(describe(shape));
    Operands operands = randomOperands(shape, rng);
    std::vector<float> c(shape.batch * shape.m * shape.n, NAN);
    std::string error;
    ASSERT_TRUE(
        cpu::gemm(shape, operands.a.data(), operands.b.data(), c.data(), error))
        << error;
    expectProduct(shape, operands, c);
  }
}

// Tests bf16 and f16 products (natively where the CPU has bf16
// instructions, and emulated) on random shapes with every combination of
// the flags: each equals the float64 product of the inputs rounded to the
// 16-bit type, within an f32 sum's error. The unrounded inputs' product is
// farther off than that (2^-9 relative for bf16), so a product that skipped
// the rounding fails.
TEST(RuntimeGemmTest, LowPrecisionMultipliesTheRoundedInputs) {
  std::mt19937 rng(std::random_device{}());
  for (cpu::GemmPrecision precision : {cpu::GemmPrecision::BF16, cpu::GemmPrecision::F16})
    for (bool allowNative : {true, false})
      for (int trial = 0; trial < 24; ++trial) {
        cpu::GemmShape shape = randomShape(rng, 70, 4, trial);
        shape.k += 8; // Long enough for rounding to show.
        shape.precision = precision;
        SCOPED_TRACE(describe(shape) + (precision == cpu::GemmPrecision::BF16 ? " bf16" : " f16") +
                     (allowNative ? "" : " emulated"));
        Operands operands = randomOperands(shape, rng);
        std::vector<float> c(shape.batch * shape.m * shape.n, NAN);
        std::string error;
        auto product = cpu::LowPrecisionGemm::create(shape, operands.a.data(),
                                                     operands.b.data(), c.data(),
                                                     allowNative, nullptr, error);
        ASSERT_NE(product, nullptr) << error;
        // An inner dimension of 63 is emulated where oneDNN's AMX kernel
        // would fault (LowPrecisionWithSixtyThreeInnerRuns).
        EXPECT_EQ(product->native(), allowNative && cpu::hasNativeGemm(precision) &&
                                         !(shape.k == 63 && hasAmx()));
        ASSERT_TRUE(product->run(error)) << error;
        expectProduct(shape, roundedTo(precision, operands), c);
        if (precision == cpu::GemmPrecision::BF16 && trial == 0) {
          std::vector<float> exact(c.size());
          ASSERT_TRUE(cpu::gemm(shape, operands.a.data(), operands.b.data(), exact.data(),
                                error));
          EXPECT_NE(exact, c) << "the bf16 product equals the f32 one";
        }
      }
}

// Tests bf16 products whose inner dimension is 63, on which oneDNN 2.6's
// AMX kernels fault (SIGILL: emulated on a CPU with AMX, native on one with
// AVX512_BF16 only), on the shapes that faulted (shared B folded into rows
// too): they run and multiply the rounded inputs, on one thread and split.
TEST(RuntimeGemmTest, LowPrecisionWithSixtyThreeInnerRuns) {
  std::mt19937 rng(3);
  for (cpu::GemmShape shape : {cpu::GemmShape{1, 65, 33, 63}, cpu::GemmShape{1, 129, 17, 63},
                               cpu::GemmShape{2, 65, 33, 63, false, true},
                               cpu::GemmShape{3, 80, 63, 63, true, false},
                               cpu::GemmShape{2, 65, 33, 63, false, false, true}}) {
    shape.precision = cpu::GemmPrecision::BF16;
    SCOPED_TRACE(describe(shape));
    Operands operands = randomOperands(shape, rng);
    for (int threads : {1, 2}) {
      std::vector<float> c(shape.batch * shape.m * shape.n, NAN);
      std::string error;
      auto product = cpu::LowPrecisionGemm::create(shape, operands.a.data(), operands.b.data(),
                                                   c.data(), true, nullptr, error);
      ASSERT_NE(product, nullptr) << error;
      EXPECT_EQ(product->native(), cpu::hasNativeGemm(shape.precision) && !hasAmx());
      ASSERT_TRUE(product->run(error, threads)) << error;
      expectProduct(shape, roundedTo(shape.precision, operands), c);
    }
  }
}

// Tests a bf16 or f16 product given its inputs already rounded (a kernel
// wrote them in the 16-bit type: the artifact's A and B buffers are bf16),
// natively and emulated: the same bits as the product that rounds its f32
// inputs itself.
TEST(RuntimeGemmTest, LowPrecisionTakesInputsRoundedByKernels) {
  std::mt19937 rng(std::random_device{}());
  for (cpu::GemmPrecision precision : {cpu::GemmPrecision::BF16, cpu::GemmPrecision::F16})
    for (bool allowNative : {true, false})
      for (int trial = 0; trial < 12; ++trial) {
        cpu::GemmShape shape = randomShape(rng, 70, 4, trial);
        shape.k += 8;
        shape.precision = precision;
        SCOPED_TRACE(describe(shape) + (precision == cpu::GemmPrecision::BF16 ? " bf16" : " f16") +
                     (allowNative ? "" : " emulated"));
        Operands operands = randomOperands(shape, rng);
        auto sixteenBits = [&](const std::vector<float> &values) {
          std::vector<uint16_t> bits;
          for (float x : values)
            bits.push_back(precision == cpu::GemmPrecision::BF16 ? roundToBF16(x)
                                                                 : roundToF16(x));
          return bits;
        };
        std::vector<uint16_t> a16 = sixteenBits(operands.a), b16 = sixteenBits(operands.b);
        std::vector<float> converted(shape.batch * shape.m * shape.n, NAN);
        std::vector<float> given(converted.size(), NAN);
        std::string error;
        auto converting = cpu::LowPrecisionGemm::create(shape, operands.a.data(),
                                                        operands.b.data(), converted.data(),
                                                        allowNative, nullptr, error);
        ASSERT_NE(converting, nullptr) << error;
        auto taking = cpu::LowPrecisionGemm::create(
            shape, nullptr, nullptr, given.data(), allowNative, nullptr, error,
            {a16.data(), false, /*isInput=*/true}, {b16.data(), false, /*isInput=*/true});
        ASSERT_NE(taking, nullptr) << error;
        EXPECT_EQ(taking->native(), converting->native());
        ASSERT_TRUE(converting->run(error)) << error;
        ASSERT_TRUE(taking->run(error)) << error;
        EXPECT_EQ(given, converted);
        // Run again: nothing of the first run is kept (the emulated widening
        // fills the scratch every run).
        std::fill(given.begin(), given.end(), NAN);
        ASSERT_TRUE(taking->run(error)) << error;
        EXPECT_EQ(given, converted);
      }
}

// Tests the measured choice of one or all threads for a product: warm-up
// runs on all threads and not counted, then alternating trials; all threads
// kept only when their fastest run beats one thread's by 10%; one thread
// always when the session has one, or when the product cannot be split
// without changing its sums (3 rows, one product).
TEST(RuntimeGemmTest, ChoosesThreadsByMeasuring) {
  cpu::GemmShape rows;
  rows.m = 64;
  rows.n = rows.k = 32;
  auto choose = [](const cpu::GemmShape &shape, double oneThread, double allThreads) {
    cpu::ThreadChoice choice;
    std::vector<int> asked;
    while (!choice.chosen() && asked.size() <= 64) {
      int threads = choice.next(4, cpu::canSplitGemm(shape, 4));
      asked.push_back(threads);
      // A warm-up run is slow whatever the threads: it must not count.
      double seconds = asked.size() <= cpu::ThreadChoice::kWarmup
                           ? 1.0
                           : (threads == 1 ? oneThread : allThreads);
      choice.record(threads, 4, seconds);
    }
    EXPECT_EQ(asked.size(), size_t(cpu::ThreadChoice::kWarmup +
                                   cpu::ThreadChoice::kFirstTrials));
    EXPECT_EQ(asked[0], 4);
    return std::make_pair(choice.next(4, true),
                          std::count(asked.begin(), asked.end(), 4));
  };
  EXPECT_EQ(choose(rows, 1e-3, 0.5e-3),
            std::make_pair(4, long(cpu::ThreadChoice::kWarmup +
                                   cpu::ThreadChoice::kFirstTrials / 2)));
  EXPECT_EQ(choose(rows, 1e-3, 0.95e-3).first, 1); // Not 10% faster: not worth the workers.
  EXPECT_EQ(choose(rows, 1e-3, 2e-3).first, 1);
  cpu::GemmShape thin = rows;
  thin.m = 3;
  cpu::ThreadChoice thinChoice; // Cannot be split: settled on one thread at once.
  EXPECT_EQ(thinChoice.next(4, cpu::canSplitGemm(thin, 4)), 1);
  EXPECT_EQ(thinChoice.chosen(), 1);
  EXPECT_FALSE(thinChoice.measuring());
  cpu::ThreadChoice single; // A session of one thread has nothing to measure.
  EXPECT_EQ(single.next(1, true), 1);
  EXPECT_EQ(single.chosen(), 1);
  single.record(1, 1, 1e-3);
  EXPECT_EQ(single.next(4, true), 1);
}

// Tests that the choice is measured again in later windows: a first window
// of 6 runs (2-7) where all threads were slow (a busy neighbour) chooses
// one; between windows nothing is timed and the choice holds; the window of
// 10 runs starting at run 32 (kRetrialFactor times the 8 runs to the end of
// the first) finds all threads faster and takes them; the next starts at
// 168.
TEST(RuntimeGemmTest, MeasuresTheChoiceAgainLater) {
  cpu::ThreadChoice choice;
  std::vector<long> trials;
  auto run = [&](long index, double oneThread, double allThreads) {
    int threads = choice.next(4, true);
    if (!choice.measuring())
      return threads;
    trials.push_back(index);
    choice.record(threads, 4, threads == 1 ? oneThread : allThreads);
    return threads;
  };
  for (long i = 0; i < 8; ++i)
    run(i, 1e-3, 2e-3);
  EXPECT_EQ(choice.chosen(), 1);
  for (long i = 8; i < 32; ++i)
    EXPECT_EQ(run(i, 1e-3, 0.5e-3), 1) << "run " << i;
  EXPECT_EQ(choice.chosen(), 1);
  for (long i = 32; i < 42; ++i)
    run(i, 1e-3, 0.5e-3);
  EXPECT_EQ(choice.chosen(), 4);
  for (long i = 42; i < 168; ++i)
    EXPECT_EQ(run(i, 1e-3, 0.5e-3), 4) << "run " << i;
  ASSERT_EQ(trials.size(),
            size_t(cpu::ThreadChoice::kFirstTrials + cpu::ThreadChoice::kTrials));
  EXPECT_EQ(trials.front(), cpu::ThreadChoice::kWarmup);
  EXPECT_EQ(trials[cpu::ThreadChoice::kFirstTrials], 32);
  EXPECT_EQ(trials.back(), 41);
  run(168, 1e-3, 0.5e-3);
  EXPECT_EQ(trials.back(), 168);
}

// Tests that the steps of a program take their windows in turn: the step at
// position p (of a program's measured steps) has its first window at run
// 2 + (p mod 4) * 6, runs on all threads before it, and keeps its choice
// after it while the later groups measure; positions 0 and 4 share a group.
TEST(RuntimeGemmTest, NeighbouringStepsTakeTheirWindowsInTurn) {
  const int groups = cpu::ThreadChoice::kGroups, trials = cpu::ThreadChoice::kFirstTrials;
  std::vector<cpu::ThreadChoice> steps(groups + 1);
  for (int p = 0; p <= groups; ++p)
    steps[p].stagger(p);
  std::vector<std::vector<long>> measured(steps.size());
  for (long run = 0; run < cpu::ThreadChoice::kFirstWindowsEnd; ++run)
    for (size_t p = 0; p < steps.size(); ++p) {
      int threads = steps[p].next(4, true);
      if (!steps[p].measuring()) {
        // Before its window: all threads; after: its choice (one here).
        EXPECT_EQ(threads, steps[p].chosen() ? 1 : 4) << "position " << p << ", run " << run;
        continue;
      }
      measured[p].push_back(run);
      steps[p].record(threads, 4, threads == 1 ? 1e-3 : 2e-3);
    }
  for (size_t p = 0; p < steps.size(); ++p) {
    long first = cpu::ThreadChoice::kWarmup + long(p % groups) * trials;
    ASSERT_EQ(measured[p].size(), size_t(trials)) << "position " << p;
    EXPECT_EQ(measured[p].front(), first) << "position " << p;
    EXPECT_EQ(measured[p].back(), first + trials - 1) << "position " << p;
    EXPECT_EQ(steps[p].chosen(), 1) << "position " << p;
  }
}

// Tests that neighbouring measured steps are in different groups, the last
// and the first of a program too (it runs again after its last step), for
// programs of 2 to 13 measured steps; steps before the last keep p mod 4.
TEST(RuntimeGemmTest, TheLastStepIsNotInTheFirstStepsGroup) {
  for (size_t count = 2; count <= 13; ++count)
    for (size_t p = 0; p < count; ++p) {
      int group = cpu::ThreadChoice::groupOf(p, count);
      EXPECT_NE(group, cpu::ThreadChoice::groupOf((p + 1) % count, count))
          << "position " << p << " of " << count;
      EXPECT_GE(group, 0);
      EXPECT_LT(group, cpu::ThreadChoice::kGroups);
      if (p + 1 < count) {
        EXPECT_EQ(group, int(p % cpu::ThreadChoice::kGroups)) << "position " << p;
      }
    }
}

// Tests that a product split over threads (by rows, or by products of a
// batch) gives the same bits as on one thread, on random shapes with every
// combination of the flags.
TEST(RuntimeGemmTest, SplitProductsKeepTheirBits) {
  std::mt19937 rng(std::random_device{}());
  int split = 0;
  for (int trial = 0; trial < 48; ++trial) {
    cpu::GemmShape shape = randomShape(rng, 300, 6, trial);
    SCOPED_TRACE(describe(shape));
    Operands operands = randomOperands(shape, rng);
    std::vector<float> one(shape.batch * shape.m * shape.n, NAN), two(one.size(), NAN);
    std::string error;
    ASSERT_TRUE(cpu::gemm(shape, operands.a.data(), operands.b.data(), one.data(), error, 1));
    ASSERT_TRUE(cpu::gemm(shape, operands.a.data(), operands.b.data(), two.data(), error, 2));
    split += cpu::canSplitGemm(shape, 2);
    ASSERT_EQ(std::memcmp(one.data(), two.data(), one.size() * 4), 0);
    expectProduct(shape, operands, two);
  }
  EXPECT_GT(split, 24);
}

// Tests that a native bf16 product kiln computes in parts (one matmul per
// block of rows or of the batch) gives the same bits run on one thread and
// on the session's, including products long enough in k (512) for oneDNN to
// block a whole product differently from its halves.
TEST(RuntimeGemmTest, SplitNativeProductsKeepTheirBits) {
  // Native wherever the CPU has bf16 products (allowNative below), even
  // where the runtime would emulate them as the faster.
  if (!cpu::hasNativeGemm(cpu::GemmPrecision::BF16))
    GTEST_SKIP() << "this CPU has neither AVX512_BF16 nor AMX-BF16";
  int threads = cpu::availableThreads();
  if (threads < 2)
    GTEST_SKIP() << "one thread: no product is split";
  std::mt19937 rng(std::random_device{}());
  int split = 0;
  for (int trial = 0; trial < 24; ++trial) {
    cpu::GemmShape shape = randomShape(rng, 300, 6, trial);
    if (trial % 3 == 0)
      shape.k = 512;
    // On AMX kiln emulates k = 63, where oneDNN's bf16 kernel faults
    // (LowPrecisionGemm.cpp, amxFaultsOn): such a product is not native.
    if (shape.k == 63)
      shape.k = 64;
    shape.precision = cpu::GemmPrecision::BF16;
    SCOPED_TRACE(describe(shape));
    Operands operands = randomOperands(shape, rng);
    std::vector<float> one(shape.batch * shape.m * shape.n, NAN), all(one.size(), NAN);
    std::string error;
    auto first = cpu::LowPrecisionGemm::create(shape, operands.a.data(), operands.b.data(),
                                               one.data(), true, nullptr, error);
    auto second = cpu::LowPrecisionGemm::create(shape, operands.a.data(), operands.b.data(),
                                                all.data(), true, nullptr, error);
    ASSERT_TRUE(first && second) << error;
    ASSERT_TRUE(first->native());
    EXPECT_EQ(first->splits(), cpu::canSplitGemm(shape, threads));
    split += first->splits();
    ASSERT_TRUE(first->run(error, 1)) << error;
    ASSERT_TRUE(second->run(error, threads)) << error;
    ASSERT_EQ(std::memcmp(one.data(), all.data(), one.size() * 4), 0);
    expectProduct(shape, roundedTo(cpu::GemmPrecision::BF16, operands), all);
  }
  EXPECT_GT(split, 8);
}

/// A row entry for the epilogue tests: rows [begin, end) of the kernel,
/// kEpilogueRowsPerKernelRow product rows of kEpilogueWidth values each,
/// become 2 c + 1 (its args: C, then the range's two bounds).
int64_t kEpilogueRowsPerKernelRow = 1, kEpilogueWidth = 0;
void twiceAndOneRows(void **args) {
  auto *c = static_cast<float *>(args[0]);
  int64_t begin = *static_cast<int64_t *>(args[1]), end = *static_cast<int64_t *>(args[2]);
  int64_t per = kEpilogueRowsPerKernelRow * kEpilogueWidth;
  for (int64_t i = begin * per; i < end * per; ++i)
    c[i] = 2 * c[i] + 1;
}

// Tests a bf16 product with its epilogue (LowPrecisionGemm::setEpilogue):
// every row of C exactly once through the kernel, after the product, on
// one thread and on the session's, natively (by the product's parts, or
// after the whole product where a part is not whole kernel rows) and
// emulated: the same bits as the product and then the kernel.
TEST(RuntimeGemmTest, LowPrecisionEpilogueRunsOnceOnEveryRow) {
  std::mt19937 rng(std::random_device{}());
  int threads = cpu::availableThreads();
  for (bool allowNative : {true, false})
    for (int64_t perRow : {1, 96}) {
      cpu::GemmShape shape;
      shape.m = 288; // Two parts of 144 rows: not whole kernel rows of 96.
      shape.n = 64;
      shape.k = 128;
      shape.precision = cpu::GemmPrecision::BF16;
      SCOPED_TRACE(std::string(allowNative ? "native" : "emulated") + ", kernel rows of " +
                   std::to_string(perRow));
      Operands operands = randomOperands(shape, rng);
      std::string error;
      std::vector<float> expected(shape.m * shape.n, NAN);
      auto plain = cpu::LowPrecisionGemm::create(shape, operands.a.data(), operands.b.data(),
                                                 expected.data(), allowNative, nullptr, error);
      ASSERT_NE(plain, nullptr) << error;
      ASSERT_TRUE(plain->run(error, 1)) << error;
      for (float &value : expected)
        value = 2 * value + 1;
      for (int run : {1, threads}) {
        std::vector<float> c(expected.size(), NAN);
        void *args[] = {c.data()};
        auto product = cpu::LowPrecisionGemm::create(shape, operands.a.data(),
                                                     operands.b.data(), c.data(), allowNative,
                                                     nullptr, error);
        ASSERT_NE(product, nullptr) << error;
        if (product->native() && threads > 1) {
          EXPECT_TRUE(product->splits()) << "a product too small to be computed in parts";
        }
        product->setEpilogue({&twiceAndOneRows, args, 1, perRow});
        kEpilogueRowsPerKernelRow = perRow;
        kEpilogueWidth = shape.n;
        ASSERT_TRUE(product->run(error, run)) << error;
        EXPECT_EQ(std::memcmp(c.data(), expected.data(), c.size() * 4), 0)
            << "on " << run << " threads";
      }
    }
}

// Tests the degenerate sizes: vectors and single elements.
TEST(RuntimeGemmTest, HandlesOneByOneAndVectorShapes) {
  std::mt19937 rng(std::random_device{}());
  for (auto [m, n, k] :
       {std::tuple{1, 1, 1}, {1, 17, 1}, {17, 1, 1}, {1, 1, 33}, {5, 1, 9}}) {
    cpu::GemmShape shape;
    shape.m = m;
    shape.n = n;
    shape.k = k;
    SCOPED_TRACE(describe(shape));
    Operands operands = randomOperands(shape, rng);
    std::vector<float> c(m * n, NAN);
    std::string error;
    ASSERT_TRUE(cpu::gemm(shape, operands.a.data(), operands.b.data(), c.data(),
                          error));
    expectProduct(shape, operands, c);
  }
}

// Tests the products computed as their transpose (C^T = B A^T: few rows
// times a large B^T): the float64 product, the same bits on one and two
// threads and by blocks of at least 16 rows (gemmRows, as BlockedGemm's
// threads compute them; 16 rows is one block, the smallest taken); and that
// the shapes the rule leaves alone stay so (a small B, 128 rows, a batch of
// its own Bs, fewer than 16 rows).
TEST(RuntimeGemmTest, FewRowsTimesALargeTransposedBAreComputedAsTheTranspose) {
  std::mt19937 rng(std::random_device{}());
  auto shapeOf = [](int64_t batch, int64_t m, int64_t n, int64_t k, bool sharedB) {
    cpu::GemmShape shape;
    shape.batch = batch;
    shape.m = m;
    shape.n = n;
    shape.k = k;
    shape.transposeB = true;
    shape.sharedB = sharedB;
    return shape;
  };
  for (cpu::GemmShape shape : {shapeOf(1, 16, 512, 512, false), shapeOf(1, 32, 128, 3136, false),
                               shapeOf(1, 33, 3136, 128, false), shapeOf(1, 96, 512, 600, false),
                               shapeOf(3, 20, 256, 1024, true)}) {
    SCOPED_TRACE(describe(shape));
    ASSERT_TRUE(cpu::computesTransposedProduct(shape));
    Operands operands = randomOperands(shape, rng);
    int64_t rows = shape.batch * shape.m;
    std::vector<float> one(rows * shape.n, NAN), two(one.size(), NAN), blocks(one.size(), NAN);
    std::string error;
    ASSERT_TRUE(cpu::gemm(shape, operands.a.data(), operands.b.data(), one.data(), error, 1));
    ASSERT_TRUE(cpu::gemm(shape, operands.a.data(), operands.b.data(), two.data(), error, 2));
    cpu::GemmShape folded = shape;
    folded.batch = 1;
    folded.m = rows;
    folded.sharedB = false;
    for (int64_t begin = 0; begin < rows;) {
      int64_t end = rows - begin < 2 * cpu::kGemmRowsPerThread ? rows : begin + 16 + begin % 3;
      ASSERT_TRUE(cpu::gemmRows(folded, operands.a.data(), operands.b.data(),
                                blocks.data() + begin * shape.n, begin, end, error))
          << error;
      begin = end;
    }
    ASSERT_EQ(std::memcmp(one.data(), two.data(), one.size() * 4), 0);
    ASSERT_EQ(std::memcmp(one.data(), blocks.data(), one.size() * 4), 0);
    expectProduct(shape, operands, one);
  }
  for (cpu::GemmShape shape : {shapeOf(1, 32, 1000, 128, false), shapeOf(1, 128, 512, 512, false),
                               shapeOf(4, 32, 512, 512, false), shapeOf(1, 8, 128, 3136, false),
                               shapeOf(1, 15, 512, 512, false)}) {
    SCOPED_TRACE(describe(shape));
    EXPECT_FALSE(cpu::computesTransposedProduct(shape));
  }
  cpu::GemmShape untransposed = shapeOf(1, 32, 512, 512, false);
  untransposed.transposeB = false;
  EXPECT_FALSE(cpu::computesTransposedProduct(untransposed));
  untransposed.transposeA = untransposed.transposeB = true;
  EXPECT_FALSE(cpu::computesTransposedProduct(untransposed));
}

/// Runs `shape` as the one Gemm instruction of a session's forward program
/// (buffers resolved from the artifact) on random operands; checks the
/// result against them (rounded first for a bf16 or f16 product).
void expectInstructionComputes(const cpu::GemmShape &shape) {
  std::mt19937 rng(std::random_device{}());
  uint64_t batchB = shape.sharedB ? 1 : shape.batch;
  ArtifactSpec spec;
  uint32_t a = spec.addBuffer(artifact::Region_Arena, artifact::DType_F32,
                              shape.transposeA ? std::vector<int64_t>{shape.batch, shape.k, shape.m}
                                               : std::vector<int64_t>{shape.batch, shape.m, shape.k});
  uint32_t b = spec.addBuffer(artifact::Region_Arena, artifact::DType_F32,
                              {static_cast<int64_t>(batchB), shape.k, shape.n});
  uint32_t c = spec.addBuffer(artifact::Region_Arena, artifact::DType_F32,
                              {shape.batch, shape.m, shape.n});
  GemmSpec gemm{a, b, c, shape.batch, shape.m, shape.n, shape.k, shape.transposeA,
                shape.transposeB, shape.sharedB};
  gemm.precision = shape.precision == cpu::GemmPrecision::BF16  ? artifact::DType_BF16
                   : shape.precision == cpu::GemmPrecision::F16 ? artifact::DType_F16
                                                                : artifact::DType_F32;
  spec.programs.push_back({"forward", {gemm}, {{"a", a}, {"b", b}}, {{"c", c}}});

  std::string error;
  auto verified = artifact::VerifiedArtifact::fromFileBytes("gemm.kiln", spec.fileBytes(), error);
  ASSERT_NE(verified, nullptr) << error;
  auto executable = exec::Executable::fromArtifact(std::move(verified), error);
  ASSERT_NE(executable, nullptr) << error;
  auto session = exec::Session::create(executable, error);
  ASSERT_NE(session, nullptr) << error;

  Operands operands = randomOperands(shape, rng);
  std::vector<float> result(shape.batch * shape.m * shape.n, NAN);
  std::memcpy(session->bufferAddress(c), result.data(), result.size() * 4);
  ASSERT_FALSE(session->bindFeed("forward", "a", artifact::DType_F32, operands.a.data(),
                                 operands.a.size() * 4, error));
  ASSERT_FALSE(session->bindFeed("forward", "b", artifact::DType_F32, operands.b.data(),
                                 operands.b.size() * 4, error));
  ASSERT_FALSE(session->run("forward", error)) << error;
  ASSERT_FALSE(session->readFetch("forward", "c", artifact::DType_F32, result.data(),
                                  result.size() * 4, error));
  expectProduct(shape, shape.precision == cpu::GemmPrecision::F32
                           ? operands
                           : roundedTo(shape.precision, operands),
                result);
}

// Tests a Gemm instruction run by a session: buffers resolved from the
// artifact, batch and shared B honoured; then the same in bf16 (kilnc
// --precision=bf16).
TEST(RuntimeGemmTest, RunsAsAnInstruction) {
  cpu::GemmShape shape;
  shape.batch = 3;
  shape.m = 5;
  shape.n = 6;
  shape.k = 7;
  shape.transposeA = true;
  shape.sharedB = true;
  expectInstructionComputes(shape);
  shape.k = 32;
  shape.precision = cpu::GemmPrecision::BF16;
  expectInstructionComputes(shape);
}

// Tests two bf16 products of one tensor B sharing its converted copy (copy
// slot 0: the first converts, the second reads what it left), and a copy
// slot named for tensors of different sizes refused with one line.
TEST(RuntimeGemmTest, ProductsShareAConvertedCopy) {
  std::mt19937 rng(std::random_device{}());
  cpu::GemmShape shape;
  shape.m = 9;
  shape.n = 6;
  shape.k = 40;
  shape.precision = cpu::GemmPrecision::BF16;
  auto build = [&](int64_t secondM, int64_t secondK) {
    ArtifactSpec spec;
    auto buffer = [&](std::vector<int64_t> dims) {
      return spec.addBuffer(artifact::Region_Arena, artifact::DType_F32, dims);
    };
    uint32_t a1 = buffer({shape.m, shape.k}), a2 = buffer({secondM, secondK}),
             b = buffer({shape.k, shape.n}), c1 = buffer({shape.m, shape.n}),
             c2 = buffer({secondM, shape.n});
    // Another k: another tensor, wrongly given the same slot.
    uint32_t b2 = secondK == shape.k ? b : buffer({secondK, shape.n});
    GemmSpec first{a1, b, c1, 1, shape.m, shape.n, shape.k};
    GemmSpec second{a2, b2, c2, 1, secondM, shape.n, secondK};
    for (GemmSpec *gemm : {&first, &second}) {
      gemm->precision = artifact::DType_BF16;
      gemm->bCopy = 0;
    }
    spec.programs.push_back({"forward", {first, second}, {{"a1", a1}, {"a2", a2}, {"b", b}},
                             {{"c1", c1}, {"c2", c2}}});
    return spec.fileBytes();
  };
  std::string error;
  auto verified = artifact::VerifiedArtifact::fromFileBytes("shared.kiln", build(13, shape.k),
                                                            error);
  ASSERT_NE(verified, nullptr) << error;
  auto executable = exec::Executable::fromArtifact(std::move(verified), error);
  ASSERT_NE(executable, nullptr) << error;
  auto session = exec::Session::create(executable, error);
  ASSERT_NE(session, nullptr) << error;
  cpu::GemmShape second = shape;
  second.m = 13;
  Operands one = randomOperands(shape, rng), two = randomOperands(second, rng);
  two.b = one.b;
  for (int run = 0; run < 2; ++run) { // the second run converts afresh
    for (auto [name, values] : {std::pair<const char *, std::vector<float> *>{"a1", &one.a},
                                {"a2", &two.a},
                                {"b", &one.b}})
      ASSERT_FALSE(session->bindFeed("forward", name, artifact::DType_F32, values->data(),
                                     values->size() * 4, error));
    ASSERT_FALSE(session->run("forward", error)) << error;
    std::vector<float> c1(shape.m * shape.n), c2(second.m * second.n);
    ASSERT_FALSE(session->readFetch("forward", "c1", artifact::DType_F32, c1.data(),
                                    c1.size() * 4, error));
    ASSERT_FALSE(session->readFetch("forward", "c2", artifact::DType_F32, c2.data(),
                                    c2.size() * 4, error));
    expectProduct(shape, roundedTo(shape.precision, one), c1);
    expectProduct(second, roundedTo(shape.precision, two), c2);
  }

  auto mismatched = artifact::VerifiedArtifact::fromFileBytes("mismatched.kiln",
                                                              build(13, shape.k + 1), error);
  ASSERT_NE(mismatched, nullptr) << error;
  auto badExecutable = exec::Executable::fromArtifact(std::move(mismatched), error);
  ASSERT_NE(badExecutable, nullptr) << error;
  auto badSession = exec::Session::create(badExecutable, error);
  ASSERT_NE(badSession, nullptr) << error;
  std::vector<float> longer(13 * (shape.k + 1), 0.5f);
  for (auto [name, values] : {std::pair<const char *, std::vector<float> *>{"a1", &one.a},
                              {"a2", &longer},
                              {"b", &one.b}})
    ASSERT_FALSE(badSession->bindFeed("forward", name, artifact::DType_F32, values->data(),
                                      values->size() * 4, error));
  EXPECT_TRUE(badSession->run("forward", error));
  EXPECT_NE(error.find("instructions[1] (Gemm): copy slot 0 holds a tensor of 240 elements; "
                       "this product's has 246"),
            std::string::npos)
      << error;
}

} // namespace
