//===- InsertAllReduce.cpp - The kiln-insert-allreduce pass ---------------===//
//
// Data parallelism: every replica runs the same @train_step on its own block
// of the global batch, and the gradients it returns are averaged over the
// replicas before kiln-expand-optimizer applies them. See Passes.td for the
// bucketing and placement rules.
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

#include <numeric>

namespace kiln {
#define GEN_PASS_DEF_KILNINSERTALLREDUCE
#include "passes/Distribute/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// A value @train_step returns that the replicas average: a gradient, or
/// the loss.
struct Reduced {
  unsigned result; ///< Index among @train_step's results.
  Value value;
  uint64_t bytes;
};

/// The point in `block` after which `value` exists.
Operation *producer(Value value) {
  Operation *op = value.getDefiningOp();
  return op; // Null for a block argument: it exists from the start.
}

bool producedBefore(Value a, Value b) {
  Operation *pa = producer(a), *pb = producer(b);
  if (!pa || !pb)
    return !pa && pb;
  return pa->isBeforeInBlock(pb);
}

uint64_t byteSize(Value value) {
  auto type = llvm::cast<RankedTensorType>(value.getType());
  return type.getNumElements() * std::max(1u, type.getElementTypeBitWidth() / 8);
}

class AllReduceInsertion {
public:
  AllReduceInsertion(ModuleOp module, func::FuncOp train, int64_t bucketBytes)
      : module(module), train(train), bucketBytes(bucketBytes) {}

  LogicalResult run();

private:
  /// Chooses for each sparse gradient (ids and rows results) how it is
  /// averaged: gathered (remembered in `gathers`) or replaced by its table's
  /// dense gradient, built right after the later of ids and rows.
  LogicalResult routeSparseGradients();
  /// fp16 loss scaling: divides each gathered gradient's rows by the scale
  /// and adds the result the replicas average to know whether all their
  /// rows were finite (LossScaling.h).
  LogicalResult checkGatheredRows();
  /// Starts each gathered sparse gradient right after it is computed and
  /// waits for it before the return, after the buckets; tags from `tag`.
  void insertGathers(int64_t tag);
  /// The gradients and the loss, in the order they are produced.
  LogicalResult collect(SmallVectorImpl<Reduced> &reduced);
  void insertBuckets(ArrayRef<Reduced> reduced);

