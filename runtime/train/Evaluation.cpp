//===- Evaluation.cpp - Loss, AUC and accuracy over a data set ------------===//

#include "runtime/train/Evaluation.h"

#include "runtime/data/BatchReader.h"
#include "runtime/metrics/EvalMetrics.h"

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
  std::vector<float> predictions, labels, logits;
  std::vector<int64_t> classIds;
  size_t numClasses = 0;
  double lossSum = 0;
  for (int64_t b = 0; b < batches; ++b) {
    int64_t fresh = std::min(batch, data->rows - b * batch);
    if (!model.bindBatch(session, kForwardProgram, reader, error) ||
        !model.runForward(session, error))
      return false;
    double loss = 0;
    if (!model.readScalar(session, kForwardProgram, model.lossName(), loss, error))
      return false;
    lossSum += loss * fresh;
    if ((!scores && !classes) || labelIndex == specs.size())
      continue;
    std::vector<float> fetched;
    if (!model.readFloats(session, kForwardProgram, model.predictionName(), fetched, error))
      return false;
    size_t width = fetched.size() / batch;
    std::vector<double> truth =
        labelValues(specs[labelIndex], data->columns[labelIndex], b * batch, fresh);
    if (scores) {
      predictions.insert(predictions.end(), fetched.begin(), fetched.begin() + fresh * width);
      labels.insert(labels.end(), truth.begin(), truth.end());
    } else {
      numClasses = width;
      logits.insert(logits.end(), fetched.begin(), fetched.begin() + fresh * width);
      for (double id : truth)
        classIds.push_back(static_cast<int64_t>(id));
    }
  }
  result.examples = data->rows;
  result.loss = lossSum / static_cast<double>(data->rows);
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
