//===- TrainingLoop.cpp - kiln run --data: training an artifact -----------===//

#include "runtime/train/TrainingLoop.h"

#include "runtime/artifact/DTypes.h"
#include "runtime/checkpoint/Checkpoint.h"
#include "runtime/data/BatchReader.h"
#include "runtime/data/Dataset.h"
#include "runtime/exec/Session.h"
#include "runtime/metrics/EvalMetrics.h"
#include "runtime/metrics/EventWriter.h"
#include "runtime/metrics/MetricsJsonl.h"
#include "runtime/metrics/ProgressLine.h"
#include "runtime/train/Evaluation.h"
#include "runtime/train/TrainingModel.h"

#include <chrono>
#include <cmath>
#include <optional>

namespace kiln::train {
namespace {

using Clock = std::chrono::steady_clock;

/// The whole run's state; each method returns false after setting `error`.
class Trainer {
public:
  Trainer(const TrainOptions &options, std::ostream &out, TrainingObserver *observer)
      : options(options), out(out), observer(observer) {}

  bool run(std::string &error);

private:
  bool openLogs(std::string &error);
  bool restore(std::string &error);
  /// One update: the batch (or each micro-batch) through the model, then
  /// the optimizer; `loss` is the mean over the micro-batches.
  bool step(data::BatchReader &reader, double &loss, double &lr, std::string &error);
  bool save(int64_t step, std::string &error);
  bool evaluate(int64_t step, std::string &error);

