//===- Evaluation.cpp - Loss, AUC and accuracy over a data set ------------===//

#include "runtime/train/Evaluation.h"

#include "runtime/data/BatchReader.h"
#include "runtime/metrics/EvalMetrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace kiln::train {
namespace {

/// The label column's values of one example as floats (class ids included).
std::vector<double> labelValues(const data::FeedSpec &spec, const data::DatasetColumn &column,
                                int64_t first, int64_t count) {
  std::vector<double> values;
  size_t width = data::exampleElements(spec);
  for (int64_t i = first * width; i < (first + count) * static_cast<int64_t>(width); ++i) {
    switch (spec.type) {
    case data::ElementType::F32: {
      float v;
      std::memcpy(&v, column.data() + i * 4, 4);
      values.push_back(v);
      break;
    }
    case data::ElementType::I32: {
      int32_t v;
      std::memcpy(&v, column.data() + i * 4, 4);
      values.push_back(v);
      break;
    }
    case data::ElementType::I64: {
      int64_t v;
      std::memcpy(&v, column.data() + i * 8, 8);
      values.push_back(static_cast<double>(v));
      break;
    }
    }
  }
  return values;
}

} // namespace

bool evaluateModel(const TrainingModel &model, exec::Session &session,
                   const std::shared_ptr<const data::Dataset> &data,
                   EvaluationResult &result, std::string &error) {
  int64_t batch = model.batchSize();
  int64_t batches = (data->rows + batch - 1) / batch;
  data::BatchReader reader(data, {batch, false, 0, 0});
  reader.start(0);
  const auto &specs = model.feedSpecs();
  size_t labelIndex = specs.size();
  for (size_t i = 0; i < specs.size(); ++i)
    if (specs[i].name == model.labelName())
      labelIndex = i;
  bool scores = model.lossKind() == "sigmoid_cross_entropy" && !model.predictionName().empty();
  bool classes = model.lossKind() == "softmax_cross_entropy" && !model.predictionName().empty();
  // A loss with an ignore_index averages over the other labels only: each
  // batch's loss weighs as many of them as it has, and accuracy skips them.
  bool ignores = labelIndex < specs.size() && specs[labelIndex].ignoredId.has_value();
  double ignored = ignores ? static_cast<double>(*specs[labelIndex].ignoredId) : 0.0;
  std::vector<float> predictions, labels, logits;
  std::vector<int64_t> classIds;
  size_t numClasses = 0;
  double lossSum = 0, lossWeight = 0;
  for (int64_t b = 0; b < batches; ++b) {
    int64_t fresh = std::min(batch, data->rows - b * batch);
    if (!model.bindBatch(session, kForwardProgram, reader, error) ||
        !model.runForward(session, error))
      return false;
    double loss = 0;
    if (!model.readScalar(session, kForwardProgram, model.lossName(), loss, error))
      return false;
    // The batch's labels, read only where they weigh or score it.
    std::vector<double> truth;
    if (labelIndex < specs.size() && (ignores || scores || classes))
      truth = labelValues(specs[labelIndex], data->columns[labelIndex], b * batch, fresh);
    double weight = static_cast<double>(fresh);
    if (ignores)
      weight = static_cast<double>(
          std::count_if(truth.begin(), truth.end(), [&](double id) { return id != ignored; }));
    if (weight > 0) {
      lossSum += loss * weight;
      lossWeight += weight;
    }
    if ((!scores && !classes) || labelIndex == specs.size())
      continue;
    std::vector<float> fetched;
    if (!model.readFloats(session, kForwardProgram, model.predictionName(), fetched, error))
      return false;
    size_t width = fetched.size() / batch;
    if (scores) {
      predictions.insert(predictions.end(), fetched.begin(), fetched.begin() + fresh * width);
      labels.insert(labels.end(), truth.begin(), truth.end());
      continue;
    }
    // Classes last: one row of logits per label (a sequence's per token).
    size_t perExample = truth.size() / static_cast<size_t>(fresh);
    if (perExample == 0 || width % perExample != 0)
      continue;
    numClasses = width / perExample;
    for (size_t k = 0; k < truth.size(); ++k) {
      if (ignores && truth[k] == ignored)
        continue;
      auto row = fetched.begin() + k * numClasses;
      logits.insert(logits.end(), row, row + numClasses);
      classIds.push_back(static_cast<int64_t>(truth[k]));
    }
  }
  result.examples = data->rows;
  result.loss = lossWeight > 0 ? lossSum / lossWeight : std::nan("");
  if (scores && predictions.size() == labels.size())
    result.auc = metrics::rocAuc(predictions, labels);
  if (classes && numClasses > 0)
    result.accuracy = metrics::accuracy(logits, numClasses, classIds);
  return true;
}

std::string formatEvaluation(const EvaluationResult &result) {
  char text[160];
  int n = std::snprintf(text, sizeof(text), "loss %.6g", result.loss);
  if (!std::isnan(result.auc))
    n += std::snprintf(text + n, sizeof(text) - n, ", auc %.4f", result.auc);
  if (!std::isnan(result.accuracy))
    n += std::snprintf(text + n, sizeof(text) - n, ", accuracy %.4f", result.accuracy);
  std::snprintf(text + n, sizeof(text) - n, " (%lld examples)",
                static_cast<long long>(result.examples));
  return text;
}

std::vector<std::pair<std::string, double>> evaluationFields(int64_t step,
                                                             const EvaluationResult &result) {
  std::vector<std::pair<std::string, double>> fields = {{"step", double(step)},
                                                        {"eval_loss", result.loss}};
  if (!std::isnan(result.auc))
    fields.push_back({"eval_auc", result.auc});
  if (!std::isnan(result.accuracy))
    fields.push_back({"eval_accuracy", result.accuracy});
  return fields;
}

} // namespace kiln::train
