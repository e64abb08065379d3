//===- TrainFlags.cpp - kilnc's --train flags -----------------------------===//

#include "compiler/Import/Graph/TrainFlags.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;

namespace kiln {

LogicalResult applyTrainOverrides(const TrainFlags &flags, graph::TrainSpec &spec,
                                  Location loc) {
  graph::Optimizer &optimizer = *spec.mutable_optimizer();
  if (!flags.optimizer.empty()) {
    std::optional<graph::Optimizer::Kind> kind =
        llvm::StringSwitch<std::optional<graph::Optimizer::Kind>>(flags.optimizer)
            .Case("sgd", graph::Optimizer::SGD)
            .Case("momentum", graph::Optimizer::MOMENTUM)
            .Case("adam", graph::Optimizer::ADAM)
            .Case("adamw", graph::Optimizer::ADAMW)
            .Case("adagrad", graph::Optimizer::ADAGRAD)
            .Default(std::nullopt);
    if (!kind)
      return emitError(loc) << "--optimizer=" << flags.optimizer
                            << ": expected sgd, momentum, adam, adamw or adagrad";
    // Another optimizer's rate is no default for this one: PyTorch's
    // default for the new kind applies unless --lr is given.
    if (*kind != optimizer.kind())
      optimizer.clear_learning_rate();
    optimizer.set_kind(*kind);
  }
  if (flags.learningRate)
    optimizer.set_learning_rate(*flags.learningRate);
  auto only = [&](bool given, StringRef flag, graph::Optimizer::Kind kind,
                  StringRef name) -> LogicalResult {
    if (!given || optimizer.kind() == kind)
      return success();
    return emitError(loc) << flag << " applies to --optimizer=" << name
                          << " only, not " << graph::Optimizer::Kind_Name(optimizer.kind());
  };
  if (failed(only(flags.momentum.has_value(), "--momentum", graph::Optimizer::MOMENTUM,
                  "momentum")) ||
      failed(only(flags.nesterov, "--nesterov", graph::Optimizer::MOMENTUM, "momentum")) ||
      failed(only(flags.weightDecay.has_value(), "--weight-decay", graph::Optimizer::ADAMW,
                  "adamw")))
    return failure();
  if (flags.momentum)
    optimizer.set_momentum(*flags.momentum);
  if (flags.nesterov)
    optimizer.set_nesterov(true);
  if (flags.weightDecay)
    optimizer.set_weight_decay(*flags.weightDecay);
  if (flags.clipNorm)
    optimizer.set_clip_global_norm(*flags.clipNorm);
  if (!flags.sparseUpdates.empty()) {
    if (flags.sparseUpdates != "dense" && flags.sparseUpdates != "lazy")
      return emitError(loc) << "--sparse-updates=" << flags.sparseUpdates
                            << ": expected dense or lazy";
    optimizer.set_sparse_updates(flags.sparseUpdates == "lazy" ? graph::Optimizer::LAZY
                                                               : graph::Optimizer::DENSE);
  }
  graph::Strategy &strategy = *spec.mutable_strategy();
  if (!flags.strategy.empty()) {
    if (flags.strategy != "single" && flags.strategy != "data-parallel")
      return emitError(loc) << "--strategy=" << flags.strategy
                            << ": expected single or data-parallel";
    strategy.set_kind(flags.strategy == "data-parallel" ? graph::Strategy::ALL_REDUCE
                                                        : graph::Strategy::SINGLE);
  }
  if (flags.bucketBytes) {
    if (strategy.kind() != graph::Strategy::ALL_REDUCE)
      return emitError(loc) << "--bucket-bytes applies to --strategy=data-parallel only";
    strategy.set_bucket_bytes(*flags.bucketBytes);
  }
  graph::LearningRateSchedule &schedule = *optimizer.mutable_schedule();
  if (!flags.schedule.empty()) {
    std::optional<graph::LearningRateSchedule::Kind> kind =
        llvm::StringSwitch<std::optional<graph::LearningRateSchedule::Kind>>(flags.schedule)
            .Case("constant", graph::LearningRateSchedule::CONSTANT)
            .Case("linear_warmup", graph::LearningRateSchedule::LINEAR_WARMUP)
            .Case("cosine_decay", graph::LearningRateSchedule::COSINE_DECAY)
            .Default(std::nullopt);
    if (!kind)
      return emitError(loc) << "--lr-schedule=" << flags.schedule
                            << ": expected constant, linear_warmup or cosine_decay";
    schedule.set_kind(*kind);
  }
  if (flags.warmupSteps)
    schedule.set_warmup_steps(*flags.warmupSteps);
  if (flags.decaySteps)
    schedule.set_decay_steps(*flags.decaySteps);
  if (flags.minLr)
    schedule.set_min_lr(*flags.minLr);
  if (flags.batchSize)
    spec.set_batch_size(*flags.batchSize);
  if (flags.accumulateSteps)
    spec.set_accumulate_steps(*flags.accumulateSteps);
  return success();
}

} // namespace kiln
