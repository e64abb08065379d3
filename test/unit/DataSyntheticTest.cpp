//===- DataSyntheticTest.cpp - Synthetic training data --------------------===//
//
// Both generators, syntheticDataset and scripts/make_ctr_data.py, must give
// data a model can learn: a logistic regression (a weight per dense value,
// one per categorical id) trained here reaches a held-out AUC well above 0.5.
//
//===----------------------------------------------------------------------===//

#include "runtime/data/Dataset.h"

#include "test/unit/RuntimeTestSupport.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

using namespace kiln::data;
using namespace kiln::test;

namespace {

std::vector<FeedSpec> ctrSpecs() {
  return {{"dense", ElementType::F32, {5}, 0},
          {"site", ElementType::I32, {}, 50},
          {"apps", ElementType::I64, {2}, 0},
          {"click", ElementType::F32, {}, 0}};
}

float floatAt(const Dataset &data, size_t feed, int64_t index) {
  float value;
  std::memcpy(&value, data.columns[feed].data() + index * 4, 4);
  return value;
}

int64_t idAt(const Dataset &data, size_t feed, int64_t index) {
  if (data.specs[feed].type == ElementType::I64) {
    int64_t value;
    std::memcpy(&value, data.columns[feed].data() + index * 8, 8);
    return value;
  }
  int32_t value;
  std::memcpy(&value, data.columns[feed].data() + index * 4, 4);
  return value;
}

/// Area under the ROC curve of `scores` for 0/1 `labels` (ties count half).
double auc(std::vector<std::pair<double, float>> scored) {
  std::sort(scored.begin(), scored.end());
  double positives = 0, negatives = 0, rankSum = 0;
  for (size_t i = 0; i < scored.size();) {
    size_t j = i;
    while (j < scored.size() && scored[j].first == scored[i].first)
      ++j;
    double rank = (i + 1 + j) / 2.0; // Average rank of the tie group.
    for (size_t k = i; k < j; ++k)
      if (scored[k].second > 0.5) {
        rankSum += rank;
        ++positives;
      }
    i = j;
  }
  negatives = scored.size() - positives;
  return (rankSum - positives * (positives + 1) / 2) / (positives * negatives);
}

/// Trains a logistic regression on the first 80% of the rows by SGD and
/// returns its AUC on the rest.
double heldOutAuc(const Dataset &data, size_t label) {
  std::map<std::tuple<size_t, int64_t, int64_t>, double> weights;
  auto score = [&](int64_t row, double step, float target) {
    std::vector<std::pair<std::tuple<size_t, int64_t, int64_t>, double>> terms;
    terms.push_back({{label, 0, 0}, 1.0}); // The bias.
    for (size_t f = 0; f < data.specs.size(); ++f) {
      if (f == label)
        continue;
      int64_t count = exampleElements(data.specs[f]);
      for (int64_t e = 0; e < count; ++e) {
        if (data.specs[f].type == ElementType::F32)
          terms.push_back({{f, e, -1}, floatAt(data, f, row * count + e)});
        else
          terms.push_back({{f, e, idAt(data, f, row * count + e)}, 1.0});
      }
    }
    double z = 0;
    for (auto &[key, x] : terms)
      z += weights[key] * x;
    if (step > 0) {
      double gradient = 1.0 / (1.0 + std::exp(-z)) - target;
      for (auto &[key, x] : terms)
        weights[key] -= step * gradient * x;
    }
    return z;
  };
  int64_t train = data.rows * 4 / 5;
  for (int epoch = 0; epoch < 4; ++epoch)
    for (int64_t row = 0; row < train; ++row)
      score(row, 0.05, floatAt(data, label, row));
  std::vector<std::pair<double, float>> scored;
  for (int64_t row = train; row < data.rows; ++row)
    scored.push_back({score(row, 0, 0), floatAt(data, label, row)});
  return auc(scored);
}

/// heldOutAuc for one padded list feed (0) and a click label (1): one
/// weight per id, whatever its place in the list; padding has none.
double heldOutBagAuc(const Dataset &data) {
  std::map<int64_t, double> weights;
  int64_t length = exampleElements(data.specs[0]);
  auto score = [&](int64_t row, double step, float target) {
    std::vector<int64_t> ids = {-1}; // -1 keys the bias.
    for (int64_t e = 0; e < length; ++e)
      if (idAt(data, 0, row * length + e) != -1)
        ids.push_back(idAt(data, 0, row * length + e));
    double z = 0;
    for (int64_t id : ids)
      z += weights[id];
    if (step > 0)
      for (int64_t id : ids)
        weights[id] -= step * (1.0 / (1.0 + std::exp(-z)) - target);
    return z;
  };
  int64_t train = data.rows * 4 / 5;
  for (int epoch = 0; epoch < 4; ++epoch)
    for (int64_t row = 0; row < train; ++row)
      score(row, 0.05, floatAt(data, 1, row));
  std::vector<std::pair<double, float>> scored;
  for (int64_t row = train; row < data.rows; ++row)
    scored.push_back({score(row, 0, 0), floatAt(data, 1, row)});
  return auc(scored);
}

TEST(DataSyntheticTest, IsDeterministicPerSeedAndRow) {
  Dataset a = syntheticDataset(ctrSpecs(), "click", 200, 1);
  EXPECT_EQ(a.rows, 200);
  EXPECT_EQ(a.skippedRows, 0);
  EXPECT_EQ(syntheticDataset(ctrSpecs(), "click", 200, 1).columns, a.columns);
  EXPECT_NE(syntheticDataset(ctrSpecs(), "click", 200, 2).columns, a.columns);
  // Row i depends only on (seed, i): a shorter set is a prefix.
  Dataset prefix = syntheticDataset(ctrSpecs(), "click", 50, 1);
  for (size_t f = 0; f < a.columns.size(); ++f)
    EXPECT_TRUE(std::equal(prefix.columns[f].begin(), prefix.columns[f].end(),
                           a.columns[f].begin()));
}

TEST(DataSyntheticTest, DrawsTheDocumentedDistributions) {
  const int64_t rows = 20000;
  Dataset data = syntheticDataset(ctrSpecs(), "click", rows, 9);
  double sum = 0, squares = 0;
  for (int64_t i = 0; i < rows * 5; ++i) {
    double x = floatAt(data, 0, i);
    sum += x;
    squares += x * x;
  }
  EXPECT_NEAR(sum / (rows * 5), 0.0, 0.03);
  EXPECT_NEAR(squares / (rows * 5), 1.0, 0.03);
  // Ids lie in [0, idBound) (1000 for idBound 0), the small ones most often.
  for (auto [feed, bound] : {std::pair{size_t(1), int64_t(50)}, {2, 1000}}) {
    int64_t count = rows * exampleElements(data.specs[feed]);
    std::vector<int64_t> histogram(bound);
    for (int64_t i = 0; i < count; ++i) {
      int64_t id = idAt(data, feed, i);
      ASSERT_GE(id, 0);
      ASSERT_LT(id, bound);
      ++histogram[id];
    }
    EXPECT_EQ(std::max_element(histogram.begin(), histogram.end()),
              histogram.begin());
    EXPECT_GT(histogram[bound - 1], 0);
  }
  double clicks = 0;
  for (int64_t i = 0; i < rows; ++i) {
    float click = floatAt(data, 3, i);
    ASSERT_TRUE(click == 0 || click == 1);
    clicks += click;
  }
  EXPECT_GT(clicks / rows, 0.15);
  EXPECT_LT(clicks / rows, 0.5);
}

/// A padded list feed (an embedding bag's): each list holds 1 to L ids in
/// [0, idBound), then -1 to the end, every length drawn; and the clicks
/// still depend on the lists (an id's effect, not its position).
TEST(DataSyntheticTest, DrawsPaddedListsForEmbeddingBags) {
  const int64_t rows = 20000, length = 4;
  FeedSpec tags{"tags", ElementType::I64, {length}, 30};
  tags.paddedIds = true;
  std::vector<FeedSpec> specs = {tags, {"click", ElementType::F32, {}, 0}};
  Dataset data = syntheticDataset(specs, "click", rows, 5);
  std::vector<int64_t> lengths(length + 1);
  for (int64_t row = 0; row < rows; ++row) {
    int64_t n = 0;
    while (n < length && idAt(data, 0, row * length + n) != -1) {
      ASSERT_GE(idAt(data, 0, row * length + n), 0);
      ASSERT_LT(idAt(data, 0, row * length + n), 30);
      ++n;
    }
    for (int64_t k = n; k < length; ++k)
      ASSERT_EQ(idAt(data, 0, row * length + k), -1) << "row " << row << ": padding, then an id";
    ++lengths[n];
  }
  EXPECT_EQ(lengths[0], 0) << "every list holds an id";
  for (int64_t n = 1; n <= length; ++n)
    EXPECT_NEAR(static_cast<double>(lengths[n]) / rows, 1.0 / length, 0.02) << n << " ids";
  // A bag of ids, each with a position-free effect, predicts the clicks.
  EXPECT_GT(heldOutBagAuc(data), 0.7);
}

TEST(DataSyntheticTest, ClicksCanBeLearned) {
  Dataset data = syntheticDataset(ctrSpecs(), "click", 20000, 3);
  EXPECT_GT(heldOutAuc(data, 3), 0.75);
}

TEST(DataSyntheticTest, ClassLabelsFollowAHiddenRule) {
  std::vector<FeedSpec> specs = {{"x", ElementType::F32, {4}, 0},
                                 {"label", ElementType::I32, {}, 3}};
  Dataset data = syntheticDataset(specs, "label", 3000, 5);
  std::vector<int64_t> counts(3);
  for (int64_t i = 0; i < data.rows; ++i) {
    int64_t label = idAt(data, 1, i);
    ASSERT_GE(label, 0);
    ASSERT_LT(label, 3);
    ++counts[label];
  }
  for (int64_t count : counts)
    EXPECT_GT(count, 300);
  // A linear rule: points close together mostly share their class. The
  // nearest neighbour of each of 300 points among the others agrees far
  // more often than chance (1/3).
  int agree = 0;
  for (int64_t i = 0; i < 300; ++i) {
    double best = INFINITY;
    int64_t nearest = 0;
    for (int64_t j = 300; j < data.rows; ++j) {
      double d = 0;
      for (int k = 0; k < 4; ++k) {
        double diff = floatAt(data, 0, i * 4 + k) - floatAt(data, 0, j * 4 + k);
        d += diff * diff;
      }
      if (d < best) {
        best = d;
        nearest = j;
      }
    }
    agree += idAt(data, 1, i) == idAt(data, 1, nearest);
  }
  EXPECT_GT(agree, 200);
}

// Tests the rule for labels over many classes (a language model's next
// token): each term votes for one class, so a row whose only term is a
// token gets that token's class, always the same one; and a sequence over
// a 1000-word vocabulary (64 x 1000 class-terms, which scoring every class
// would take minutes to draw) gets labels spread over the classes.
TEST(DataSyntheticTest, ManyClassLabelsAreVoted) {
  std::vector<FeedSpec> single = {{"token", ElementType::I64, {1}, 40},
                                  {"next", ElementType::I64, {1}, 20000}};
  Dataset one = syntheticDataset(single, "next", 2000, 3);
  std::map<int64_t, int64_t> classOfToken;
  std::set<int64_t> classes;
  for (int64_t i = 0; i < one.rows; ++i) {
    int64_t token = idAt(one, 0, i), label = idAt(one, 1, i);
    ASSERT_GE(label, 0);
    ASSERT_LT(label, 20000);
    auto [it, inserted] = classOfToken.emplace(token, label);
    EXPECT_EQ(it->second, label) << "token " << token << " row " << i;
    classes.insert(label);
  }
  EXPECT_GT(classOfToken.size(), 20u);
  EXPECT_GT(classes.size(), 15u);

  std::vector<FeedSpec> sequence = {{"tokens", ElementType::I64, {64}, 1000},
                                    {"targets", ElementType::I64, {64}, 1000}};
  Dataset lm = syntheticDataset(sequence, "targets", 500, 3);
  std::set<int64_t> seen;
  for (int64_t i = 0; i < lm.rows * 64; ++i) {
    int64_t label = idAt(lm, 1, i);
    ASSERT_GE(label, 0);
    ASSERT_LT(label, 1000);
    seen.insert(label);
  }
  EXPECT_GT(seen.size(), 500u);
}

TEST(DataSyntheticTest, RefusesAnUnknownLabel) {
  EXPECT_THROW(syntheticDataset(ctrSpecs(), "clicked", 10, 0),
               std::invalid_argument);
  // No label: every feed is a feature.
  Dataset data = syntheticDataset(ctrSpecs(), "", 10, 0);
  EXPECT_EQ(data.rows, 10);
}

/// Runs scripts/make_ctr_data.py; false (with a reason) where it cannot.
bool makeCtrData(const std::string &out, int rows, int seed,
                 std::string &reason) {
  if (std::system("python3 -c 'import argparse, hashlib' >/dev/null 2>&1")) {
    reason = "python3 is not available to run scripts/make_ctr_data.py";
    return false;
  }
  std::string command = "python3 " KILN_SOURCE_DIR
                        "/scripts/make_ctr_data.py --rows " +
                        std::to_string(rows) +
                        " --dense 13 --categorical 4 "
                        "--seed " +
                        std::to_string(seed) + " --out " + out;
  if (std::system(command.c_str()) != 0) {
    reason = "failed: " + command;
    return false;
  }
  return true;
}

TEST(DataSyntheticTest, MakeCtrDataWritesALearnableCriteoFile) {
  TemporaryDirectory dir;
  std::string reason;
  if (!makeCtrData(dir.file("a.tsv"), 20000, 4, reason)) {
    if (reason.rfind("failed", 0) == 0)
      FAIL() << reason;
    GTEST_SKIP() << reason;
  }
  // The same seed gives the same file, another seed another.
  ASSERT_TRUE(makeCtrData(dir.file("b.tsv"), 20000, 4, reason)) << reason;
  ASSERT_TRUE(makeCtrData(dir.file("c.tsv"), 2000, 5, reason)) << reason;
  std::vector<uint8_t> a = readFile(dir.file("a.tsv"));
  EXPECT_EQ(a, readFile(dir.file("b.tsv")));
  std::vector<uint8_t> c = readFile(dir.file("c.tsv"));
  EXPECT_NE(std::vector<uint8_t>(a.begin(), a.begin() + c.size()), c);

  std::vector<FeedSpec> specs = {{"label", ElementType::F32, {1}, 0},
                                 {"dense", ElementType::F32, {13}, 0}};
  for (int c = 0; c < 4; ++c)
    specs.push_back({"c" + std::to_string(c), ElementType::I32, {}, 4096});
  Dataset data;
  std::string error;
  ASSERT_TRUE(loadDataset(dir.file("a.tsv"), specs, "label", {}, data, error))
      << error;
  EXPECT_EQ(data.rows, 20000);
  double clicks = 0;
  for (int64_t i = 0; i < data.rows; ++i)
    clicks += floatAt(data, 0, i);
  EXPECT_GT(clicks / data.rows, 0.15);
  EXPECT_LT(clicks / data.rows, 0.6);
  EXPECT_GT(heldOutAuc(data, 0), 0.75);
}

} // namespace
