//===- TrainingModel.h - What training needs of an artifact -----*- C++ -*-===//
//
// Reads a training artifact's facts (its Training table, the feeds of
// train_step, its variables) once, and wraps the session calls the loop
// makes: binding a batch, running a program, reading a scalar fetch,
// reading and writing the variables a checkpoint holds.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_TRAIN_TRAININGMODEL_H
#define KILN_RUNTIME_TRAIN_TRAININGMODEL_H

#include "runtime/checkpoint/Checkpoint.h"
#include "runtime/data/BatchReader.h"
#include "runtime/data/Dataset.h"
#include "runtime/exec/Session.h"

#include <memory>
#include <string>
#include <vector>

namespace kiln::train {

constexpr const char *kTrainProgram = "train_step";
constexpr const char *kAccumulateProgram = "accumulate_step";
constexpr const char *kForwardProgram = "forward";

class TrainingModel {
public:
  /// Reads the facts of `executable` (loaded from `path`); fails with
  /// "PATH: error: ..." for an artifact that cannot train.
  bool describe(std::shared_ptr<const exec::Executable> executable,
                const std::string &path, std::string &error);

  const std::string &name() const { return name_; }
  const std::string &lossName() const { return loss_; }
  const std::string &labelName() const { return label_; }
  const std::string &lossKind() const { return lossKind_; }
  const std::string &predictionName() const { return prediction_; }
  /// Examples per micro-batch (the feeds' first dimension).
  int64_t batchSize() const { return batchSize_; }
  /// Micro-batches per step (gradient accumulation); 1 without.
  int64_t accumulateSteps() const { return accumulateSteps_; }
  /// Whether train_step all-reduces its gradients (kilnc
  /// --strategy=data-parallel): what several replicas need.
  bool dataParallel() const { return dataParallel_; }
  /// Whether train_step scales its loss (kilnc --precision=fp16): it fetches
  /// `loss_scale` (the scale for the next step) and `skipped_step` (1 when its
  /// gradients were not finite and it left every variable as it was).
  bool lossScaling() const { return lossScaling_; }
  /// The program that takes the batches and fetches the loss:
  /// accumulate_step with accumulation, else train_step.
  const char *batchProgram() const {
    return accumulateSteps_ > 1 ? kAccumulateProgram : kTrainProgram;
  }
  const std::vector<data::FeedSpec> &feedSpecs() const { return specs_; }

  /// Loads `path` (a data file, or "synthetic[:ROWS]") for the model's feeds;
  /// a data set this machine cannot hold is one error naming it.
  bool loadData(const std::string &path, const data::ReadOptions &options,
                std::shared_ptr<const data::Dataset> &out, std::string &error) const;

  bool runInit(exec::Session &session, std::string &error) const;
  bool runTrainStep(exec::Session &session, std::string &error) const;
  bool runAccumulateStep(exec::Session &session, std::string &error) const;
  bool runForward(exec::Session &session, std::string &error) const;
  /// Binds one batch (a buffer per feed spec) to `program`'s feeds.
  bool bindBatch(exec::Session &session, const char *program,
                 const std::vector<std::vector<uint8_t>> &batch, std::string &error) const;
  /// How the feeds of the batches bindBatch bound got their bytes.
  struct FeedCounts {
    int64_t inPlace = 0; ///< Read where the data set holds them (borrowed).
    int64_t copied = 0;  ///< Written into the feeds' buffers.
  };
  /// Binds `reader`'s next batch to `program`'s feeds: without prefetch,
  /// read where the data set holds it when it lies there in one piece and
  /// the program can read each feed from elsewhere (Session::borrowFeed:
  /// no copy), else written straight into the feeds' buffers (one copy);
  /// with prefetch, read likewise where the reader's thread laid it out.
  /// The batch program skips the id pass (the data set checked its rows
  /// when loaded). Adds to `*counts` when given.
  bool bindBatch(exec::Session &session, const char *program, data::BatchReader &reader,
                 std::string &error, FeedCounts *counts = nullptr) const;
  /// Has `session` start the first pulls of `program`'s next run for
  /// `batch` (a batch not bound yet; Session::prefetchPulls).
  bool prefetchBatch(exec::Session &session, const char *program,
                     const std::vector<std::vector<uint8_t>> &batch, std::string &error) const;
  /// Reads an f32 scalar fetch of the program that ran last.
  bool readScalar(const exec::Session &session, const char *program,
                  const std::string &fetch, double &value, std::string &error) const;
  /// Reads an f32 fetch of any shape.
  bool readFloats(const exec::Session &session, const char *program,
                  const std::string &fetch, std::vector<float> &values,
                  std::string &error) const;

