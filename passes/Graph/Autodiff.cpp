//===- Autodiff.cpp - The kiln-autodiff pass ------------------------------===//
//
// Builds @train_step: a copy of @forward followed by the reverse sweep from
// the loss (the train spec's `loss` output). Only values that both depend
// on a trainable variable and reach the loss get gradients. A variable read
// only by axis-0 gathers and embedding bags gets a sparse gradient (the
// looked-up ids and the rows' gradients, duplicates kept; a bag's padding
// ids of -1 stay in with zero rows, and every consumer skips them); any
// other variable a dense one. A value's gradients from its uses wait until
// the sweep reaches the value, and are combined there: its slices'
// (SliceGradients.h), then all of them summed (GradientSums.h).
//
//===----------------------------------------------------------------------===//

#include "passes/Graph/Passes.h"

#include "dialects/Kiln/KilnOps.h"
#include "dialects/Kiln/TrainSpec.h"
#include "passes/Graph/GradientRules.h"
#include "passes/Graph/GradientSums.h"
#include "passes/Graph/LossScaling.h"
#include "passes/Graph/SliceGradients.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/RegionUtils.h"

namespace kiln {
#define GEN_PASS_DEF_KILNAUTODIFF
#include "passes/Graph/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

bool isFloat(Value v) {
  auto type = llvm::dyn_cast<RankedTensorType>(v.getType());
  return type && llvm::isa<FloatType>(type.getElementType());
}

/// The gradient state of one variable.
struct VariableGradient {
  Value dense;
  SmallVector<Value> ids, rows; // Sparse contributions, one per gather.
};

class ReverseSweep {
public:
  ReverseSweep(ModuleOp module, func::FuncOp train) : module(module), train(train) {}

  LogicalResult run(StringRef lossName);

private:
  LogicalResult findLoss(StringRef lossName);
  void markActive();
  void findSparseVariables();
  void accumulate(Value value, Value grad, GradientBuilder &gb);
  LogicalResult sweep(GradientBuilder &gb);
  void returnGradients(GradientBuilder &gb);

