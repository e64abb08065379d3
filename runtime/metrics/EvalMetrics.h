//===- EvalMetrics.h - Evaluation metrics -----------------------*- C++ -*-===//
//
// Metrics computed over a whole evaluation set. Each returns NaN where the
// metric is undefined (no examples, one class only, mismatched sizes, NaN
// scores) rather than a number that looks meaningful.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_METRICS_EVALMETRICS_H
#define KILN_RUNTIME_METRICS_EVALMETRICS_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kiln::metrics {

/// The area under the ROC curve of `scores` for binary `labels` (a label of
/// 0.5 or more is positive): the probability that a random positive scores
/// above a random negative, ties counting one half (the Mann-Whitney U
/// statistic with average ranks for ties). NaN if the sizes differ, a score
/// is NaN, or only one class is present.
double rocAuc(const std::vector<float> &scores,
              const std::vector<float> &labels);

/// The fraction of rows of `logits` (row-major, `numClasses` per row) whose
/// argmax (the first, on ties) equals the row's entry in `classIds`. NaN if
/// there are no rows or logits.size() != classIds.size() * numClasses.
double accuracy(const std::vector<float> &logits, size_t numClasses,
                const std::vector<int64_t> &classIds);

/// The fraction of `scores` on the same side of `threshold` as their binary
/// `labels` (a score at the threshold predicts positive). NaN if there are
/// no scores or the sizes differ.
double binaryAccuracy(const std::vector<float> &scores,
                      const std::vector<float> &labels, float threshold = 0.5f);

} // namespace kiln::metrics

#endif // KILN_RUNTIME_METRICS_EVALMETRICS_H
