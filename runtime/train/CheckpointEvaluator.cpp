//===- CheckpointEvaluator.cpp - Evaluating checkpoints as they come ------===//

#include "runtime/train/CheckpointEvaluator.h"

#include "runtime/checkpoint/Checkpoint.h"
#include "runtime/exec/Executable.h"
#include "runtime/exec/Session.h"
#include "runtime/metrics/MetricsJsonl.h"
#include "runtime/ps/ArtifactPsModel.h"
#include "runtime/ps/ParameterClient.h"
#include "runtime/ps/ShardFiles.h"
#include "runtime/train/Evaluation.h"
#include "runtime/train/TrainingModel.h"

#include <thread>

namespace kiln::train {
namespace {

class CheckpointEvaluator {
public:
  CheckpointEvaluator(const EvaluatorOptions &options, std::ostream &out)
      : options_(options), out_(out) {}

  bool prepare(std::string &error) {
    executable_ = exec::Executable::load(options_.artifact, error);
    if (!executable_ || !model_.describe(executable_, options_.artifact, error))
      return false;
    if (ps::usesParameterServers(executable_->artifact())) {
      psModel_ = std::make_unique<ps::PsModel>();
      if (!ps::readPsModel(executable_->artifact(), *psModel_, error))
        return false;
    }
    if (!model_.loadData(options_.evalData, data::ReadOptions{}, evalData_, error))
      return false;
    return options_.metricsOut.empty() || jsonl_.open(options_.metricsOut, error);
  }

  /// Evaluates each newer checkpoint until the last step or the end of
  /// training.
  bool follow(std::string &error) {
    int64_t evaluated = -1;
    for (;;) {
      // Read before looking, so a checkpoint committed just before the
      // training ended is still seen.
      bool over = options_.trainingOver && options_.trainingOver();
      std::string path, ignored;
      if (checkpoint::findLatestCheckpoint(options_.checkpoints, path, ignored)) {
        int64_t step = 0;
        if (!evaluate(path, evaluated, step, error))
          return false;
        evaluated = std::max(evaluated, step);
        if (evaluated >= options_.lastStep)
          return true;
      }
      if (over) {
        out_ << "evaluator: the training ended; last checkpoint evaluated: "
             << (evaluated < 0 ? std::string("none") : "step " + std::to_string(evaluated))
             << "\n";
        return true;
      }
      std::this_thread::sleep_for(options_.poll);
    }
  }

private:
  /// Evaluates the checkpoint at `path` if its step is beyond `after`.
  bool evaluate(const std::string &path, int64_t after, int64_t &step, std::string &error) {
    checkpoint::Checkpoint own;
    // With parameter servers only the chief's file here; the servers below
    // read theirs.
    if (!checkpoint::loadCheckpoint(path, own, error, psModel_ ? ps::isChiefFile : nullptr))
      return false;
    step = own.step;
    if (step <= after)
      return true;
    std::unique_ptr<exec::Session> session = exec::Session::create(executable_, error);
    std::string note;
    if (!session || !model_.runInit(*session, error) ||
        !model_.restoreVariables(*session, own, note, error))
      return false;
    std::vector<std::unique_ptr<ps::ParameterServer>> servers;
    std::unique_ptr<ps::ParameterClient> client;
    if (psModel_) {
      int saved = 0;
      if (!ps::savedServerCount(own.path, own.data, saved, error))
        return false;
      std::vector<std::unique_ptr<ps::ServerLink>> links;
      for (int s = 0; s < saved; ++s) {
        ps::ServerOptions server;
        server.index = s;
        server.servers = saved;
        // The mode it was saved in (evaluation pushes nothing; restore
        // refuses the other).
        auto async = own.data.find(ps::kAsyncKey);
        if (async != own.data.end() && async->second != 0)
          server.mode = ps::SyncMode::Async;
        servers.push_back(std::make_unique<ps::ParameterServer>(*psModel_, server));
        if (!servers.back()->restore(own.path, error))
          return false;
        links.push_back(ps::makeLocalServerLink(*servers.back(), "ps:" + std::to_string(s)));
      }
      client = std::make_unique<ps::ParameterClient>(*psModel_, std::move(links), 0, 1);
      client->beginStep(step + 1);
      session->setParameters(client.get());
    }
    EvaluationResult result;
    if (!evaluateModel(model_, *session, evalData_, result, error))
      return false;
    out_ << "eval of " << own.path << " at step " << step << ": " << formatEvaluation(result)
         << "\n";
    out_.flush();
    return options_.metricsOut.empty() || jsonl_.write(evaluationFields(step, result), error);
  }

  const EvaluatorOptions &options_;
  std::ostream &out_;
  std::shared_ptr<const exec::Executable> executable_;
  TrainingModel model_;
  std::unique_ptr<ps::PsModel> psModel_;
  std::shared_ptr<const data::Dataset> evalData_;
  metrics::MetricsJsonl jsonl_;
};

} // namespace

bool runCheckpointEvaluator(const EvaluatorOptions &options, std::ostream &out,
                            std::string &error) {
  CheckpointEvaluator evaluator(options, out);
  return evaluator.prepare(error) && evaluator.follow(error);
}

} // namespace kiln::train