  const TrainOptions &options;
  std::ostream &out;
  TrainingObserver *observer;
  TrainingModel model;
  std::unique_ptr<exec::Session> session;
  std::shared_ptr<const data::Dataset> trainData, evalData;
  metrics::MetricsJsonl jsonl;
  std::optional<metrics::EventWriter> events;
  int64_t startStep = 0;
  int64_t lastSaved = -1;
};

bool Trainer::openLogs(std::string &error) {
  if (!options.metricsOut.empty() && !jsonl.open(options.metricsOut, error))
    return false;
  if (!options.logdir.empty()) {
    events.emplace();
    if (!events->open(options.logdir, error))
      return false;
  }
  return true;
}

bool Trainer::restore(std::string &error) {
  checkpoint::Checkpoint loaded;
  if (!checkpoint::loadCheckpoint(options.restore, loaded, error) ||
      !checkpoint::checkMatches(loaded, model.checkpointSpecs(), model.name(), error))
    return false;
  for (const checkpoint::LoadedTensor &tensor : loaded.tensors)
    if (!model.writeVariable(*session, tensor.name, tensor.data, error))
      return false;
  startStep = loaded.step;
  lastSaved = loaded.step;
  out << "restored " << loaded.path << " at step " << loaded.step << "\n";
  return true;
}

bool Trainer::step(data::BatchReader &reader, double &loss, double &lr, std::string &error) {
  // Without accumulation the batch program is train_step itself.
  const char *batchProgram = model.batchProgram();
  bool accumulating = model.accumulateSteps() > 1;
  double sum = 0;
  for (int64_t micro = 0; micro < model.accumulateSteps(); ++micro) {
    double microLoss = 0;
    if (!model.bindBatch(*session, batchProgram, reader.next(), error) ||
        !(accumulating ? model.runAccumulateStep(*session, error)
                       : model.runTrainStep(*session, error)) ||
        !model.readScalar(*session, batchProgram, model.lossName(), microLoss, error))
      return false;
    sum += microLoss;
  }
  loss = sum / static_cast<double>(model.accumulateSteps());
  return (!accumulating || model.runTrainStep(*session, error)) &&
         model.readScalar(*session, kTrainProgram, "learning_rate", lr, error);
}

bool Trainer::save(int64_t step, std::string &error) {
  if (options.saveDir.empty() || step == lastSaved)
    return true;
  std::vector<std::vector<uint8_t>> storage;
  checkpoint::SaveRequest request;
  if (!model.checkpointRequest(*session, step, storage, request, error))
    return false;
  request.directory = options.saveDir;
  request.keep = options.keep;
  if (!checkpoint::saveCheckpoint(request, error))
    return false;
  lastSaved = step;
  if (observer)
    observer->checkpointSaved(step);
  return true;
}

bool Trainer::evaluate(int64_t step, std::string &error) {
  if (!evalData)
    return true;
  EvaluationResult result;
  if (!evaluateModel(model, *session, evalData, result, error))
    return false;
  out << "eval at step " << step << ": " << formatEvaluation(result) << "\n";
  std::vector<std::pair<std::string, double>> fields = {{"step", double(step)},
                                                        {"eval_loss", result.loss}};
  if (!std::isnan(result.auc))
    fields.push_back({"eval_auc", result.auc});
  if (!std::isnan(result.accuracy))
    fields.push_back({"eval_accuracy", result.accuracy});
  if (!options.metricsOut.empty() && !jsonl.write(fields, error))
    return false;
  if (events)
    for (size_t i = 1; i < fields.size(); ++i)
      if (!events->scalar(fields[i].first, step, fields[i].second, error))
        return false;
  return true;
}

bool Trainer::run(std::string &error) {
  std::shared_ptr<const exec::Executable> executable =
      exec::Executable::load(options.artifact, error);
  if (!executable || !model.describe(executable, options.artifact, error))
    return false;
  session = exec::Session::create(executable, error);
  if (!session)
    return false;
  data::ReadOptions read{options.skipBadRows};
  if (!model.loadData(options.data, read, trainData, error) ||
      (!options.evalData.empty() && !model.loadData(options.evalData, read, evalData, error)))
    return false;
  if (trainData->skippedRows > 0)
    out << "skipped " << trainData->skippedRows << " bad rows of " << options.data << "\n";
  if (!model.runInit(*session, error))
    return false;
  if (!options.restore.empty() && !restore(error))
    return false;
  if (options.steps <= startStep) {
    out << "nothing to train: the run is at step " << startStep << ", --steps is "
        << options.steps << "\n";
    return true;
  }
  // Refuse an unusable --save directory now, not after the first N steps.
  if (!options.saveDir.empty() &&
      !checkpoint::checkCheckpointDirectory(options.saveDir, startStep, options.steps, error))
    return false;
  if (!openLogs(error))
    return false;

  data::BatchReader reader(trainData, {model.batchSize(), options.shuffle, options.seed, 2});
  reader.start(startStep * model.accumulateSteps());
  metrics::ProgressLine progress(options.steps, startStep);
  Clock::time_point begin = Clock::now(), last = begin;
  double loss = 0, lr = 0;
  if (observer)
    observer->trainingStarted(startStep, options.steps);
  for (int64_t step = startStep + 1; step <= options.steps; ++step) {
    Clock::time_point stepBegin = Clock::now();
    if (!this->step(reader, loss, lr, error))
      return false;
    if (!std::isfinite(loss)) {
      error = options.artifact + ": error: step " + std::to_string(step) + ": loss is " +
              (std::isnan(loss) ? "NaN" : "infinite") + " (lr " + std::to_string(lr) + ")";
      return false;
    }
    Clock::time_point now = Clock::now();
    double seconds = std::chrono::duration<double>(now - last).count();
    last = now;
    int64_t examplesPerStep = model.batchSize() * model.accumulateSteps();
    double examplesPerSecond = seconds > 0 ? examplesPerStep / seconds : 0;
    progress.update(step, loss, examplesPerSecond);
    if (observer)
      observer->stepFinished({step, loss, lr, examplesPerStep,
                              std::chrono::duration<double>(now - stepBegin).count(),
                              examplesPerSecond});
    if (!options.metricsOut.empty() &&
        !jsonl.write({{"step", double(step)},
                      {"loss", loss},
                      {"learning_rate", lr},
                      {"examples_per_second", examplesPerSecond}},
                     error))
      return false;
    if (events && (!events->scalar("loss", step, loss, error) ||
                   !events->scalar("learning_rate", step, lr, error) ||
                   !events->scalar("examples_per_second", step, examplesPerSecond, error)))
      return false;
    if (options.saveEvery > 0 && step % options.saveEvery == 0 && !save(step, error))
      return false;
    if (options.evalEvery > 0 && step % options.evalEvery == 0 && step != options.steps &&
        !evaluate(step, error))
      return false;
  }
  progress.finish();
  double total = std::chrono::duration<double>(Clock::now() - begin).count();
  int64_t trained = options.steps - startStep;
  out << "trained steps " << startStep + 1 << ".." << options.steps << ": final loss "
      << loss << ", "
      << static_cast<int64_t>(trained * model.batchSize() * model.accumulateSteps() / total)
      << " examples/s\n";
  if (events && !events->flush(error))
    return false;
  return save(options.steps, error) && evaluate(options.steps, error);
}

} // namespace

int runTraining(const TrainOptions &options, std::ostream &out, std::ostream &err,
                TrainingObserver *observer) {
  std::string error;
  bool ok = false;
  try {
    ok = Trainer(options, out, observer).run(error);
  } catch (const std::exception &e) {
    error = "kiln: error: " + std::string(e.what());
  }
  if (ok)
    return 0;
  err << error << "\n";
  return 1;
}

} // namespace kiln::train
