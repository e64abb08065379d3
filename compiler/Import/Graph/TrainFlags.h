//===- TrainFlags.h - kilnc's --train flags ---------------------*- C++ -*-===//
//
// `kilnc MODEL --train ...` either overrides parts of a graph file's train
// spec (optimizer, learning rate, batch, accumulation) or, for a model
// without one (ONNX), names the loss to add: its kind, the output it reads
// and the label input it compares against.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORT_GRAPH_TRAINFLAGS_H
#define KILN_COMPILER_IMPORT_GRAPH_TRAINFLAGS_H

#include "proto/kiln/graph.pb.h"

#include "mlir/IR/Location.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

namespace kiln {

struct TrainFlags {
  /// --train: compile a training step.
  bool train = false;
  /// --loss: softmax_cross_entropy, sigmoid_cross_entropy, nll,
  /// sparse_categorical_crossentropy, binary_crossentropy, mse
  /// (LossFromFlags.h), or model.
  std::string loss;
  /// --output: the @forward result the loss reads (empty: the only one).
  std::string output;
  /// --label: the input holding the targets (empty: "label").
  std::string label;
  /// --class-axis: the output's axis of classes under a loss over classes
  /// (unset: the last; 1 is F.cross_entropy's over [N, C, d1, ...]).
  std::optional<int64_t> classAxis;
  /// --ignore-index: a loss over classes' label left out of the loss.
  std::optional<int64_t> ignoreIndex;
  /// --label-smoothing: softmax_cross_entropy's and
  /// categorical_crossentropy's target smoothing in [0, 1].
  std::optional<double> labelSmoothing;
  /// --class-probabilities: softmax_cross_entropy's labels are class
  /// probabilities shaped like the logits, not class ids.
  bool classProbabilities = false;
  /// --class-weights: a loss over classes' weight of each class (empty:
  /// none), weighed as PyTorch's weight= or Keras' class_weight by the
  /// loss's framework (WeightedCrossEntropy.h); binary_crossentropy's of
  /// the labels 0 and 1 (Keras' class_weight, BinaryLossWeights.h).
  std::vector<double> classWeights;
  /// --pos-weight: sigmoid_cross_entropy's weight of the positive term, one
  /// for every label column or one each (PyTorch's BCEWithLogitsLoss
  /// pos_weight); empty: none.
  std::vector<double> posWeights;
  /// --optimizer: sgd, momentum, adam, adamw or adagrad.
  std::string optimizer;
  std::optional<double> learningRate;
  std::optional<int64_t> batchSize;
  std::optional<int64_t> accumulateSteps;
  /// --momentum, --nesterov, --weight-decay, --clip-norm.
  std::optional<double> momentum, weightDecay, clipNorm;
  bool nesterov = false;
  /// --lr-schedule (constant, linear_warmup, cosine_decay) and its
  /// --warmup-steps, --decay-steps, --min-lr.
  std::string schedule;
  std::optional<int64_t> warmupSteps, decaySteps;
  std::optional<double> minLr;
  /// --sparse-updates: dense or lazy.
  std::string sparseUpdates;
  /// --strategy: single, data-parallel or parameter-server; --bucket-bytes.
  std::string strategy;
  std::optional<int64_t> bucketBytes;
  /// parameter-server: --partitioner (none, fixed-shards:N,
  /// min-shard-bytes:B[,max-shards:M], max-shard-bytes:B[,max-shards:M]),
  /// --hash-embeddings (comma-separated variables), --row-split (div, mod).
  std::string partitioner, hashEmbeddings, rowSplit;
  /// --remat (none, auto, sqrt, all) and --memory-budget (bytes; alone it
  /// means --remat=auto).
  std::string remat;
  std::optional<int64_t> memoryBudget;

  /// Whether any flag names the loss to add.
  bool addsLoss() const {
    return !loss.empty() || !output.empty() || !label.empty() || classAxis || ignoreIndex ||
           labelSmoothing || classProbabilities || !classWeights.empty() ||
           !posWeights.empty();
  }
  /// Whether any flag changes a train spec's optimizer or batch.
  bool overridesSpec() const {
    return !optimizer.empty() || learningRate || batchSize || accumulateSteps ||
           momentum || weightDecay || clipNorm || nesterov || !schedule.empty() ||
           warmupSteps || decaySteps || minLr || !sparseUpdates.empty() ||
           !strategy.empty() || bucketBytes || !partitioner.empty() ||
           !hashEmbeddings.empty() || !rowSplit.empty() || !remat.empty() || memoryBudget;
  }
};

/// A byte count as --memory-budget takes it: digits with an optional
/// suffix K, M or G (KiB, MiB, GiB), from 1 to 2^50; std::nullopt otherwise.
std::optional<int64_t> parseByteSize(llvm::StringRef text);

/// --partitioner's value: the kind and its numbers (0 where not given).
struct PartitionerFlag {
  graph::Partitioner::Kind kind = graph::Partitioner::NONE;
  /// fixed-shards:N; min-shard-bytes:B or max-shard-bytes:B; ,max-shards:M.
  int64_t numShards = 0, shardBytes = 0, maxShards = 0;
};

/// Parses --partitioner (none, fixed-shards:N, min-shard-bytes:B[,max-shards:M]
/// or max-shard-bytes:B[,max-shards:M]); on a malformed value, std::nullopt
/// and `error` says what was expected ("--partitioner=...: expected ...").
std::optional<PartitionerFlag> parsePartitionerFlag(llvm::StringRef text,
                                                    std::string &error);

/// The message for the first malformed value of --partitioner or
/// --row-split (not whether they apply: applyTrainOverrides checks that);
/// empty when both are well formed.
std::string checkParameterServerFlags(const TrainFlags &flags);

/// Writes the optimizer, its settings, the schedule, batch size,
/// accumulation steps, strategy and partitioner the flags set into `spec`;
/// other fields stay. Fails, with one error at `loc` naming the flag, on an
/// unknown name. (The spec importer then checks the values' ranges.)
mlir::LogicalResult applyTrainOverrides(const TrainFlags &flags,
                                        graph::TrainSpec &spec,
                                        mlir::Location loc);

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_GRAPH_TRAINFLAGS_H
