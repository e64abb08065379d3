//===- NodeOrderTest.cpp - Topological order of a model's nodes -----------===//

#include "compiler/Import/NodeOrder.h"

#include "llvm/ADT/STLExtras.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

using namespace kiln;

namespace {

using Edges = std::vector<std::vector<int>>; // node -> the nodes it reads

mlir::FailureOr<llvm::SmallVector<int>> order(const Edges &reads,
                                              llvm::SmallVectorImpl<int> &cycle) {
  return orderNodes(
      reads.size(),
      [&](int node, llvm::SmallVectorImpl<int> &out) {
        out.append(reads[node].begin(), reads[node].end());
      },
      cycle);
}

/// A random DAG over a random permutation of the node indices.
Edges randomDag(std::mt19937 &rng, int count, std::vector<int> &rank) {
  rank.resize(count);
  std::iota(rank.begin(), rank.end(), 0);
  std::shuffle(rank.begin(), rank.end(), rng);
  std::vector<int> byRank(count);
  for (int i = 0; i < count; ++i)
    byRank[rank[i]] = i;
  Edges reads(count);
  std::uniform_int_distribution<int> fanIn(0, 3);
  for (int r = 1; r < count; ++r)
    for (int k = 0, e = fanIn(rng); k < e; ++k)
      reads[byRank[r]].push_back(
          byRank[std::uniform_int_distribution<int>(0, r - 1)(rng)]);
  return reads;
}

TEST(NodeOrderTest, EveryNodeComesAfterWhatItReads) {
  std::mt19937 rng(std::random_device{}());
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<int> rank;
    Edges reads = randomDag(rng, 1 + trial % 40, rank);
    llvm::SmallVector<int> cycle;
    auto sorted = order(reads, cycle);
    ASSERT_TRUE(mlir::succeeded(sorted));
    ASSERT_EQ(sorted->size(), reads.size());
    std::vector<int> position(reads.size(), -1);
    for (auto [i, node] : llvm::enumerate(*sorted))
      position[node] = i;
    for (size_t node = 0; node < reads.size(); ++node) {
      ASSERT_GE(position[node], 0);
      for (int producer : reads[node])
        EXPECT_LT(position[producer], position[node]);
    }
  }
}

TEST(NodeOrderTest, KeepsAnOrderedFileInItsOrder) {
  Edges reads = {{}, {0}, {}, {1, 2}, {0, 0}};
  llvm::SmallVector<int> cycle;
  auto sorted = order(reads, cycle);
  ASSERT_TRUE(mlir::succeeded(sorted));
  EXPECT_EQ(*sorted, (llvm::SmallVector<int>{0, 1, 2, 3, 4}));
}

TEST(NodeOrderTest, ReportsACycleInDataFlowOrder) {
  std::mt19937 rng(std::random_device{}());
  int cycles = 0;
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<int> rank;
    int count = 2 + trial % 30;
    Edges reads = randomDag(rng, count, rank);
    // A back edge from a later node to an earlier one closes a cycle.
    int from = std::uniform_int_distribution<int>(0, count - 1)(rng);
    int to = std::uniform_int_distribution<int>(0, count - 1)(rng);
    if (rank[from] < rank[to])
      std::swap(from, to);
    reads[to].push_back(from); // `to` reads `from`, which comes after it.
    llvm::SmallVector<int> cycle;
    auto sorted = order(reads, cycle);
    if (mlir::succeeded(sorted))
      continue; // `from` did not depend on `to`: still a DAG.
    ++cycles;
    ASSERT_FALSE(cycle.empty());
    // Each node feeds the next: the next one reads it.
    for (size_t i = 0; i < cycle.size(); ++i) {
      int producer = cycle[i], consumer = cycle[(i + 1) % cycle.size()];
      EXPECT_TRUE(llvm::is_contained(reads[consumer], producer))
          << "trial " << trial << ": " << producer << " does not feed " << consumer;
    }
  }
  // Self-loops (from == to) alone make this certain to have run.
  EXPECT_GT(cycles, 0);
}

} // namespace
