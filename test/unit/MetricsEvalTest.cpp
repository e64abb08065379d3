//===- MetricsEvalTest.cpp - Evaluation metrics ---------------------------===//

#include "runtime/metrics/EvalMetrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace kiln::metrics;

namespace {

/// The AUC by its definition: over all positive/negative pairs, the fraction
/// where the positive scores higher, ties counting one half.
double pairwiseAuc(const std::vector<float> &scores,
                   const std::vector<float> &labels) {
  double wins = 0, pairs = 0;
  for (size_t i = 0; i < scores.size(); ++i)
    for (size_t j = 0; j < scores.size(); ++j)
      if (labels[i] == 1 && labels[j] == 0) {
        pairs += 1;
        wins += scores[i] > scores[j] ? 1 : scores[i] == scores[j] ? 0.5 : 0;
      }
  return wins / pairs;
}

TEST(MetricsEvalTest, RocAucKnownValues) {
  EXPECT_EQ(rocAuc({0.1f, 0.4f, 0.35f, 0.8f}, {0, 0, 1, 1}), 0.75);
  EXPECT_EQ(rocAuc({0.1f, 0.9f}, {0, 1}), 1.0);
  EXPECT_EQ(rocAuc({0.1f, 0.9f}, {1, 0}), 0.0);
  // All tied: one half.
  EXPECT_EQ(rocAuc({0.5f, 0.5f, 0.5f}, {1, 0, 1}), 0.5);
}

TEST(MetricsEvalTest, RocAucUndefined) {
  EXPECT_TRUE(std::isnan(rocAuc({0.1f, 0.2f}, {1, 1})));
  EXPECT_TRUE(std::isnan(rocAuc({0.1f, 0.2f}, {0, 0})));
  EXPECT_TRUE(std::isnan(rocAuc({}, {})));
  EXPECT_TRUE(std::isnan(rocAuc({0.1f}, {0, 1})));
  EXPECT_TRUE(std::isnan(rocAuc({0.1f, std::nanf("")}, {0, 1})));
}

// Tests against the pairwise definition on random data with many ties.
TEST(MetricsEvalTest, RocAucMatchesPairwiseDefinition) {
  std::mt19937 random(std::random_device{}());
  std::uniform_int_distribution<int> level(0, 9), label(0, 1);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<float> scores, labels;
    for (int i = 0; i < 200; ++i) {
      scores.push_back(float(level(random)) / 10);
      labels.push_back(float(label(random)));
    }
    EXPECT_NEAR(rocAuc(scores, labels), pairwiseAuc(scores, labels), 1e-12);
  }
}

TEST(MetricsEvalTest, Accuracy) {
  // Rows: argmax 1, 0 (first of a tie), 2.
  std::vector<float> logits = {0, 3, 1, 2, 2, 0, -1, -2, 5};
  EXPECT_DOUBLE_EQ(accuracy(logits, 3, {1, 0, 2}), 1.0);
  EXPECT_DOUBLE_EQ(accuracy(logits, 3, {1, 1, 0}), 1.0 / 3);
  EXPECT_DOUBLE_EQ(accuracy(logits, 3, {-1, 0, 2}), 2.0 / 3);
  EXPECT_TRUE(std::isnan(accuracy(logits, 3, {1, 0})));
  EXPECT_TRUE(std::isnan(accuracy(logits, 4, {1, 0})));
  EXPECT_TRUE(std::isnan(accuracy({}, 3, {})));
  EXPECT_TRUE(std::isnan(accuracy(logits, 0, {1})));
}

TEST(MetricsEvalTest, BinaryAccuracy) {
  EXPECT_DOUBLE_EQ(binaryAccuracy({0.2f, 0.5f, 0.9f, 0.7f}, {0, 1, 1, 0}),
                   0.75);
  EXPECT_DOUBLE_EQ(binaryAccuracy({0.2f, 0.9f}, {1, 0}, 0.1f), 0.5);
  EXPECT_TRUE(std::isnan(binaryAccuracy({}, {})));
  EXPECT_TRUE(std::isnan(binaryAccuracy({0.5f}, {})));
}

} // namespace