  /// Every variable (parameters, optimizer slots, the step counter).
  std::vector<checkpoint::TensorSpec> checkpointSpecs() const;
  /// Checks `loaded` against the model and writes its tensors into the
  /// session's variables. fp16 loss scaling's state may be on one side only
  /// (a checkpoint of another precision): missing, the scale starts afresh;
  /// extra, it is not used. `note` then says so (" (...)"), else is empty.
  bool restoreVariables(exec::Session &session, const checkpoint::Checkpoint &loaded,
                        std::string &note, std::string &error) const;
  /// fp16 loss scaling with parameter servers: the step that started from
  /// scale `used` was skipped though the step found its gradients finite
  /// (sync servers skipped it for another worker's, or they overflowed f16
  /// once compressed for the wire). Moves the scale as the step's own skip
  /// would have: `scale` = half of `used`, the count of finite steps back
  /// to 0. In sync mode every worker so keeps one scale shared by all (and
  /// a checkpoint's, the chief's, is every worker's).
  bool followSkippedStep(exec::Session &session, float used, double &scale,
                         std::string &error) const;
  /// fp16 loss scaling: the scale the next step's backward pass starts from.
  bool lossScaleNow(const exec::Session &session, float &scale, std::string &error) const;
  bool writeVariable(exec::Session &session, const std::string &name,
                     const std::vector<uint8_t> &bytes, std::string &error) const;
  /// A save request for every variable at `step`; `storage` holds the bytes.
  bool checkpointRequest(const exec::Session &session, int64_t step,
                         std::vector<std::vector<uint8_t>> &storage,
                         checkpoint::SaveRequest &request, std::string &error) const;

private:
  /// loadData, out of memory as std::bad_alloc.
  bool loadDataOrThrow(const std::string &path, const data::ReadOptions &options,
                       std::shared_ptr<const data::Dataset> &out, std::string &error) const;
  struct VariableInfo {
    std::string name;
    artifact::DType dtype;
    std::vector<int64_t> shape;
    size_t bytes;
  };

  bool run(exec::Session &session, const char *program, std::string &error) const;
  /// Binds the feeds training makes rather than reads (an EmbeddingBag's
  /// offsets) to `program`.
  bool bindMadeFeeds(exec::Session &session, const char *program, std::string &error) const;

  /// A feed whose value training makes: its name, type and bytes.
  struct MadeFeed {
    std::string name;
    artifact::DType dtype;
    std::vector<uint8_t> bytes;
  };

  std::shared_ptr<const exec::Executable> executable_;
  std::string path_, name_, loss_, label_, lossKind_, prediction_;
  /// The optimizer's step counter (training.step_variable), "" if none.
  std::string stepVariable_;
  int64_t batchSize_ = 0;
  int64_t accumulateSteps_ = 1;
  bool dataParallel_ = false;
  bool lossScaling_ = false;
  std::vector<data::FeedSpec> specs_;
  std::vector<artifact::DType> feedTypes_;
  std::vector<MadeFeed> madeFeeds_;
  std::vector<VariableInfo> variables_;
};

} // namespace kiln::train

#endif // KILN_RUNTIME_TRAIN_TRAININGMODEL_H
