//===- InsertParameterServerOps.cpp - The kiln-insert-ps-ops pass ---------===//
//
// Parameter-server training: the trainable variables live on the servers;
// every function pulls what it reads and @train_step pushes its gradients,
// which the servers apply. See Passes.td for the rules and the placement
// attribute.
//
//===----------------------------------------------------------------------===//

#include "passes/Distribute/Passes.h"

#include "dialects/Dist/KDistOps.h"
#include "dialects/Kiln/KilnOps.h"
#include "dialects/Kiln/TrainSpec.h"
#include "passes/Graph/GradientBuilder.h"
#include "passes/Graph/GradientRules.h"
#include "passes/Graph/LossScaling.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringSet.h"

namespace kiln {
#define GEN_PASS_DEF_KILNINSERTPSOPS
#include "passes/Distribute/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// The train spec's `partitioner` dictionary, with the importer's defaults.
struct PartitionerSpec {
  std::string kind = "none", rowSplit = "div";
  int64_t numShards = 1, minShardBytes = 256 << 10, maxShardBytes = 0, maxShards = 0;
  llvm::StringSet<> hashTables;

  static PartitionerSpec from(DictionaryAttr dict);
};

PartitionerSpec PartitionerSpec::from(DictionaryAttr dict) {
  PartitionerSpec spec;
  if (!dict)
    return spec;
  auto text = [&](StringRef key, std::string &out) {
    if (auto value = dict.getAs<StringAttr>(key))
      out = value.str();
  };
  auto number = [&](StringRef key, int64_t &out) {
    if (auto value = dict.getAs<IntegerAttr>(key))
      out = value.getInt();
  };
  text("kind", spec.kind);
  text("row_split", spec.rowSplit);
  number("num_shards", spec.numShards);
  number("min_shard_bytes", spec.minShardBytes);
  number("max_shard_bytes", spec.maxShardBytes);
  number("max_shards", spec.maxShards);
  if (auto tables = dict.getAs<ArrayAttr>("hash_embeddings"))
    for (auto name : tables.getAsRange<StringAttr>())
      spec.hashTables.insert(name.getValue());
  return spec;
}

/// How a variable on the servers is read.
enum class Access { Dense, Table, Hash };

/// Whether `use` is the table operand of an axis-0 gather or of an
/// embedding bag: a read of rows by id.
bool isRowLookup(OpOperand &use) {
  if (use.getOperandNumber() != 0)
    return false;
  if (auto gather = llvm::dyn_cast<GatherOp>(use.getOwner()))
    return gather.getAxis() == 0;
  return llvm::isa<EmbeddingBagOp>(use.getOwner());
}

/// The point right after `value` exists.
void setInsertionAfter(OpBuilder &builder, Value value) {
  if (Operation *op = value.getDefiningOp())
    builder.setInsertionPointAfter(op);
  else
    builder.setInsertionPointToStart(value.getParentBlock());
}

class ParameterServerInsertion {
public:
  ParameterServerInsertion(ModuleOp module, func::FuncOp train, PartitionerSpec partitioner)
      : module(module), train(train), partitioner(std::move(partitioner)) {}

  LogicalResult run();

private:
  /// Chooses how `variable` is read (a table when every read, in any
  /// function, is only gathered by rows); fails on a hash table that is not.
  FailureOr<Access> classify(VariableOp variable);
  /// Checks the partitioner against `variable` and sets its kdist.placement.
  LogicalResult place(VariableOp variable, Access access);
  /// Replaces reads of the server variables in `func` by pulls.
  void insertPulls(func::FuncOp func);
  /// Turns @train_step's gradient results into pushes.
  LogicalResult insertPushes();
  /// fp16: checks the gradients @train_step returns (pushed times the loss
  /// scale) and moves the scale; appends the step's loss-scaling outputs to
  /// `results`.
  LogicalResult checkScaledGradients(func::ReturnOp ret, SmallVectorImpl<Value> &results,
                                     SmallVectorImpl<DictionaryAttr> &resultAttrs);

