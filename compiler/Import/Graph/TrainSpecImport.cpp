//===- TrainSpecImport.cpp - TrainSpec → kiln.train_spec ------------------===//

#include "compiler/Import/Graph/TrainSpecImport.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"

#include <cmath>
#include <cstdio>

using namespace mlir;

namespace kiln {
namespace {

/// A number as a user wrote it ("0.001", not "1.000000e-03").
std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

/// Builds the dictionary and reports errors at one location.
class SpecBuilder {
public:
  SpecBuilder(const graph::TrainSpec &spec, const TrainSpecNames &names,
              Location loc)
      : spec(spec), names(names), loc(loc), b(loc.getContext()) {}

  FailureOr<DictionaryAttr> build();

private:
  FailureOr<DictionaryAttr> optimizer(const graph::Optimizer &opt);
  FailureOr<DictionaryAttr> schedule(const graph::LearningRateSchedule &s);
  FailureOr<DictionaryAttr> strategy(const graph::Strategy &s);
  FailureOr<DictionaryAttr> partitioner(const graph::Partitioner &p);
  FailureOr<DictionaryAttr> remat(const graph::RematPolicy &r);
  FailureOr<DictionaryAttr> checkpoint(const graph::CheckpointPolicy &c);

  InFlightDiagnostic error(StringRef field) {
    return emitError(loc) << "train." << field << " ";
  }
  /// Fails unless `value` is >= 0 (or > 0 when `positive`).
  LogicalResult checkCount(StringRef field, int64_t value, bool positive = false) {
    if (value < 0 || (positive && value == 0))
      return error(field) << "must be " << (positive ? "> 0" : ">= 0")
                          << ", got " << value;
    return success();
  }

  /// The name of an enum value; fails on values this version does not know
  /// (binary files may carry any number in an enum field).
  FailureOr<StringRef> pick(StringRef field, int value,
                            ArrayRef<const char *> names) {
    if (value < 0 || static_cast<size_t>(value) >= names.size())
      return error(field) << "has unknown value " << value;
    return StringRef(names[value]);
  }

  NamedAttribute str(StringRef key, StringRef value) {
    return b.getNamedAttr(key, b.getStringAttr(value));
  }
  NamedAttribute i64(StringRef key, int64_t value) {
    return b.getNamedAttr(key, b.getI64IntegerAttr(value));
  }
  NamedAttribute f64(StringRef key, double value) {
    return b.getNamedAttr(key, b.getF64FloatAttr(value));
  }
  NamedAttribute dict(StringRef key, DictionaryAttr value) {
    return b.getNamedAttr(key, value);
  }