  ModuleOp module;
  func::FuncOp train;
  int64_t bucketBytes;
  SmallVector<Value> results;
  SmallVector<DictionaryAttr> resultAttrs;
  /// Sparse gradients to gather: result indices of their ids and rows.
  SmallVector<std::pair<unsigned, unsigned>> gathers;
  /// Results that return a value an earlier reduced result returns: (the
  /// result, that earlier one), given its average too.
  SmallVector<std::pair<unsigned, unsigned>> sameAs;
  int64_t bucketCount = 0;
};

/// Whether gathering a sparse gradient of `ids` and `rows` moves less than
/// all-reducing its dense `table`: on 8 replicas, each receives 7 others'
/// ids and rows; a ring all-reduce of the table moves it twice.
bool gatherIsSmaller(Value ids, Value rows, RankedTensorType table) {
  uint64_t sparse = byteSize(ids) + byteSize(rows);
  uint64_t dense = table.getNumElements() * std::max(1u, table.getElementTypeBitWidth() / 8);
  return 8 * sparse < 2 * dense;
}

LogicalResult AllReduceInsertion::routeSparseGradients() {
  struct Sparse {
    int ids = -1, rows = -1;
  };
  llvm::MapVector<StringRef, Sparse> sparse;
  for (auto [i, attrs] : llvm::enumerate(resultAttrs)) {
    if (auto var = attrs ? attrs.getAs<FlatSymbolRefAttr>(kGradientIndicesAttr) : nullptr)
      sparse[var.getValue()].ids = i;
    if (auto var = attrs ? attrs.getAs<FlatSymbolRefAttr>(kGradientRowsAttr) : nullptr)
      sparse[var.getValue()].rows = i;
  }
  if (sparse.empty())
    return success();
  auto spec = module->getAttrOfType<DictionaryAttr>(KilnDialect::kTrainSpecAttrName);
  auto optimizer = spec.getAs<DictionaryAttr>("optimizer");
  auto updates = optimizer ? optimizer.getAs<StringAttr>("sparse_updates") : StringAttr();
  auto kind = optimizer ? optimizer.getAs<StringAttr>("kind") : StringAttr();
  auto clip = optimizer ? optimizer.getAs<FloatAttr>("clip_global_norm") : FloatAttr();
  // A dense SGD or Adagrad step leaves rows whose gradient is zero as they
  // were, so it equals the lazy one; momentum and Adam would move them.
  bool denseEqualsLazy = kind && (kind.getValue() == "sgd" || kind.getValue() == "adagrad");
  bool lazy = updates && updates.getValue() == "lazy";
  // Clipping squares the gradient in compiled kernels, which need the static
  // shapes a gathered gradient has not.
  bool mayGather = !(clip && clip.getValueAsDouble() > 0);

  llvm::BitVector erase(results.size());
  for (auto &[name, parts] : sparse) {
    if (parts.ids < 0 || parts.rows < 0)
      return train.emitOpError("returns half of a sparse gradient of @") << name;
    auto variable = module.lookupSymbol<VariableOp>(name);
    if (!variable)
      return train.emitOpError("returns the gradient of unknown variable @") << name;
    Value ids = results[parts.ids], rows = results[parts.rows];
    for (Value half : {ids, rows})
      if (!llvm::cast<RankedTensorType>(half.getType()).hasStaticShape())
        return train.emitOpError("returns a sparse gradient of @")
               << name << " of shape " << half.getType()
               << ": the replicas can average only static shapes";
    auto table = llvm::cast<RankedTensorType>(variable.getType());
    if (mayGather && (gatherIsSmaller(ids, rows, table) || (lazy && !denseEqualsLazy))) {
      gathers.push_back({static_cast<unsigned>(parts.ids), static_cast<unsigned>(parts.rows)});
      continue;
    }
    if (lazy && !denseEqualsLazy)
      return train.emitOpError("cannot average the sparse gradient of @")
             << name << " over replicas with lazy " << kind.getValue()
             << " updates and clipping: rows would be gathered, which clipping cannot "
                "take yet, and a dense average would move rows with a zero gradient "
                "(--sparse-updates=dense)";
    Value later = producedBefore(ids, rows) ? rows : ids;
    OpBuilder builder(train.getContext());
    if (Operation *op = producer(later))
      builder.setInsertionPointAfter(op);
    else
      builder.setInsertionPointToStart(&train.getBody().front());
    GradientBuilder gb(builder, rows.getLoc());
    results[parts.rows] = scatterRowsDense(gb, ids, rows, table);
    resultAttrs[parts.rows] = DictionaryAttr::get(
        train.getContext(), {NamedAttribute(StringAttr::get(train.getContext(), kGradientAttr),
                                            FlatSymbolRefAttr::get(variable))});
    erase.set(parts.ids);
  }
  SmallVector<Value> keptValues;
  SmallVector<DictionaryAttr> keptAttrs;
  SmallVector<unsigned> newIndex(results.size());
  for (unsigned i = 0; i < results.size(); ++i)
    if (!erase.test(i)) {
      newIndex[i] = keptValues.size();
      keptValues.push_back(results[i]);
      keptAttrs.push_back(resultAttrs[i]);
    }
  results = std::move(keptValues);
  resultAttrs = std::move(keptAttrs);
  for (auto &[ids, rows] : gathers) {
    ids = newIndex[ids];
    rows = newIndex[rows];
  }
  return success();
}

void AllReduceInsertion::insertGathers(int64_t tag) {
  auto ret = llvm::cast<func::ReturnOp>(train.getBody().back().getTerminator());
  OpBuilder builder(train.getContext());
  for (auto [idsResult, rowsResult] : gathers) {
    Value ids = results[idsResult], rows = results[rowsResult];
    Value later = producedBefore(ids, rows) ? rows : ids;
    if (Operation *op = producer(later))
      builder.setInsertionPointAfter(op);
    else
      builder.setInsertionPointToStart(&train.getBody().front());
    auto start = builder.create<dist::SparseAllReduceStartOp>(ret.getLoc(), dist::ReduceKind::mean,
                                                              ids, rows, tag++);
    builder.setInsertionPoint(ret);
    auto wait = builder.create<dist::WaitOp>(ret.getLoc(), dist::pendingResultTypes(start),
                                             start.getResult());
    results[idsResult] = wait.getResult(0);
    results[rowsResult] = wait.getResult(1);
  }
}

LogicalResult AllReduceInsertion::checkGatheredRows() {
  if (gathers.empty() || !usesLossScaling(module))
    return success();
  auto scale = module.lookupSymbol<VariableOp>(kLossScaleVariable);
  if (!scale)
    return train.emitOpError("fp16 training needs the '")
           << kLossScaleVariable << "' variable kiln-autodiff adds";
  MLIRContext *context = train.getContext();
  OpBuilder builder(context);
  builder.setInsertionPointToStart(&train.getBody().front());
  GradientBuilder gb(builder, train.getLoc());
  Value scaleValue = builder.create<ReadOp>(train.getLoc(), scale.getType(), scale.getSymName());
  Value inverse = gb.div(gb.splatLike(scaleValue, 1.0), scaleValue);
  // Per table, right after its rows: whether they are finite (their sum
  // minus itself is 0, else NaN; an overflowing sum skips too, as without
  // replicas), and the rows divided by the scale, which the replicas gather.
  SmallVector<Value> checks;
  for (auto [idsResult, rowsResult] : gathers) {
    Value rows = results[rowsResult];
    auto type = llvm::cast<RankedTensorType>(rows.getType()); // Static: routed.
    Operation *after = producer(rows);
    builder.setInsertionPointAfter(after ? after : inverse.getDefiningOp());
    SmallVector<int64_t> axes(type.getRank());
    std::iota(axes.begin(), axes.end(), 0);
    Value sum = gb.reduceSum(rows, axes, false);
    checks.push_back(gb.sub(sum, sum));
    results[rowsResult] = gb.mul(rows, gb.broadcastTo(inverse, type));
    NamedAttrList attrs(resultAttrs[rowsResult]);
    attrs.set(kRowsUnscaledAttr, UnitAttr::get(context));
    resultAttrs[rowsResult] = attrs.getDictionary(context);
  }
  Value last = *llvm::max_element(
      checks, [](Value a, Value b) { return producedBefore(a, b); });
  builder.setInsertionPointAfter(last.getDefiningOp());
  Value check = checks.front();
  for (Value next : llvm::drop_begin(checks))
    check = gb.add(check, next);
  results.push_back(check);
  resultAttrs.push_back(DictionaryAttr::get(
      context, {NamedAttribute(StringAttr::get(context, kRowsCheckAttr), UnitAttr::get(context))}));
  return success();
}

LogicalResult AllReduceInsertion::collect(SmallVectorImpl<Reduced> &reduced) {
  auto spec = module->getAttrOfType<DictionaryAttr>(KilnDialect::kTrainSpecAttrName);
  auto loss = spec.getAs<StringAttr>("loss");
  for (auto [i, attrs] : llvm::enumerate(resultAttrs)) {
    if (!attrs)
      continue;
    bool gradient = attrs.get(kGradientAttr) != nullptr;
    auto name = attrs.getAs<StringAttr>(KilnDialect::kNameAttrName);
    bool isLoss = name && loss && name == loss;
    if (!gradient && !isLoss && !attrs.get(kRowsCheckAttr))
      continue;
    auto type = llvm::cast<RankedTensorType>(results[i].getType());
    if (!type.getElementType().isF32())
      return train.emitOpError("cannot all-reduce result #")
             << i << " of type " << type << ": data-parallel training needs f32 gradients";
    // One value returned twice (two biases added to the same sum: their
    // gradients are one value after CSE) is averaged once.
    auto first = llvm::find_if(reduced, [&](const Reduced &r) { return r.value == results[i]; });
    if (first != reduced.end()) {
      sameAs.push_back({static_cast<unsigned>(i), first->result});
      continue;
    }
    reduced.push_back({static_cast<unsigned>(i), results[i], byteSize(results[i])});
  }
  if (gathers.empty() && llvm::none_of(reduced, [&](const Reduced &r) {
        return resultAttrs[r.result].get(kGradientAttr) != nullptr;
      }))
    return train.emitOpError("returns no gradients to all-reduce: run kiln-autodiff first");
  // The loss (produced by the forward pass) sorts first and rides in the
  // first bucket.
  llvm::stable_sort(reduced, [](const Reduced &a, const Reduced &b) {
    return producedBefore(a.value, b.value);
  });
  return success();
}

void AllReduceInsertion::insertBuckets(ArrayRef<Reduced> reduced) {
  auto ret = llvm::cast<func::ReturnOp>(train.getBody().back().getTerminator());
  OpBuilder builder(train.getContext());
  int64_t tag = 0;
  SmallVector<SmallVector<const Reduced *>> buckets(1);
  uint64_t filled = 0;
  for (const Reduced &r : reduced) {
    if (!buckets.back().empty() && filled + r.bytes > static_cast<uint64_t>(bucketBytes)) {
      buckets.emplace_back();
      filled = 0;
    }
    buckets.back().push_back(&r);
    filled += r.bytes;
  }
  bucketCount = buckets.size();
  SmallVector<Value> pending;
  for (ArrayRef<const Reduced *> bucket : buckets) {
    SmallVector<Value> inputs;
    for (const Reduced *r : bucket)
      inputs.push_back(r->value);
    if (Operation *last = producer(bucket.back()->value))
      builder.setInsertionPointAfter(last);
    else
      builder.setInsertionPointToStart(&train.getBody().front());
    pending.push_back(builder.create<dist::AllReduceStartOp>(
        ret.getLoc(), dist::ReduceKind::mean, inputs, tag++));
  }
  builder.setInsertionPoint(ret);
  for (auto [bucket, handle] : llvm::zip(buckets, pending)) {
    SmallVector<Type> types;
    for (const Reduced *r : bucket)
      types.push_back(r->value.getType());
    auto wait = builder.create<dist::WaitOp>(ret.getLoc(), types, handle);
    for (auto [r, value] : llvm::zip(bucket, wait.getResults()))
      results[r->result] = value;
  }
  for (auto [result, averaged] : sameAs)
    results[result] = results[averaged];
}

LogicalResult AllReduceInsertion::run() {
  auto ret = llvm::cast<func::ReturnOp>(train.getBody().back().getTerminator());
  results.assign(ret.getOperands().begin(), ret.getOperands().end());
  for (unsigned i = 0; i < results.size(); ++i)
    resultAttrs.push_back(train.getResultAttrDict(i));
  if (failed(routeSparseGradients()) || failed(checkGatheredRows()))
    return failure();
  SmallVector<Reduced> reduced;
  if (failed(collect(reduced)))
    return failure();
  if (!reduced.empty())
    insertBuckets(reduced);
  insertGathers(bucketCount);
  setFunctionResults(train, results, resultAttrs);
  return success();
}

struct InsertAllReducePass
    : public kiln::impl::KilnInsertAllReduceBase<InsertAllReducePass> {
  using KilnInsertAllReduceBase::KilnInsertAllReduceBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto spec = module->getAttrOfType<DictionaryAttr>(KilnDialect::kTrainSpecAttrName);
    auto strategy = spec ? spec.getAs<DictionaryAttr>("strategy") : DictionaryAttr();
    auto kind = strategy ? strategy.getAs<StringAttr>("kind") : StringAttr();
    if (!kind || kind.getValue() != "all_reduce")
      return;
    auto train = module.lookupSymbol<func::FuncOp>("train_step");
    if (!train || train.getBody().getBlocks().size() != 1) {
      module.emitError("data-parallel training needs a @train_step of one block "
                       "(run kiln-autodiff first)");
      return signalPassFailure();
    }
    int64_t bytes = bucketBytes;
    if (bytes == 0)
      if (auto fromSpec = strategy.getAs<IntegerAttr>("bucket_bytes"))
        bytes = fromSpec.getInt();
    if (bytes <= 0) {
      module.emitError("data-parallel training needs a bucket size >= 1 byte, got ") << bytes;
      return signalPassFailure();
    }
    if (failed(AllReduceInsertion(module, train, bytes).run()))
      return signalPassFailure();
  }
};

} // namespace