  ModuleOp module;
  func::FuncOp train;
  PartitionerSpec partitioner;
  /// The variables on the servers and how each is read.
  llvm::MapVector<StringRef, Access> remote;
};

FailureOr<Access> ParameterServerInsertion::classify(VariableOp variable) {
  Operation *other = nullptr;
  bool gathered = false;
  module.walk([&](ReadOp read) {
    if (read.getVariable() != variable.getSymName())
      return;
    for (OpOperand &use : read->getUses()) {
      bool rows = isRowLookup(use);
      gathered |= rows;
      if (!rows && !other)
        other = use.getOwner();
    }
  });
  bool table = variable.getTensorType().getRank() >= 1 && gathered && !other;
  if (!partitioner.hashTables.contains(variable.getSymName()))
    return table ? Access::Table : Access::Dense;
  if (other)
    return other->emitError("hash embedding @")
           << variable.getSymName() << " is read by '" << other->getName()
           << "': only row gathers (kiln.gather axis 0) and kiln.embedding_bag can read a "
              "hash table";
  RankedTensorType type = variable.getTensorType();
  if (type.getRank() != 2)
    return variable.emitOpError("is a hash embedding of type ")
           << type << ": hash tables are [rows, width]";
  return Access::Hash;
}

LogicalResult ParameterServerInsertion::place(VariableOp variable, Access access) {
  RankedTensorType type = variable.getTensorType();
  Builder b(module.getContext());
  StringRef kind = access == Access::Hash    ? "hash"
                   : access == Access::Table ? "table"
                                             : "dense";
  // A scalar has no rows to split: it is one shard, whatever the partitioner.
  StringRef split = type.getRank() == 0 ? "none" : StringRef(partitioner.kind);
  SmallVector<NamedAttribute> entries = {b.getNamedAttr("kind", b.getStringAttr(kind)),
                                         b.getNamedAttr("partitioner", b.getStringAttr(split))};
  auto number = [&](StringRef key, int64_t value) {
    entries.push_back(b.getNamedAttr(key, b.getI64IntegerAttr(value)));
  };
  // As TensorFlow's FixedShardsPartitioner: never more shards than rows.
  if (split == "fixed_shards")
    number("num_shards", std::min(partitioner.numShards, type.getDimSize(0)));
  if (split == "min_shard_bytes")
    number("min_shard_bytes", partitioner.minShardBytes);
  if (split == "max_shard_bytes")
    number("max_shard_bytes", partitioner.maxShardBytes);
  if (split == "min_shard_bytes" || split == "max_shard_bytes")
    number("max_shards", partitioner.maxShards);
  if (access == Access::Table)
    entries.push_back(b.getNamedAttr("row_split", b.getStringAttr(partitioner.rowSplit)));
  variable->setAttr(dist::kPlacementAttr, b.getDictionaryAttr(entries));
  return success();
}

void ParameterServerInsertion::insertPulls(func::FuncOp func) {
  SmallVector<ReadOp> reads;
  func.walk([&](ReadOp read) {
    if (remote.count(read.getVariable()))
      reads.push_back(read);
  });
  llvm::DenseMap<StringRef, Value> pulled;
  Block &entry = func.getBody().front();
  // Every pull goes as early as its operands allow: whole variables and
  // rows at the function's ids at the top, in one run the runtime sends as
  // one request per server; rows at computed ids right after them.
  Operation *lastAtTop = nullptr;
  auto placeAtTop = [&](OpBuilder &builder) {
    if (lastAtTop)
      builder.setInsertionPointAfter(lastAtTop);
    else
      builder.setInsertionPointToStart(&entry);
  };
  for (ReadOp read : reads) {
    auto symbol = FlatSymbolRefAttr::get(read.getContext(), read.getVariable());
    if (remote.lookup(read.getVariable()) != Access::Dense) {
      // Every use is a row lookup (classify): each pulls its rows. A bag
      // combines the pulled rows where it stood (the servers give padding
      // ids zero rows).
      for (OpOperand &use : llvm::make_early_inc_range(read->getUses())) {
        Operation *lookup = use.getOwner();
        auto bag = llvm::dyn_cast<EmbeddingBagOp>(lookup);
        Value ids = lookup->getOperand(1);
        Type rowsType = lookup->getResult(0).getType();
        if (bag) {
          auto idsType = llvm::cast<RankedTensorType>(ids.getType());
          SmallVector<int64_t> shape(idsType.getShape());
          llvm::append_range(shape, read.getType().getShape().drop_front());
          rowsType = RankedTensorType::get(shape, read.getType().getElementType());
        }
        Operation *idsOp = ids.getDefiningOp();
        OpBuilder builder(lookup);
        bool atTop = !idsOp && llvm::cast<BlockArgument>(ids).getOwner() == &entry;
        if (atTop)
          placeAtTop(builder);
        else if (idsOp && idsOp->getBlock() == &entry)
          builder.setInsertionPointAfter(idsOp);
        auto pull = builder.create<dist::PsPullRowsOp>(lookup->getLoc(), rowsType, symbol, ids,
                                                       bag ? builder.getUnitAttr() : UnitAttr());
        Value rows = pull.getResult();
        if (atTop)
          lastAtTop = rows.getDefiningOp();
        if (bag) {
          builder.setInsertionPoint(bag);
          Value weights = EmbeddingBagOp::buildWeights(builder, bag.getLoc(), ids,
                                                       bag.getCombiner(),
                                                       read.getType().getElementType());
          rows = EmbeddingBagOp::buildCombination(builder, bag.getLoc(), rows, weights);
        }
        lookup->getResult(0).replaceAllUsesWith(rows);
        lookup->erase();
      }
      read.erase();
      continue;
    }
    Value &value = pulled[read.getVariable()];
    if (!value) {
      OpBuilder builder(func.getContext());
      placeAtTop(builder);
      value = builder.create<dist::PsPullOp>(read.getLoc(), read.getType(), symbol);
      lastAtTop = value.getDefiningOp();
    }
    read.replaceAllUsesWith(value);
    read.erase();
  }
}

LogicalResult ParameterServerInsertion::checkScaledGradients(
    func::ReturnOp ret, SmallVectorImpl<Value> &results,
    SmallVectorImpl<DictionaryAttr> &resultAttrs) {
  auto scale = module.lookupSymbol<VariableOp>(kLossScaleVariable);
  if (!scale)
    return train.emitOpError("fp16 training needs the '")
           << kLossScaleVariable << "' variable kiln-autodiff adds";
  SmallVector<Value> gradients;
  for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
    DictionaryAttr attrs = train.getResultAttrDict(i);
    for (StringRef key : {kGradientAttr, kGradientRowsAttr}) {
      auto name = attrs ? attrs.getAs<FlatSymbolRefAttr>(key) : FlatSymbolRefAttr();
      if (name && remote.count(name.getValue()))
        gradients.push_back(value);
    }
  }
  if (gradients.empty())
    return train.emitOpError("returns no gradient to push: give the loss a trainable variable "
                             "to depend on");
  for (Value gradient : gradients)
    if (!llvm::cast<RankedTensorType>(gradient.getType()).hasStaticShape())
      return train.emitOpError("fp16 loss scaling cannot check a gradient of type ")
             << gradient.getType() << " (its size is known only at run time); use "
             << "--precision=bf16";
  OpBuilder builder(ret);
  GradientBuilder gb(builder, train.getLoc());
  // The scale the backward pass started from (kiln-autodiff's read; nothing
  // assigns it before the end of the step).
  Value lossScale;
  for (auto read : train.getBody().front().getOps<ReadOp>())
    if (read.getVariable() == kLossScaleVariable) {
      lossScale = read.getResult();
      break;
    }
  if (!lossScale)
    lossScale = builder.create<ReadOp>(train.getLoc(), scale.getType(), scale.getSymName());
  // Pushed as they are, times the scale: the runtime sends the scale with
  // them and the servers divide (exactly: the scale is a power of 2), so
  // that gradients compressed to f16 for the wire keep their small values.
  Value finite = allFinite(gb, gradients);
  updateLossScale(gb, module, train, lossScale, finite, results, resultAttrs);
  return success();
}

