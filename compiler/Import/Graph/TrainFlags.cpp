//===- TrainFlags.cpp - kilnc's --train flags -----------------------------===//

#include "compiler/Import/Graph/TrainFlags.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;

namespace kiln {

namespace {

/// "B" or "B,max-shards:M" after a size partitioner's name: the size and the
/// shard limit (0 when not given).
bool parseSizeAndLimit(StringRef text, int64_t &size, int64_t &maxShards) {
  auto [sizeText, rest] = text.split(',');
  maxShards = 0;
  if (sizeText.getAsInteger(10, size) || size < 1)
    return false;
  if (rest.empty())
    return true;
  return rest.consume_front("max-shards:") && !rest.getAsInteger(10, maxShards) &&
         maxShards >= 1;
}

LogicalResult applyPartitionerFlags(const TrainFlags &flags, graph::TrainSpec &spec,
                                    Location loc) {
  bool given = !flags.partitioner.empty() || !flags.hashEmbeddings.empty() ||
               !flags.rowSplit.empty();
  if (!given)
    return success();
  if (spec.strategy().kind() != graph::Strategy::PARAMETER_SERVER)
    return emitError(loc) << "--partitioner, --hash-embeddings and --row-split apply to "
                             "--strategy=parameter-server only";
  if (std::string error = checkParameterServerFlags(flags); !error.empty())
    return emitError(loc) << error;
  // A spec without a partitioner gets the parameter-server default before
  // the flags change parts of it.
  if (!spec.has_partitioner())
    spec.mutable_partitioner()->set_kind(graph::Partitioner::MIN_MAX_SHARD_SIZE);
  graph::Partitioner &partitioner = *spec.mutable_partitioner();
  if (!flags.partitioner.empty()) {
    std::string unused; // Well formed: checked above.
    PartitionerFlag parsed = *parsePartitionerFlag(flags.partitioner, unused);
    partitioner.set_kind(parsed.kind);
    partitioner.set_num_shards(parsed.numShards);
    if (parsed.kind == graph::Partitioner::MIN_MAX_SHARD_SIZE)
      partitioner.set_min_shard_bytes(parsed.shardBytes);
    if (parsed.kind == graph::Partitioner::MAX_SHARD_SIZE)
      partitioner.set_max_shard_bytes(parsed.shardBytes);
    partitioner.set_max_shards(parsed.maxShards);
  }
  if (!flags.hashEmbeddings.empty()) {
    partitioner.clear_hash_embeddings();
    SmallVector<StringRef> names;
    if (flags.hashEmbeddings != "none")
      StringRef(flags.hashEmbeddings).split(names, ',', -1, /*KeepEmpty=*/false);
    for (StringRef name : names)
      partitioner.add_hash_embeddings(name.trim().str());
  }
  if (!flags.rowSplit.empty())
    partitioner.set_row_split(flags.rowSplit == "mod" ? graph::Partitioner::MOD
                                                      : graph::Partitioner::DIV);
  return success();
}

} // namespace

std::optional<PartitionerFlag> parsePartitionerFlag(StringRef text, std::string &error) {
  PartitionerFlag flag;
  StringRef rest = text;
  if (rest == "none")
    return flag;
  if (rest.consume_front("fixed-shards:")) {
    if (!rest.getAsInteger(10, flag.numShards) && flag.numShards >= 1) {
      flag.kind = graph::Partitioner::FIXED_SHARDS;
      return flag;
    }
    error = ("--partitioner=" + text + ": expected fixed-shards:N with N >= 1").str();
    return std::nullopt;
  }
  for (auto [prefix, kind] :
       {std::pair{"min-shard-bytes", graph::Partitioner::MIN_MAX_SHARD_SIZE},
        std::pair{"max-shard-bytes", graph::Partitioner::MAX_SHARD_SIZE}}) {
    if (!rest.consume_front(prefix))
      continue;
    if (rest.consume_front(":") && parseSizeAndLimit(rest, flag.shardBytes, flag.maxShards)) {
      flag.kind = kind;
      return flag;
    }
    error = ("--partitioner=" + text + ": expected " + prefix +
             ":B[,max-shards:M] with B bytes >= 1 and M >= 1")
                .str();
    return std::nullopt;
  }
  error = ("--partitioner=" + text +
           ": expected none, fixed-shards:N, min-shard-bytes:B[,max-shards:M] or "
           "max-shard-bytes:B[,max-shards:M]")
              .str();
  return std::nullopt;
}

std::optional<int64_t> parseByteSize(StringRef text) {
  int shift = 0;
  if (text.consume_back("K") || text.consume_back("KiB"))
    shift = 10;
  else if (text.consume_back("M") || text.consume_back("MiB"))
    shift = 20;
  else if (text.consume_back("G") || text.consume_back("GiB"))
    shift = 30;
  uint64_t value = 0;
  constexpr uint64_t kLimit = uint64_t(1) << 50;
  if (text.empty() || !llvm::all_of(text, llvm::isDigit) || text.getAsInteger(10, value) ||
      value == 0 || value > (kLimit >> shift))
    return std::nullopt;
  return int64_t(value << shift);
}

std::string checkParameterServerFlags(const TrainFlags &flags) {
  std::string error;
  if (!flags.partitioner.empty() && !parsePartitionerFlag(flags.partitioner, error))
    return error;
  if (!flags.rowSplit.empty() && flags.rowSplit != "div" && flags.rowSplit != "mod")
    return "--row-split=" + flags.rowSplit + ": expected div or mod";
  return "";
}

namespace {

/// --remat and --memory-budget into the spec's remat policy.
LogicalResult applyRematFlags(const TrainFlags &flags, graph::TrainSpec &spec, Location loc) {
  graph::RematPolicy &remat = *spec.mutable_remat();
  if (!flags.remat.empty()) {
    std::optional<graph::RematPolicy::Kind> kind =
        llvm::StringSwitch<std::optional<graph::RematPolicy::Kind>>(flags.remat)
            .Case("none", graph::RematPolicy::NONE)
            .Case("auto", graph::RematPolicy::MEMORY_BUDGET)
            .Case("sqrt", graph::RematPolicy::SQRT)
            .Case("all", graph::RematPolicy::ALL)
            .Default(std::nullopt);
    if (!kind)
      return emitError(loc) << "--remat=" << flags.remat << ": expected none, auto, sqrt or all";
    remat.set_kind(*kind);
  } else if (flags.memoryBudget) {
    remat.set_kind(graph::RematPolicy::MEMORY_BUDGET);
  }
  if (flags.memoryBudget) {
    if (remat.kind() != graph::RematPolicy::MEMORY_BUDGET)
      return emitError(loc) << "--memory-budget applies to --remat=auto only (the default "
                               "when a budget is given), not --remat="
                            << flags.remat;
    remat.set_memory_budget_bytes(*flags.memoryBudget);
  }
  if (remat.kind() == graph::RematPolicy::MEMORY_BUDGET && remat.memory_budget_bytes() <= 0)
    return emitError(loc) << "--remat=auto needs a budget: --memory-budget=BYTES";
  return success();
}

} // namespace

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
    std::optional<graph::Strategy::Kind> kind =
        llvm::StringSwitch<std::optional<graph::Strategy::Kind>>(flags.strategy)
            .Case("single", graph::Strategy::SINGLE)
            .Case("data-parallel", graph::Strategy::ALL_REDUCE)
            .Case("parameter-server", graph::Strategy::PARAMETER_SERVER)
            .Default(std::nullopt);
    if (!kind)
      return emitError(loc) << "--strategy=" << flags.strategy
                            << ": expected single, data-parallel or parameter-server";
    strategy.set_kind(*kind);
  }
  if (failed(applyPartitionerFlags(flags, spec, loc)))
    return failure();
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
  if (failed(applyRematFlags(flags, spec, loc)))
    return failure();
  if (flags.batchSize)
    spec.set_batch_size(*flags.batchSize);
  if (flags.accumulateSteps)
    spec.set_accumulate_steps(*flags.accumulateSteps);
  return success();
}

} // namespace kiln
