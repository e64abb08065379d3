//===- CheckpointEvaluator.h - Evaluating checkpoints as they come -*- C++ -*-===//
//
// The evaluator task of a cluster (TensorFlow's SidecarEvaluator): it
// follows a checkpoint directory and evaluates every new committed
// checkpoint on held-out data, until it has evaluated the run's last step
// or the training is over. A parameter-server artifact is evaluated with
// servers inside this process, each restoring its part of the checkpoint,
// so the evaluator reads the same files the servers wrote and never asks
// the training's servers for anything.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_TRAIN_CHECKPOINTEVALUATOR_H
#define KILN_RUNTIME_TRAIN_CHECKPOINTEVALUATOR_H

#include <chrono>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>

namespace kiln::train {

struct EvaluatorOptions {
  std::string artifact;
  std::string evalData;      ///< The held-out rows.
  std::string checkpoints;   ///< The training's --save directory.
  std::string metricsOut;    ///< FILE.jsonl of eval lines; empty = none.
  int64_t lastStep = 0;      ///< Stop once this step is evaluated.
  std::chrono::milliseconds poll{500};
  /// Whether the training has ended (then a last look, and stop); empty:
  /// wait for `lastStep` only.
  std::function<bool()> trainingOver;
};

/// Runs the evaluator; prints "eval at step S: ..." for each checkpoint.
/// Returns false with `error` set on bad input or a failed evaluation.
bool runCheckpointEvaluator(const EvaluatorOptions &options, std::ostream &out,
                            std::string &error);

} // namespace kiln::train

#endif // KILN_RUNTIME_TRAIN_CHECKPOINTEVALUATOR_H