LogicalResult ParameterServerInsertion::insertPushes() {
  MLIRContext *context = module.getContext();
  auto ret = llvm::cast<func::ReturnOp>(train.getBody().front().getTerminator());
  // fp16: what is pushed is times the loss scale (the servers divide), and
  // where it is not finite the runtime sends a skip marker instead (its
  // `skipped_step`).
  SmallVector<Value> lossScaling;
  SmallVector<DictionaryAttr> lossScalingAttrs;
  if (usesLossScaling(module) &&
      failed(checkScaledGradients(ret, lossScaling, lossScalingAttrs)))
    return failure();
  struct Sparse {
    Value ids, rows;
  };
  llvm::MapVector<StringRef, Sparse> sparse;
  SmallVector<Value> kept;
  SmallVector<DictionaryAttr> keptAttrs;
  OpBuilder builder(context);
  for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
    DictionaryAttr attrs = train.getResultAttrDict(i);
    auto part = [&](StringRef key) {
      auto name = attrs ? attrs.getAs<FlatSymbolRefAttr>(key) : FlatSymbolRefAttr();
      return name && remote.count(name.getValue()) ? name : FlatSymbolRefAttr();
    };
    if (FlatSymbolRefAttr dense = part(kGradientAttr)) {
      setInsertionAfter(builder, value);
      builder.create<dist::PsPushOp>(value.getLoc(), dense, value);
    } else if (FlatSymbolRefAttr ids = part(kGradientIndicesAttr)) {
      sparse[ids.getValue()].ids = value;
    } else if (FlatSymbolRefAttr rows = part(kGradientRowsAttr)) {
      sparse[rows.getValue()].rows = value;
    } else {
      kept.push_back(value);
      keptAttrs.push_back(attrs ? attrs : DictionaryAttr::get(context));
    }
  }
  for (auto &[name, parts] : sparse) {
    if (!parts.ids || !parts.rows)
      return train.emitOpError("returns half of the sparse gradient of @")
             << name << " (both kiln.gradient_indices and kiln.gradient_rows are needed)";
    Operation *idsOp = parts.ids.getDefiningOp(), *rowsOp = parts.rows.getDefiningOp();
    bool rowsLater = !idsOp || (rowsOp && idsOp->isBeforeInBlock(rowsOp));
    Value later = rowsLater ? parts.rows : parts.ids;
    setInsertionAfter(builder, later);
    auto symbol = FlatSymbolRefAttr::get(context, name);
    if (remote.lookup(name) != Access::Dense) {
      builder.create<dist::PsPushRowsOp>(later.getLoc(), symbol, parts.ids, parts.rows);
      continue;
    }
    // Pulled whole (some read is not a row gather, though none that reaches
    // the loss): pushed whole too.
    auto variable = module.lookupSymbol<VariableOp>(name);
    GradientBuilder gb(builder, later.getLoc());
    Value dense = scatterRowsDense(gb, parts.ids, parts.rows, variable.getTensorType());
    builder.create<dist::PsPushOp>(later.getLoc(), symbol, dense);
  }
  kept.append(lossScaling);
  keptAttrs.append(lossScalingAttrs);
  setFunctionResults(train, kept, keptAttrs);
  return success();
}