  const graph::TrainSpec &spec;
  const TrainSpecNames &names;
  Location loc;
  Builder b;
};

FailureOr<DictionaryAttr> SpecBuilder::schedule(const graph::LearningRateSchedule &s) {
  if (failed(checkCount("optimizer.schedule.warmup_steps", s.warmup_steps())) ||
      failed(checkCount("optimizer.schedule.decay_steps", s.decay_steps())))
    return failure();
  if (s.kind() == graph::LearningRateSchedule::COSINE_DECAY &&
      s.decay_steps() <= s.warmup_steps())
    return error("optimizer.schedule.decay_steps")
           << "(" << s.decay_steps() << ") must exceed warmup_steps ("
           << s.warmup_steps() << ") for cosine decay";
  if (s.kind() == graph::LearningRateSchedule::LINEAR_WARMUP &&
      s.warmup_steps() == 0)
    return error("optimizer.schedule.warmup_steps")
           << "must be > 0 for a linear warm-up";
  if (!(s.min_lr() >= 0) || !std::isfinite(s.min_lr()))
    return error("optimizer.schedule.min_lr")
           << "must be a finite number >= 0, got " << number(s.min_lr());
  FailureOr<StringRef> kind = pick("optimizer.schedule.kind", s.kind(),
                                  {"constant", "linear_warmup", "cosine_decay"});
  if (failed(kind))
    return failure();
  return b.getDictionaryAttr({str("kind", *kind),
                              i64("warmup_steps", s.warmup_steps()),
                              i64("decay_steps", s.decay_steps()),
                              f64("min_lr", s.min_lr())});
}

FailureOr<DictionaryAttr> SpecBuilder::optimizer(const graph::Optimizer &opt) {
  using K = graph::Optimizer;
  // Defaults follow PyTorch's optimizers.
  double defaultLr = (opt.kind() == K::ADAM || opt.kind() == K::ADAMW) ? 1e-3 : 1e-2;
  double lr = opt.has_learning_rate() ? opt.learning_rate() : defaultLr;
  // NaN fails every comparison: each check asks for the good range.
  if (!(lr > 0) || !std::isfinite(lr))
    return error("optimizer.learning_rate") << "must be a finite number > 0, got " << number(lr);
  if (!(opt.clip_global_norm() >= 0) || !std::isfinite(opt.clip_global_norm()))
    return error("optimizer.clip_global_norm")
           << "must be a finite number >= 0, got " << number(opt.clip_global_norm());
  FailureOr<DictionaryAttr> sched = schedule(opt.schedule());
  if (failed(sched))
    return failure();
  FailureOr<StringRef> kind =
      pick("optimizer.kind", opt.kind(),
           {"sgd", "momentum", "adam", "adamw", "adagrad"});
  FailureOr<StringRef> sparseUpdates =
      pick("optimizer.sparse_updates", opt.sparse_updates(), {"dense", "lazy"});
  if (failed(kind) || failed(sparseUpdates))
    return failure();
  SmallVector<NamedAttribute> entries = {
      str("kind", *kind), f64("learning_rate", lr),
      f64("clip_global_norm", opt.clip_global_norm()), dict("schedule", *sched),
      str("sparse_updates", *sparseUpdates)};
  auto inRange = [&](StringRef field, double value, double lo, double hi,
                     bool closedHi) -> LogicalResult {
    if (!(value >= lo && value <= hi) || (!closedHi && value == hi))
      return error(field) << "must be in [" << number(lo) << ", " << number(hi)
                          << (closedHi ? "]" : ")") << ", got " << number(value);
    return success();
  };
  switch (opt.kind()) {
  case K::SGD:
    break;
  case K::MOMENTUM: {
    double momentum = opt.has_momentum() ? opt.momentum() : 0.9;
    if (failed(inRange("optimizer.momentum", momentum, 0, 1, false)))
      return failure();
    entries.push_back(f64("momentum", momentum));
    entries.push_back(b.getNamedAttr("nesterov", b.getBoolAttr(opt.nesterov())));
    break;
  }
  case K::ADAM:
  case K::ADAMW: {
    double beta1 = opt.has_beta1() ? opt.beta1() : 0.9;
    double beta2 = opt.has_beta2() ? opt.beta2() : 0.999;
    double epsilon = opt.has_epsilon() ? opt.epsilon() : 1e-8;
    if (failed(inRange("optimizer.beta1", beta1, 0, 1, false)) ||
        failed(inRange("optimizer.beta2", beta2, 0, 1, false)))
      return failure();
    if (!(epsilon > 0) || !std::isfinite(epsilon))
      return error("optimizer.epsilon")
             << "must be a finite number > 0, got " << number(epsilon);
    entries.append({f64("beta1", beta1), f64("beta2", beta2),
                    f64("epsilon", epsilon)});
    if (opt.kind() == K::ADAMW) {
      double decay = opt.has_weight_decay() ? opt.weight_decay() : 1e-2;
      if (!(decay >= 0) || !std::isfinite(decay))
        return error("optimizer.weight_decay")
               << "must be a finite number >= 0, got " << number(decay);
      entries.push_back(f64("weight_decay", decay));
    }
    break;
  }
  case K::ADAGRAD: {
    double epsilon = opt.has_epsilon() ? opt.epsilon() : 1e-10;
    double initial = opt.has_initial_accumulator() ? opt.initial_accumulator() : 0.0;
    if (!(epsilon > 0) || !std::isfinite(epsilon))
      return error("optimizer.epsilon")
             << "must be a finite number > 0, got " << number(epsilon);
    if (!(initial >= 0) || !std::isfinite(initial))
      return error("optimizer.initial_accumulator")
             << "must be a finite number >= 0, got " << number(initial);
    entries.append({f64("epsilon", epsilon), f64("initial_accumulator", initial)});
    break;
  }
  default:
    break;
  }
  return b.getDictionaryAttr(entries);
}

FailureOr<DictionaryAttr> SpecBuilder::strategy(const graph::Strategy &s) {
  if (failed(checkCount("strategy.bucket_bytes", s.bucket_bytes())))
    return failure();
  FailureOr<StringRef> kind = pick("strategy.kind", s.kind(),
                                  {"single", "all_reduce", "parameter_server"});
  if (failed(kind))
    return failure();
  int64_t bucket = s.bucket_bytes() ? s.bucket_bytes() : int64_t(25) << 20;
  return b.getDictionaryAttr({str("kind", *kind), i64("bucket_bytes", bucket)});
}

FailureOr<DictionaryAttr> SpecBuilder::partitioner(const graph::Partitioner &p) {
  if (failed(checkCount("partitioner.num_shards", p.num_shards())) ||
      failed(checkCount("partitioner.min_shard_bytes", p.min_shard_bytes())) ||
      failed(checkCount("partitioner.max_shard_bytes", p.max_shard_bytes())) ||
      failed(checkCount("partitioner.max_shards", p.max_shards())))
    return failure();
  if (p.kind() == graph::Partitioner::FIXED_SHARDS && p.num_shards() == 0)
    return error("partitioner.num_shards") << "must be > 0 for fixed shards";
  if (p.kind() == graph::Partitioner::MAX_SHARD_SIZE && p.max_shard_bytes() == 0)
    return error("partitioner.max_shard_bytes") << "must be > 0 for a maximum shard size";
  SmallVector<Attribute> tables;
  for (const std::string &name : p.hash_embeddings()) {
    if (!names.isVariable(name))
      return error("partitioner.hash_embeddings")
             << "names '" << name << "', which is not a variable";
    tables.push_back(b.getStringAttr(name));
  }
  FailureOr<StringRef> kind =
      pick("partitioner.kind", p.kind(),
           {"none", "fixed_shards", "min_shard_bytes", "max_shard_bytes"});
  FailureOr<StringRef> split = pick("partitioner.row_split", p.row_split(), {"div", "mod"});
  if (failed(kind) || failed(split))
    return failure();
  return b.getDictionaryAttr(
      {str("kind", *kind), i64("num_shards", std::max<int64_t>(p.num_shards(), 1)),
       i64("min_shard_bytes", p.min_shard_bytes() ? p.min_shard_bytes() : int64_t(256) << 10),
       i64("max_shard_bytes", p.max_shard_bytes()), i64("max_shards", p.max_shards()),
       str("row_split", *split),
       b.getNamedAttr("hash_embeddings", b.getArrayAttr(tables))});
}

FailureOr<DictionaryAttr> SpecBuilder::remat(const graph::RematPolicy &r) {
  if (failed(checkCount("remat.memory_budget_bytes", r.memory_budget_bytes())))
    return failure();
  if (r.kind() == graph::RematPolicy::MEMORY_BUDGET && r.memory_budget_bytes() == 0)
    return error("remat.memory_budget_bytes") << "must be > 0 for a memory budget";
  FailureOr<StringRef> kind =
      pick("remat.kind", r.kind(), {"none", "memory_budget", "all", "sqrt"});
  if (failed(kind))
    return failure();
  return b.getDictionaryAttr({str("kind", *kind),
                              i64("memory_budget_bytes", r.memory_budget_bytes())});
}

FailureOr<DictionaryAttr> SpecBuilder::checkpoint(const graph::CheckpointPolicy &c) {
  if (failed(checkCount("checkpoint.every_steps", c.every_steps())) ||
      failed(checkCount("checkpoint.keep_last", c.keep_last())))
    return failure();
  return b.getDictionaryAttr({str("directory", c.directory()),
                              i64("every_steps", c.every_steps()),
                              i64("keep_last", c.keep_last() ? c.keep_last() : 5)});
}

FailureOr<DictionaryAttr> SpecBuilder::build() {
  if (spec.loss().empty())
    return error("loss") << "is missing: name the node whose output is minimized";
  if (!names.isLossCandidate(spec.loss()))
    return error("loss") << "names '" << spec.loss() << "', which is not a node";
  if (!spec.label().empty() && !names.isInput(spec.label()))
    return error("label") << "names '" << spec.label()
                          << "', which is not an input";
  if (failed(checkCount("batch_size", spec.batch_size())) ||
      failed(checkCount("accumulate_steps", spec.accumulate_steps())))
    return failure();
  int64_t batch = spec.batch_size() ? spec.batch_size() : names.defaultBatch;
  // The graph is static: a step takes exactly the batch its inputs have.
  if (spec.batch_size() && names.defaultBatch && spec.batch_size() != names.defaultBatch)
    return error("batch_size") << "is " << spec.batch_size()
                               << ", but the model's inputs have batch "
                               << names.defaultBatch << " (their dimension 0)";

  FailureOr<DictionaryAttr> opt = optimizer(spec.optimizer());
  if (failed(opt))
    return failure();
  FailureOr<DictionaryAttr> strat = strategy(spec.strategy());
  if (failed(strat))
    return failure();
  // Parameter servers without a partitioner: TensorFlow's MinSizePartitioner
  // (256 KiB shards), as many shards as there are servers.
  graph::Partitioner defaultPartitioner;
  if (spec.strategy().kind() == graph::Strategy::PARAMETER_SERVER && !spec.has_partitioner())
    defaultPartitioner.set_kind(graph::Partitioner::MIN_MAX_SHARD_SIZE);
  FailureOr<DictionaryAttr> part =
      partitioner(spec.has_partitioner() ? spec.partitioner() : defaultPartitioner);
  if (failed(part))
    return failure();
  FailureOr<DictionaryAttr> rem = remat(spec.remat());
  if (failed(rem))
    return failure();
  FailureOr<DictionaryAttr> ckpt = checkpoint(spec.checkpoint());
  if (failed(ckpt))
    return failure();
  FailureOr<StringRef> precision = pick("precision", spec.precision(),
                                       {"fp32", "bf16_mixed", "fp16_mixed"});
  if (failed(precision))
    return failure();
  FailureOr<StringRef> syncMode =
      pick("sync_mode", spec.sync_mode(), {"sync", "async"});
  if (failed(syncMode))
    return failure();
  SmallVector<NamedAttribute> entries = {
      str("loss", spec.loss()),
      dict("optimizer", *opt),
      i64("batch_size", batch),
      i64("accumulate_steps", std::max<int64_t>(spec.accumulate_steps(), 1)),
      str("precision", *precision),
      dict("strategy", *strat),
      dict("partitioner", *part),
      str("sync_mode", *syncMode),
      dict("remat", *rem),
      dict("checkpoint", *ckpt)};
  if (!spec.label().empty())
    entries.push_back(str("label", spec.label()));
  return b.getDictionaryAttr(entries);
}

} // namespace

FailureOr<DictionaryAttr> importTrainSpec(const graph::TrainSpec &spec,
                                          const TrainSpecNames &names,
                                          Location loc) {
  return SpecBuilder(spec, names, loc).build();
}

TrainSpecNames graphTrainSpecNames(const graph::GraphDef &graph) {
  TrainSpecNames names;
  names.isLossCandidate = [&graph](const std::string &name) {
    return llvm::any_of(graph.nodes(),
                        [&](const graph::Node &n) { return n.name() == name; });
  };
  names.isInput = [&graph](const std::string &name) {
    return llvm::any_of(graph.inputs(),
                        [&](const graph::Input &i) { return i.name() == name; });
  };
  names.isVariable = [&graph](const std::string &name) {
    return llvm::any_of(graph.variables(), [&](const graph::Variable &v) {
      return v.name() == name;
    });
  };
  if (graph.inputs_size() > 0 && graph.inputs(0).shape_size() > 0)
    names.defaultBatch = graph.inputs(0).shape(0);
  return names;
}

} // namespace kiln
