//===- Evaluation.h - Loss, AUC and accuracy over a data set ----*- C++ -*-===//
//
// Runs `forward` over every row of a data set once (the last batch wraps
// around to the first rows; only its new rows count). The loss is the mean
// of the batch losses weighted by their new rows. With a sigmoid
// cross-entropy loss the prediction fetch scores each example for the ROC
// AUC; with softmax cross-entropy its argmax gives the accuracy.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_TRAIN_EVALUATION_H
#define KILN_RUNTIME_TRAIN_EVALUATION_H

#include "runtime/train/TrainingModel.h"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace kiln::train {

struct EvaluationResult {
  double loss = NAN;
  double auc = NAN;      ///< Sigmoid cross-entropy models.
  double accuracy = NAN; ///< Softmax cross-entropy models.
  int64_t examples = 0;
};

bool evaluateModel(const TrainingModel &model, exec::Session &session,
                   const std::shared_ptr<const data::Dataset> &data,
                   EvaluationResult &result, std::string &error);

/// "loss 0.4821, auc 0.7312 (8192 examples)".
std::string formatEvaluation(const EvaluationResult &result);

/// The metrics line of an evaluation at `step`: step, eval_loss, and
/// eval_auc or eval_accuracy where the model has them.
std::vector<std::pair<std::string, double>> evaluationFields(int64_t step,
                                                             const EvaluationResult &result);

} // namespace kiln::train

#endif // KILN_RUNTIME_TRAIN_EVALUATION_H
