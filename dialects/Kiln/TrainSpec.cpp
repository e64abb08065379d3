//===- TrainSpec.cpp - The kiln.train_spec module attribute ---------------===//

#include "dialects/Kiln/TrainSpec.h"
#include "dialects/Kiln/KilnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <cmath>

using namespace mlir;

namespace kiln {
namespace {

enum class ValueKind { String, Int, Float, Bool, StringList, Dict };

/// One allowed key of a (nested) train spec dictionary.
struct KeySchema {
  llvm::StringLiteral name;
  ValueKind kind;
  /// Allowed values of a string key; empty = any string.
  ArrayRef<llvm::StringLiteral> choices = {};
  /// Keys of a nested dictionary.
  ArrayRef<KeySchema> nested = {};
};

constexpr llvm::StringLiteral kOptimizers[] = {"sgd", "momentum", "adam",
                                               "adamw", "adagrad"};
constexpr llvm::StringLiteral kSchedules[] = {"constant", "linear_warmup",
                                              "cosine_decay"};
constexpr llvm::StringLiteral kSparseUpdates[] = {"dense", "lazy"};
constexpr llvm::StringLiteral kPrecisions[] = {"fp32", "bf16_mixed",
                                               "fp16_mixed"};
constexpr llvm::StringLiteral kStrategies[] = {"single", "all_reduce",
                                               "parameter_server"};
constexpr llvm::StringLiteral kPartitioners[] = {"none", "fixed_shards",
                                                 "min_shard_bytes", "max_shard_bytes"};
constexpr llvm::StringLiteral kRowSplits[] = {"div", "mod"};
constexpr llvm::StringLiteral kSyncModes[] = {"sync", "async"};
constexpr llvm::StringLiteral kRematKinds[] = {"none", "memory_budget", "all", "sqrt"};

const KeySchema kScheduleKeys[] = {
    {"kind", ValueKind::String, kSchedules},
    {"warmup_steps", ValueKind::Int},
    {"decay_steps", ValueKind::Int},
    {"min_lr", ValueKind::Float},
};
const KeySchema kOptimizerKeys[] = {
    {"kind", ValueKind::String, kOptimizers},
    {"learning_rate", ValueKind::Float},
    {"momentum", ValueKind::Float},
    {"nesterov", ValueKind::Bool},
    {"beta1", ValueKind::Float},
    {"beta2", ValueKind::Float},
    {"epsilon", ValueKind::Float},
    {"weight_decay", ValueKind::Float},
    {"initial_accumulator", ValueKind::Float},
    {"clip_global_norm", ValueKind::Float},
    {"schedule", ValueKind::Dict, {}, kScheduleKeys},
    {"sparse_updates", ValueKind::String, kSparseUpdates},
};
const KeySchema kStrategyKeys[] = {
    {"kind", ValueKind::String, kStrategies},
    {"bucket_bytes", ValueKind::Int},
};
const KeySchema kPartitionerKeys[] = {
    {"kind", ValueKind::String, kPartitioners},
    {"num_shards", ValueKind::Int},
    {"min_shard_bytes", ValueKind::Int},
    {"max_shard_bytes", ValueKind::Int},
    {"max_shards", ValueKind::Int},
    {"row_split", ValueKind::String, kRowSplits},
    {"hash_embeddings", ValueKind::StringList},
};
const KeySchema kRematKeys[] = {
    {"kind", ValueKind::String, kRematKinds},
    {"memory_budget_bytes", ValueKind::Int},
};
const KeySchema kCheckpointKeys[] = {
    {"directory", ValueKind::String},
    {"every_steps", ValueKind::Int},
    {"keep_last", ValueKind::Int},
};
const KeySchema kTrainSpecKeys[] = {
    {"loss", ValueKind::String},
    {"label", ValueKind::String},
    {"optimizer", ValueKind::Dict, {}, kOptimizerKeys},
    {"batch_size", ValueKind::Int},
    {"accumulate_steps", ValueKind::Int},
    {"precision", ValueKind::String, kPrecisions},
    {"strategy", ValueKind::Dict, {}, kStrategyKeys},
    {"partitioner", ValueKind::Dict, {}, kPartitionerKeys},
    {"sync_mode", ValueKind::String, kSyncModes},
    {"remat", ValueKind::Dict, {}, kRematKeys},
    {"checkpoint", ValueKind::Dict, {}, kCheckpointKeys},
};

bool hasKind(Attribute value, ValueKind kind) {
  switch (kind) {
  case ValueKind::String:
    return llvm::isa<StringAttr>(value);
  case ValueKind::Int: {
    auto i = llvm::dyn_cast<IntegerAttr>(value);
    return i && i.getType().isSignlessInteger(64);
  }
  case ValueKind::Float:
    return llvm::isa<FloatAttr>(value);
  case ValueKind::Bool:
    return llvm::isa<BoolAttr>(value);
  case ValueKind::StringList: {
    auto list = llvm::dyn_cast<ArrayAttr>(value);
    return list && llvm::all_of(list, [](Attribute a) {
             return llvm::isa<StringAttr>(a);
           });
  }
  case ValueKind::Dict:
    return llvm::isa<DictionaryAttr>(value);
  }
  llvm_unreachable("unknown value kind");
}

StringRef kindName(ValueKind kind) {
  switch (kind) {
  case ValueKind::String:
    return "a string";
  case ValueKind::Int:
    return "an i64";
  case ValueKind::Float:
    return "a float";
  case ValueKind::Bool:
    return "a bool";
  case ValueKind::StringList:
    return "a list of strings";
  case ValueKind::Dict:
    return "a dictionary";
  }
  llvm_unreachable("unknown value kind");
}

LogicalResult verifyDict(Operation *op, DictionaryAttr dict,
                         ArrayRef<KeySchema> schema, const std::string &path) {
  for (NamedAttribute entry : dict) {
    std::string key = path + entry.getName().str();
    const KeySchema *match = llvm::find_if(
        schema, [&](const KeySchema &k) { return k.name == entry.getName(); });
    if (match == schema.end())
      return op->emitError("train spec has unknown key '") << key << "'";
    if (!hasKind(entry.getValue(), match->kind))
      return op->emitError("train spec key '")
             << key << "' must be " << kindName(match->kind) << ", got "
             << entry.getValue();
    // Every float of the spec is a rate, coefficient or norm: finite and
    // not negative (a learning rate positive), as the graph importer checks.
    if (match->kind == ValueKind::Float) {
      double value = llvm::cast<FloatAttr>(entry.getValue()).getValueAsDouble();
      bool rate = entry.getName() == "learning_rate";
      if (!std::isfinite(value) || value < 0 || (rate && value == 0))
        return op->emitError("train spec key '")
               << key << "' must be a finite number " << (rate ? "> 0" : ">= 0") << ", got "
               << value;
    }
    if (!match->choices.empty()) {
      StringRef value = llvm::cast<StringAttr>(entry.getValue()).getValue();
      if (!llvm::is_contained(match->choices, value)) {
        InFlightDiagnostic diag = op->emitError("train spec key '")
                                  << key << "' is '" << value
                                  << "', expected one of: ";
        llvm::interleaveComma(match->choices, diag);
        return diag;
      }
    }
    if (match->kind == ValueKind::Dict &&
        failed(verifyDict(op, llvm::cast<DictionaryAttr>(entry.getValue()),
                          match->nested, key + ".")))
      return failure();
  }
  return success();
}

} // namespace

LogicalResult verifyTrainSpec(ModuleOp module, Attribute spec) {
  auto dict = llvm::dyn_cast<DictionaryAttr>(spec);
  if (!dict)
    return module.emitError("'") << KilnDialect::kTrainSpecAttrName
                                 << "' must be a dictionary, got " << spec;
  if (failed(verifyDict(module, dict, kTrainSpecKeys, "")))
    return failure();
  auto loss = dict.getAs<StringAttr>("loss");
  if (!loss)
    return module.emitError("train spec needs a 'loss'");
  auto forward = module.lookupSymbol<func::FuncOp>("forward");
  if (!forward)
    return module.emitError("train spec needs a 'forward' function");
  for (unsigned i = 0, e = forward.getNumResults(); i < e; ++i)
    if (forward.getResultAttr(i, KilnDialect::kNameAttrName) == loss)
      return success();
  return module.emitError("train spec loss '")
         << loss.getValue() << "' is not an output of @forward";
}

namespace {

double number(mlir::DictionaryAttr dict, llvm::StringRef key, double fallback) {
  if (auto f = dict.getAs<mlir::FloatAttr>(key))
    return f.getValueAsDouble();
  if (auto i = dict.getAs<mlir::IntegerAttr>(key))
    return static_cast<double>(i.getInt());
  return fallback;
}

} // namespace

OptimizerSettings OptimizerSettings::from(mlir::DictionaryAttr dict) {
  OptimizerSettings spec;
  if (!dict)
    return spec;
  if (auto kind = dict.getAs<mlir::StringAttr>("kind"))
    spec.kind = kind.str();
  spec.lr = number(dict, "learning_rate", spec.lr);
  spec.momentum = number(dict, "momentum", spec.momentum);
  spec.beta1 = number(dict, "beta1", spec.beta1);
  spec.beta2 = number(dict, "beta2", spec.beta2);
  spec.epsilon = number(dict, "epsilon", spec.epsilon);
  spec.weightDecay = number(dict, "weight_decay", spec.weightDecay);
  spec.initialAccumulator = number(dict, "initial_accumulator", spec.initialAccumulator);
  spec.clipGlobalNorm = number(dict, "clip_global_norm", spec.clipGlobalNorm);
  if (auto nesterov = dict.getAs<mlir::BoolAttr>("nesterov"))
    spec.nesterov = nesterov.getValue();
  if (auto updates = dict.getAs<mlir::StringAttr>("sparse_updates"))
    spec.lazySparse = updates.getValue() == "lazy";
  if (auto schedule = dict.getAs<mlir::DictionaryAttr>("schedule")) {
    if (auto kind = schedule.getAs<mlir::StringAttr>("kind"))
      spec.schedule = kind.str();
    spec.warmupSteps = static_cast<int64_t>(number(schedule, "warmup_steps", 0));
    spec.decaySteps = static_cast<int64_t>(number(schedule, "decay_steps", 0));
    spec.minLr = number(schedule, "min_lr", 0.0);
  }
  return spec;
}

bool trainsWithParameterServers(mlir::ModuleOp module) {
  auto spec = module->getAttrOfType<mlir::DictionaryAttr>(KilnDialect::kTrainSpecAttrName);
  auto strategy = spec ? spec.getAs<mlir::DictionaryAttr>("strategy") : mlir::DictionaryAttr();
  auto kind = strategy ? strategy.getAs<mlir::StringAttr>("kind") : mlir::StringAttr();
  return kind && kind.getValue() == "parameter_server";
}

llvm::StringRef trainSpecPrecision(mlir::ModuleOp module) {
  auto spec = module->getAttrOfType<mlir::DictionaryAttr>(KilnDialect::kTrainSpecAttrName);
  auto value = spec ? spec.getAs<mlir::StringAttr>("precision") : mlir::StringAttr();
  return value ? value.getValue() : llvm::StringRef("fp32");
}

llvm::StringRef trainSpecLoss(mlir::ModuleOp module) {
  auto spec = module->getAttrOfType<mlir::DictionaryAttr>(KilnDialect::kTrainSpecAttrName);
  auto value = spec ? spec.getAs<mlir::StringAttr>("loss") : mlir::StringAttr();
  return value ? value.getValue() : llvm::StringRef();
}

RematSettings RematSettings::of(mlir::ModuleOp module) {
  RematSettings settings;
  auto spec = module->getAttrOfType<mlir::DictionaryAttr>(KilnDialect::kTrainSpecAttrName);
  auto remat = spec ? spec.getAs<mlir::DictionaryAttr>("remat") : mlir::DictionaryAttr();
  if (!remat)
    return settings;
  if (auto kind = remat.getAs<mlir::StringAttr>("kind"))
    settings.policy = kind.getValue() == "memory_budget" ? "auto" : kind.str();
  if (auto bytes = remat.getAs<mlir::IntegerAttr>("memory_budget_bytes"))
    settings.budgetBytes = bytes.getInt();
  return settings;
}

} // namespace kiln