LogicalResult ParameterServerInsertion::run() {
  auto spec = module->getAttrOfType<DictionaryAttr>(KilnDialect::kTrainSpecAttrName);
  OptimizerSettings optimizer = OptimizerSettings::from(spec.getAs<DictionaryAttr>("optimizer"));
  if (optimizer.clipGlobalNorm > 0)
    return module.emitError("parameter-server training cannot clip by global norm yet: the "
                            "norm needs every server's gradients (drop clip_global_norm)");
  for (StringRef name : partitioner.hashTables.keys()) {
    auto variable = module.lookupSymbol<VariableOp>(name);
    if (!variable)
      return module.emitError("hash embedding @") << name << " is not a variable";
    if (!variable.getTrainable())
      return variable.emitOpError("is a hash embedding but not trainable: hash tables live "
                                  "on the parameter servers, which only hold trainable "
                                  "variables");
  }
  for (VariableOp variable : module.getOps<VariableOp>()) {
    if (!variable.getTrainable())
      continue;
    RankedTensorType type = variable.getTensorType();
    if (!type.getElementType().isF32())
      return variable.emitOpError("is ")
             << type << ": parameter-server training holds f32 variables only";
    FailureOr<Access> access = classify(variable);
    if (failed(access) || failed(place(variable, *access)))
      return failure();
    remote[variable.getSymName()] = *access;
  }
  WalkResult written = module.walk([&](AssignOp assign) {
    if (!remote.count(assign.getVariable()))
      return WalkResult::advance();
    assign.emitOpError("writes @") << assign.getVariable()
                                   << ", which lives on the parameter servers: only they "
                                      "update a trainable variable";
    return WalkResult::interrupt();
  });
  if (written.wasInterrupted())
    return failure();
  for (auto func : module.getOps<func::FuncOp>())
    if (!func.isExternal())
      insertPulls(func);
  return insertPushes();
}

struct InsertPsOpsPass : public kiln::impl::KilnInsertPsOpsBase<InsertPsOpsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!trainsWithParameterServers(module))
      return;
    auto spec = module->getAttrOfType<DictionaryAttr>(KilnDialect::kTrainSpecAttrName);
    auto train = module.lookupSymbol<func::FuncOp>("train_step");
    if (!train || train.getBody().getBlocks().size() != 1) {
      module.emitError("parameter-server training needs a @train_step of one block "
                       "(run kiln-autodiff first)");
      return signalPassFailure();
    }
    auto partitioner = PartitionerSpec::from(spec.getAs<DictionaryAttr>("partitioner"));
    if (failed(ParameterServerInsertion(module, train, std::move(partitioner)).run()))
      return signalPassFailure();
  }
};

} // namespace
