//===- RuntimeRowRangesTest.cpp - A kernel's rows split over threads ------===//

#include "runtime/cpu/RowRanges.h"

#include <gtest/gtest.h>

#include <atomic>
#include <vector>

namespace kiln::cpu {
namespace {

/// A row entry: args[0] counts calls per row (atomics), args[1] and args[2]
/// point to the first and past-the-end row.
void countRows(void **args) {
  auto *counts = static_cast<std::atomic<int> *>(args[0]);
  int64_t begin = *static_cast<int64_t *>(args[1]);
  int64_t end = *static_cast<int64_t *>(args[2]);
  for (int64_t row = begin; row < end; ++row)
    counts[row].fetch_add(1);
}

TEST(RowRangesTest, EveryRowOnceForAnyCount) {
  for (int64_t rows : {1, 2, 3, 7, 64, 1001}) {
    std::vector<std::atomic<int>> counts(rows);
    void *args[] = {counts.data()};
    runRowRanges(countRows, args, 1, rows);
    for (int64_t row = 0; row < rows; ++row)
      EXPECT_EQ(counts[row].load(), 1) << "row " << row << " of " << rows;
  }
}

TEST(RowRangesTest, ManyBuffersGoOnTheHeap) {
  // More than the 64 addresses copied on the stack: the range still comes last.
  std::vector<std::atomic<int>> counts(10);
  std::vector<void *> args(100, nullptr);
  args[0] = counts.data();
  auto shifted = [](void **all) {
    void *view[] = {all[0], all[100], all[101]};
    countRows(view);
  };
  runRowRanges(+shifted, args.data(), args.size(), 10);
  for (int row = 0; row < 10; ++row)
    EXPECT_EQ(counts[row].load(), 1) << "row " << row;
}

TEST(RowRangesTest, ThreadsAreSharedAmongSessions) {
  int all = availableThreads();
  ASSERT_GE(all, 1);
  EXPECT_EQ(all, processThreads());
  EXPECT_GE(usableCores(), 1);
  EXPECT_EQ(rowThreads(1), 1);
  EXPECT_EQ(rowThreads(1 << 20), all);
  shareThreadsAmong(2);
  EXPECT_EQ(availableThreads(), std::max(1, all / 2));
  shareThreadsAmong(all + 1);
  EXPECT_EQ(availableThreads(), 1);
  EXPECT_EQ(rowThreads(1 << 20), 1);
  shareThreadsAmong(1);
  EXPECT_EQ(availableThreads(), all);
}

} // namespace
} // namespace kiln::cpu
