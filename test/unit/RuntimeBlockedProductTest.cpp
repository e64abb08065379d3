//===- RuntimeBlockedProductTest.cpp - A product by blocks of rows --------===//
//
// cpu::runBlockedProduct against the whole product: a row kernel written
// here copies each row it is given of C (addressed as [m, n]) to an output
// twice its value and counts the calls; the output must be the whole
// product's bits doubled, on one thread and on two, with a short last block,
// and with kernel rows of several rows of C (a product's epilogue over a
// [batch, rows, n] tensor: one kernel row per batch).
//
//===----------------------------------------------------------------------===//

#include "runtime/cpu/BlockedProduct.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using namespace kiln;

namespace {

int64_t gColumns = 0;
std::atomic<int> gCalls{0};

/// args: C as [m, n], the [m, n] output, then the kernel rows' first and
/// end (gColumns floats each).
void doubleRows(void **args) {
  const float *c = static_cast<const float *>(args[0]);
  float *out = static_cast<float *>(args[1]);
  int64_t begin = *static_cast<int64_t *>(args[2]), end = *static_cast<int64_t *>(args[3]);
  for (int64_t i = begin * gColumns; i < end * gColumns; ++i)
    out[i] = 2 * c[i];
  ++gCalls;
}

struct Case {
  int64_t m, n, k, blockRows;
  bool transposeA;
  int64_t rowsPerKernelRow = 1;
};

void expectBlockedEqualsWhole(const Case &test, int threads) {
  SCOPED_TRACE("m " + std::to_string(test.m) + " n " + std::to_string(test.n) + " k " +
               std::to_string(test.k) + " blocks of " + std::to_string(test.blockRows) +
               (test.transposeA ? " A transposed" : "") + ", " +
               std::to_string(test.rowsPerKernelRow) + " rows a kernel row, on " +
               std::to_string(threads) + " threads");
  std::mt19937 rng(static_cast<unsigned>(test.m * 131 + test.k));
  std::uniform_real_distribution<float> value(-1, 1);
  cpu::GemmShape shape;
  shape.m = test.m;
  shape.n = test.n;
  shape.k = test.k;
  shape.transposeA = test.transposeA;
  std::vector<float> a(test.m * test.k), b(test.k * test.n);
  for (float &x : a)
    x = value(rng);
  for (float &x : b)
    x = value(rng);
  std::vector<float> whole(test.m * test.n, NAN);
  std::string error;
  ASSERT_TRUE(cpu::gemm(shape, a.data(), b.data(), whole.data(), error, 1)) << error;

  std::vector<float> block(test.blockRows * test.n, NAN), out(test.m * test.n, NAN);
  void *args[] = {nullptr, out.data()};
  cpu::BlockedProduct product;
  product.shape = shape;
  product.a = a.data();
  product.b = b.data();
  product.block = block.data();
  product.blockRows = test.blockRows;
  product.rowKernel = doubleRows;
  product.args = args;
  product.argCount = 2;
  product.blockArg = 0;
  product.rowsPerKernelRow = test.rowsPerKernelRow;
  gColumns = test.n * test.rowsPerKernelRow;
  gCalls = 0;
  ASSERT_TRUE(cpu::runBlockedProduct(product, threads, error)) << error;
  for (int64_t i = 0; i < test.m * test.n; ++i)
    ASSERT_EQ(out[i], 2 * whole[i]) << "element " << i;
  int64_t blocks = (test.m + test.blockRows - 1) / test.blockRows;
  if (!cpu::canSplitBlocks(product, threads))
    EXPECT_EQ(gCalls, blocks);
  else
    EXPECT_GT(gCalls, blocks); // Full blocks split, one call per sharing thread.
}

TEST(RuntimeBlockedProductTest, EqualsTheWholeProductOnOneAndTwoThreads) {
  const Case cases[] = {
      {784, 256, 64, 128, true},  // The MLP's first weight gradient: 6 blocks and 16 rows.
      {100, 40, 33, 40, true},    // A short last block (20 rows) on one thread.
      {96, 24, 17, 32, false},    // Blocks that divide m.
      {50, 8, 5, 16, false},      // Blocks too small to split over two threads.
      {300, 40, 12, 64, true},    // 64-row blocks (kilnc's fewest), a 44-row last one.
      // Epilogues: one block, all of C.
      {512, 16, 8, 512, false, 64}, // The transformer's [8, 64, n]: 4 kernel rows a thread.
      {96, 8, 4, 96, false, 3},     // 32 kernel rows of 3: 48 rows a thread.
      {40, 8, 4, 40, false, 20},    // 2 kernel rows of 20: one each.
      {30, 8, 4, 30, false, 10},    // 3 kernel rows of 10: a thread's 10 too few to share.
      {192, 8, 4, 96, false, 48},   // Two blocks of 2 kernel rows of 48.
  };
  for (const Case &test : cases)
    for (int threads : {1, 2})
      expectBlockedEqualsWhole(test, threads);
}

TEST(RuntimeBlockedProductTest, SharesBlocksSixteenRowsAThread) {
  cpu::BlockedProduct product;
  product.blockRows = 31;
  EXPECT_EQ(cpu::blockThreads(product, 2), 1);
  EXPECT_FALSE(cpu::canSplitBlocks(product, 2));
  product.blockRows = 32;
  EXPECT_EQ(cpu::blockThreads(product, 2), 2);
  EXPECT_TRUE(cpu::canSplitBlocks(product, 2));
  EXPECT_FALSE(cpu::canSplitBlocks(product, 1));
  // More threads than the block has 16 rows for: as many as it has.
  product.blockRows = 64;
  EXPECT_EQ(cpu::blockThreads(product, 16), 4);
  // Whole kernel rows a thread, each thread 16 rows of the product or more.
  product.blockRows = 512;
  product.rowsPerKernelRow = 64;
  EXPECT_EQ(cpu::blockThreads(product, 16), 8);
  product.blockRows = 30;
  product.rowsPerKernelRow = 10;
  EXPECT_EQ(cpu::blockThreads(product, 2), 1);
  product.blockRows = 48;
  product.rowsPerKernelRow = 8;
  EXPECT_EQ(cpu::blockThreads(product, 4), 3); // 6 kernel rows: 2 each, 16 rows.
}

TEST(RuntimeBlockedProductTest, UsesOnlyTheThreadsABlockHasRowsFor) {
  // 64-row blocks over 8 requested threads: 4 share each block, and the
  // short last block (44 rows) goes to 2.
  Case test{300, 24, 9, 64, false};
  expectBlockedEqualsWhole(test, 8);
}

} // namespace