  ModuleOp module;
  func::FuncOp train;
  Value loss;
  DenseSet<Value> active;
  /// Each value's gradients from its uses so far.
  DenseMap<Value, SmallVector<Value>> grads;
  /// Gradients of slices of a value, combined when the sweep reaches it.
  DenseMap<Value, SmallVector<SliceGradient>> sliceGrads;
  /// Trainable variables by name, in module order.
  llvm::MapVector<StringRef, VariableGradient> variables;
  DenseSet<StringRef> sparse;
};

LogicalResult ReverseSweep::findLoss(StringRef lossName) {
  auto ret = llvm::cast<func::ReturnOp>(train.getBody().back().getTerminator());
  for (unsigned i = 0; i < train.getNumResults(); ++i) {
    auto name = train.getResultAttrOfType<StringAttr>(i, KilnDialect::kNameAttrName);
    if (name && name.getValue() == lossName)
      loss = ret.getOperand(i);
  }
  if (!loss)
    return train.emitOpError("has no output named '") << lossName << "' (the train spec's loss)";
  auto type = llvm::cast<RankedTensorType>(loss.getType());
  if (type.getRank() != 0 || !isFloat(loss))
    return train.emitOpError("expects the loss '") << lossName
           << "' to be a float scalar, got " << type;
  return success();
}

void ReverseSweep::markActive() {
  for (auto variable : module.getOps<VariableOp>())
    if (variable.getTrainable() &&
        llvm::isa<FloatType>(variable.getTensorType().getElementType()))
      variables[variable.getSymName()] = {};
  Block &body = train.getBody().front();
  DenseSet<Value> dependsOnVariable;
  for (Operation &op : body.without_terminator()) {
    bool depends = false;
    if (auto read = llvm::dyn_cast<ReadOp>(op))
      depends = variables.count(read.getVariable());
    for (Value operand : op.getOperands())
      depends |= dependsOnVariable.contains(operand);
    if (depends)
      for (Value result : op.getResults())
        if (isFloat(result))
          dependsOnVariable.insert(result);
  }
  DenseSet<Value> reachesLoss = {loss};
  for (Operation &op : llvm::reverse(body.without_terminator()))
    if (llvm::any_of(op.getResults(), [&](Value r) { return reachesLoss.contains(r); }))
      for (Value operand : op.getOperands())
        reachesLoss.insert(operand);
  for (Value value : dependsOnVariable)
    if (reachesLoss.contains(value))
      active.insert(value);
}

void ReverseSweep::findSparseVariables() {
  DenseMap<StringRef, bool> onlyGathers;
  train.walk([&](ReadOp read) {
    if (!active.contains(read.getResult()))
      return;
    bool gathers = llvm::all_of(read->getUses(), [&](OpOperand &use) {
      auto gather = llvm::dyn_cast<GatherOp>(use.getOwner());
      if (gather && use.getOperandNumber() == 0 && gather.getAxis() == 0)
        return true;
      if (llvm::isa<EmbeddingBagOp>(use.getOwner()) && use.getOperandNumber() == 0)
        return true;
      // Uses that never reach the loss do not count.
      return llvm::none_of(use.getOwner()->getResults(),
                           [&](Value r) { return active.contains(r); });
    });
    auto [it, inserted] = onlyGathers.try_emplace(read.getVariable(), gathers);
    if (!inserted)
      it->second &= gathers;
  });
  for (auto [name, gathers] : onlyGathers)
    if (gathers)
      sparse.insert(name);
}

void ReverseSweep::accumulate(Value value, Value grad, GradientBuilder &gb) {
  if (!active.contains(value))
    return;
  grads[value].push_back(grad);
}

/// Appends a lookup of `table` at `ids` (any shape) with gradient rows
/// `rows` ([ids..., row...]) to `variable`'s sparse gradient.
void addSparseRows(VariableGradient &variable, Value table, Value ids, Value rows,
                   GradientBuilder &gb) {
  RankedTensorType idsType = tensorType(ids), tableType = tensorType(table);
  int64_t n = idsType.getNumElements();
  SmallVector<int64_t> rowShape = {n};
  llvm::append_range(rowShape, tableType.getShape().drop_front());
  variable.ids.push_back(gb.reshape(ids, RankedTensorType::get({n}, idsType.getElementType())));
  variable.rows.push_back(
      gb.reshape(rows, RankedTensorType::get(rowShape, tableType.getElementType())));
}

/// fp16: the loss scale variable's value, the backward pass's seed (made
/// here, its initial value kInitialLossScale); null with an error emitted
/// where loss scaling cannot work.
static Value lossScaleSeed(ModuleOp module, func::FuncOp train, Value loss,
                           GradientBuilder &gb) {
  if (module.lookupSymbol(kLossScaleVariable)) {
    module.emitError("the model already has a variable named '")
        << kLossScaleVariable << "', which fp16 loss scaling needs";
    return {};
  }
  auto type = RankedTensorType::get({}, Float32Type::get(module.getContext()));
  if (llvm::cast<RankedTensorType>(loss.getType()) != type) {
    module.emitError("fp16 loss scaling needs an f32 scalar loss");
    return {};
  }
  OpBuilder moduleBuilder(module.getBodyRegion());
  moduleBuilder.setInsertionPoint(train);
  auto value = DenseElementsAttr::get(type, FloatAttr::get(type.getElementType(),
                                                           kInitialLossScale));
  auto init = InitializerAttr::get(module.getContext(), InitKind::constant, APFloat(0.0),
                                   APFloat(0.0), 0, value);
  moduleBuilder.create<VariableOp>(train.getLoc(), kLossScaleVariable, type, init,
                                   /*trainable=*/false);
  return gb.builder().create<ReadOp>(gb.location(), type, kLossScaleVariable);
}

LogicalResult ReverseSweep::sweep(GradientBuilder &gb) {
  if (usesLossScaling(module)) {
    Value seed = lossScaleSeed(module, train, loss, gb);
    if (!seed)
      return failure();
    grads[loss] = {seed};
  } else {
    grads[loss] = {gb.splatLike(loss, 1.0)};
  }
  Block &body = train.getBody().front();
  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    ops.push_back(&op);
  for (Operation *op : llvm::reverse(ops)) {
    if (op->getNumResults() != 1)
      continue;
    Value result = op->getResult(0);
    if (auto slices = sliceGrads.find(result); slices != sliceGrads.end())
      accumulate(result, combineSliceGradients(result, slices->second, gb), gb);
    auto it = grads.find(result);
    if (it == grads.end())
      continue;
    Value g = sumGradients(it->second, gb);
    if (auto read = llvm::dyn_cast<ReadOp>(op)) {
      VariableGradient &variable = variables[read.getVariable()];
      variable.dense = variable.dense ? gb.add(variable.dense, g) : g;
      continue;
    }
    // A row lookup of a sparse table: its ids and one gradient row per id
    // (a gather's result gradient as it is; a bag's spread over its ids).
    Value table, ids, rows;
    if (auto gather = llvm::dyn_cast<GatherOp>(op); gather && gather.getAxis() == 0) {
      table = gather.getTable();
      ids = gather.getIndices();
      rows = g;
    } else if (auto bag = llvm::dyn_cast<EmbeddingBagOp>(op)) {
      table = bag.getTable();
      ids = bag.getIds();
      rows = embeddingBagRowGradients(bag, g, gb);
    }
    auto read = table ? table.getDefiningOp<ReadOp>() : ReadOp();
    if (read && sparse.contains(read.getVariable())) {
      addSparseRows(variables[read.getVariable()], table, ids, rows, gb);
      continue;
    }
    if (auto slice = llvm::dyn_cast<SliceOp>(op); slice && isTileableSlice(slice)) {
      if (active.contains(slice.getOperand()))
        sliceGrads[slice.getOperand()].push_back({slice, g});
      continue;
    }
    SmallVector<Value> operandGrads;
    if (failed(buildOperandGradients(op, g, gb, operandGrads)))
      return failure();
    for (auto [operand, grad] : llvm::zip(op->getOperands(), operandGrads))
      if (grad)
        accumulate(operand, grad, gb);
  }
  return success();
}

Value concatAll(ArrayRef<Value> parts, GradientBuilder &gb) {
  if (parts.size() == 1)
    return parts.front();
  return gb.builder().create<ConcatOp>(gb.location(), parts, 0);
}

void ReverseSweep::returnGradients(GradientBuilder &gb) {
  auto ret = llvm::cast<func::ReturnOp>(train.getBody().back().getTerminator());
  SmallVector<Value> results(ret.getOperands());
  SmallVector<DictionaryAttr> attrs;
  train.getAllResultAttrs(attrs);
  MLIRContext *context = train.getContext();
  auto add = [&](Value value, StringRef attr, StringRef variable) {
    results.push_back(value);
    attrs.push_back(DictionaryAttr::get(
        context, {NamedAttribute(StringAttr::get(context, attr),
                                 FlatSymbolRefAttr::get(context, variable))}));
  };
  for (auto &[name, gradient] : variables) {
    if (gradient.dense)
      add(gradient.dense, kGradientAttr, name);
    if (!gradient.ids.empty()) {
      add(concatAll(gradient.ids, gb), kGradientIndicesAttr, name);
      add(concatAll(gradient.rows, gb), kGradientRowsAttr, name);
    }
  }
  setFunctionResults(train, results, attrs);
}

LogicalResult ReverseSweep::run(StringRef lossName) {
  if (failed(findLoss(lossName)))
    return failure();
  markActive();
  findSparseVariables();
  OpBuilder builder(train.getBody().back().getTerminator());
  GradientBuilder gb(builder, train.getLoc());
  if (failed(sweep(gb)))
    return failure();
  returnGradients(gb);
  // Drop what the rules built for operands that needed no gradient.
  IRRewriter rewriter(train.getContext());
  (void)runRegionDCE(rewriter, train.getBody());
  return success();
}

struct AutodiffPass : public kiln::impl::KilnAutodiffBase<AutodiffPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto spec = module->getAttrOfType<DictionaryAttr>(KilnDialect::kTrainSpecAttrName);
    if (!spec) {
      module.emitError("kiln-autodiff needs a training specification (") << KilnDialect::kTrainSpecAttrName
          << ") on the module";
      return signalPassFailure();
    }
    auto forward = module.lookupSymbol<func::FuncOp>("forward");
    if (!forward || forward.isExternal() || !forward.getBody().hasOneBlock()) {
      module.emitError("kiln-autodiff needs a @forward function with one block");
      return signalPassFailure();
    }
    if (module.lookupSymbol("train_step")) {
      module.emitError("the module already has a @train_step");
      return signalPassFailure();
    }
    func::FuncOp train = forward.clone();
    train.setSymName("train_step");
    module.insert(std::next(Block::iterator(forward)), train);
    auto loss = spec.getAs<StringAttr>("loss");
    if (failed(ReverseSweep(module, train).run(loss ? loss.getValue() : "")))
      return signalPassFailure();
  }
};

} // namespace
