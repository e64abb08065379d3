//===- EvalMetrics.cpp - Evaluation metrics -------------------------------===//

#include "runtime/metrics/EvalMetrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace kiln::metrics {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool isPositive(float label) { return label >= 0.5f; }

} // namespace

double rocAuc(const std::vector<float> &scores,
              const std::vector<float> &labels) {
  if (scores.size() != labels.size())
    return kNaN;
  for (float score : scores)
    if (std::isnan(score))
      return kNaN;
  std::vector<size_t> order(scores.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return scores[a] < scores[b]; });
  // Sum the (1-based, tie-averaged) ranks of the positives.
  double positiveRanks = 0;
  double positives = 0;
  for (size_t begin = 0; begin < order.size();) {
    size_t end = begin + 1;
    while (end < order.size() && scores[order[end]] == scores[order[begin]])
      ++end;
    double rank = (double(begin + 1) + double(end)) / 2;
    for (size_t i = begin; i < end; ++i)
      if (isPositive(labels[order[i]])) {
        positiveRanks += rank;
        positives += 1;
      }
    begin = end;
  }
  double negatives = double(scores.size()) - positives;
  if (positives == 0 || negatives == 0)
    return kNaN;
  return (positiveRanks - positives * (positives + 1) / 2) /
         (positives * negatives);
}

double accuracy(const std::vector<float> &logits, size_t numClasses,
                const std::vector<int64_t> &classIds) {
  if (classIds.empty() || numClasses == 0 ||
      logits.size() / numClasses != classIds.size() ||
      logits.size() % numClasses != 0)
    return kNaN;
  size_t correct = 0;
  for (size_t row = 0; row < classIds.size(); ++row) {
    const float *begin = logits.data() + row * numClasses;
    size_t argmax = size_t(std::max_element(begin, begin + numClasses) - begin);
    if (classIds[row] >= 0 && size_t(classIds[row]) == argmax)
      ++correct;
  }
  return double(correct) / double(classIds.size());
}

double binaryAccuracy(const std::vector<float> &scores,
                      const std::vector<float> &labels, float threshold) {
  if (scores.empty() || scores.size() != labels.size())
    return kNaN;
  size_t correct = 0;
  for (size_t i = 0; i < scores.size(); ++i)
    if ((scores[i] >= threshold) == isPositive(labels[i]))
      ++correct;
  return double(correct) / double(scores.size());
}

} // namespace kiln::metrics
