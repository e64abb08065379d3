//===- ExpandOptimizer.cpp - The kiln-expand-optimizer pass ---------------===//
//
// Turns the gradients @train_step returns (kiln-autodiff's kiln.gradient*
// results) into the update: a step counter variable, the learning rate of
// this step from the schedule, global-norm clipping, slot variables, and
// one update op per variable followed by kiln.assign of the new values. The
// gradient results are replaced by one `learning_rate` output.
//
//===----------------------------------------------------------------------===//

#include "passes/Graph/Passes.h"

#include "dialects/Kiln/KilnOps.h"
#include "dialects/Kiln/TrainSpec.h"
#include "passes/Graph/GradientBuilder.h"
#include "passes/Graph/LossScaling.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <cmath>

namespace kiln {
#define GEN_PASS_DEF_KILNEXPANDOPTIMIZER
#include "passes/Graph/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// The name of the step counter variable.
constexpr llvm::StringLiteral kStepVariable = "global_step";

using OptimizerSpec = OptimizerSettings;

/// One variable's gradient as @train_step returns it.
struct Gradient {
  VariableOp variable;
  Value dense, ids, rows;
  /// fp16: rows the replicas gathered, divided by the loss scale and
  /// checked before (LossScaling.h, kRowsUnscaledAttr).
  bool unscaledByReplicas = false;
};

class OptimizerExpansion {
public:
  OptimizerExpansion(ModuleOp module, func::FuncOp train, OptimizerSpec spec)
      : module(module), train(train), spec(std::move(spec)),
        builder(train.getBody().back().getTerminator()), gb(builder, train.getLoc()) {}

  LogicalResult run();

private:
  LogicalResult collectGradients();
  VariableOp addVariable(StringRef name, RankedTensorType type, InitializerAttr init,
                         bool trainable);
  /// The variable's value: a read already in the step when nothing has
  /// assigned the variable since (one read per variable keeps CSE from
  /// scanning the step for writes between two), else a new one.
  Value read(VariableOp variable) {
    auto found = reads.find(variable.getSymName());
    if (found != reads.end())
      return found->second;
    Value value =
        builder.create<ReadOp>(gb.location(), variable.getType(), variable.getSymName());
    reads[variable.getSymName()] = value;
    return value;
  }
  /// Assigns `value`; under loss scaling only when the step's gradients are
  /// finite (else the variable keeps its value).
  void assign(VariableOp variable, Value value) {
    if (finite) {
      auto type = llvm::cast<RankedTensorType>(value.getType());
      Value condition = gb.broadcastTo(
          finite, RankedTensorType::get(type.getShape(), builder.getI1Type()));
      value = builder.create<SelectOp>(gb.location(), condition, value, read(variable));
    }
    assignAlways(variable, value);
  }
  void assignAlways(VariableOp variable, Value value) {
    builder.create<AssignOp>(gb.location(), variable.getSymName(), value);
    reads.erase(variable.getSymName());
  }
  /// fp16: sets `finite` (whether every gradient is) and divides the
  /// gradients by the loss scale.
  LogicalResult unscaleGradients();
  /// fp16: the scale's and its counter's updates, and the step's outputs.
  void updateLossScale();
  /// The step's first read of each variable it never assigns.
  void findReads();
  /// The 1-based number of this step, as f32; assigns the counter.
  Value countStep();
  Value learningRate(Value step);
  void clipGradients();
  LogicalResult update(Gradient &gradient, Value lr, Value step);
  SmallVector<VariableOp> slotsFor(VariableOp variable);

  ModuleOp module;
  func::FuncOp train;
  OptimizerSpec spec;
  OpBuilder builder;
  GradientBuilder gb;
  SmallVector<Gradient> gradients;
  /// fp16 with gathered rows: the replicas' averaged check of their rows
  /// (kRowsCheckAttr): 0, or NaN.
  SmallVector<Value> replicaRowChecks;
  Value lossScale; ///< fp16: the scale this step used.
  Value finite;    ///< fp16: an i1 scalar, whether every gradient is finite.
  SmallVector<Value> kept;           // Results that stay.
  SmallVector<DictionaryAttr> keptAttrs;
  llvm::StringMap<Value> reads; // By variable, usable at the end of the step.
};

void OptimizerExpansion::findReads() {
  llvm::StringSet<> assigned;
  train.walk([&](AssignOp assign) { assigned.insert(assign.getVariable()); });
  for (Operation &op : train.getBody().front())
    if (auto existing = llvm::dyn_cast<ReadOp>(op))
      if (!assigned.contains(existing.getVariable()))
        reads.try_emplace(existing.getVariable(), existing.getResult());
}

LogicalResult OptimizerExpansion::collectGradients() {
  auto ret = llvm::cast<func::ReturnOp>(train.getBody().back().getTerminator());
  llvm::MapVector<StringRef, Gradient> byName;
  for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
    DictionaryAttr attrs = train.getResultAttrDict(i);
    if (attrs && attrs.get(kRowsCheckAttr)) {
      replicaRowChecks.push_back(value);
      continue;
    }
    FlatSymbolRefAttr target;
    StringRef kind;
    for (StringRef attr : {kGradientAttr, kGradientIndicesAttr, kGradientRowsAttr})
      if (auto ref = attrs ? attrs.getAs<FlatSymbolRefAttr>(attr) : FlatSymbolRefAttr()) {
        target = ref;
        kind = attr;
      }
    if (!target) {
      kept.push_back(value);
      keptAttrs.push_back(attrs ? attrs : DictionaryAttr::get(train.getContext()));
      continue;
    }
    auto variable = module.lookupSymbol<VariableOp>(target.getAttr());
    if (!variable)
      return train.emitOpError("returns the gradient of unknown variable ") << target;
    Gradient &gradient = byName[variable.getSymName()];
    gradient.variable = variable;
    (kind == kGradientAttr ? gradient.dense
                           : kind == kGradientIndicesAttr ? gradient.ids : gradient.rows) = value;
    if (kind == kGradientRowsAttr && attrs.get(kRowsUnscaledAttr))
      gradient.unscaledByReplicas = true;
  }
  for (auto &[name, gradient] : byName) {
    if (gradient.dense && gradient.ids)
      return train.emitOpError("returns both a dense and a sparse gradient of @") << name;
    if (bool(gradient.ids) != bool(gradient.rows))
      return train.emitOpError("returns half of a sparse gradient of @") << name;
    gradients.push_back(gradient);
  }
  if (gradients.empty())
    return train.emitOpError("returns no gradients: run kiln-autodiff first, and give "
                             "the loss a trainable variable to depend on");
  return success();
}

VariableOp OptimizerExpansion::addVariable(StringRef name, RankedTensorType type,
                                           InitializerAttr init, bool trainable) {
  OpBuilder moduleBuilder(module.getBodyRegion());
  moduleBuilder.setInsertionPoint(train);
  auto variable = moduleBuilder.create<VariableOp>(train.getLoc(), name, type, init,
                                                   trainable);
  return variable;
}

Value OptimizerExpansion::countStep() {
  MLIRContext *context = module.getContext();
  auto counterType = RankedTensorType::get({}, IntegerType::get(context, 64));
  VariableOp counter = addVariable(kStepVariable, counterType,
                                   InitializerAttr::get(context, InitKind::zeros), false);
  Value next = gb.add(read(counter), gb.splat(counterType, 1));
  assign(counter, next);
  auto f32 = RankedTensorType::get({}, Float32Type::get(context));
  return builder.create<CastOp>(gb.location(), f32, next);
}

Value OptimizerExpansion::learningRate(Value step) {
  auto constant = [&](double v) { return gb.splatLike(step, v); };
  Value base = constant(spec.lr);
  auto minOf = [&](Value x, Value y) { return builder.create<MinimumOp>(gb.location(), x, y); };
  auto maxOf = [&](Value x, Value y) { return builder.create<MaximumOp>(gb.location(), x, y); };
  double warmup = static_cast<double>(spec.warmupSteps);
  Value warm = warmup > 0 ? gb.mul(base, minOf(gb.div(step, constant(warmup)), constant(1.0)))
                          : base;
  if (spec.schedule != "cosine_decay")
    return spec.schedule == "linear_warmup" ? warm : base;
  // After warm-up: min + (lr - min) (1 + cos(pi p)) / 2, p from 0 to 1 at decay_steps.
  double span = std::max(1.0, static_cast<double>(spec.decaySteps) - warmup);
  Value progress = minOf(maxOf(gb.div(gb.sub(step, constant(warmup)), constant(span)),
                               constant(0.0)),
                         constant(1.0));
  Value cosine = builder.create<CosOp>(gb.location(), gb.scale(progress, M_PI));
  Value decayed = gb.add(constant(spec.minLr),
                         gb.scale(gb.add(cosine, constant(1.0)), 0.5 * (spec.lr - spec.minLr)));
  if (warmup <= 0)
    return decayed;
  Value warming = gb.compare(ComparePredicate::le, step, constant(warmup));
  return builder.create<SelectOp>(gb.location(), warming, warm, decayed);
}

void OptimizerExpansion::clipGradients() {
  // TensorFlow's clip_by_global_norm: g * clip / max(norm, clip).
  Value sumOfSquares;
  auto addSquares = [&](Value g) {
    Value squares = gb.mul(g, g);
    SmallVector<int64_t> axes;
    for (int64_t d = 0; d < tensorType(g).getRank(); ++d)
      axes.push_back(d);
    Value sum = gb.reduceSum(squares, axes, false);
    sumOfSquares = sumOfSquares ? gb.add(sumOfSquares, sum) : sum;
  };
  for (Gradient &gradient : gradients)
    addSquares(gradient.dense ? gradient.dense : gradient.rows);
  Value norm = builder.create<SqrtOp>(gb.location(), sumOfSquares);
  Value clip = gb.splatLike(norm, spec.clipGlobalNorm);
  Value factor = gb.div(clip, builder.create<MaximumOp>(gb.location(), norm, clip));
  for (Gradient &gradient : gradients) {
    Value &g = gradient.dense ? gradient.dense : gradient.rows;
    g = gb.mul(g, gb.broadcastTo(factor, tensorType(g)));
  }
}

LogicalResult OptimizerExpansion::unscaleGradients() {
  auto scale = module.lookupSymbol<VariableOp>(kLossScaleVariable);
  if (!scale)
    return train.emitOpError("fp16 training needs the '")
           << kLossScaleVariable << "' variable kiln-autodiff adds";
  // Rows the replicas gather (data-parallel) have a size known at run
  // time: kiln-insert-allreduce checked and unscaled each replica's own
  // before the gather (unscaledByReplicas, and a check result). Exchanged
  // rows without that mark (a train step that skipped it) cannot be.
  auto exchanged = [](Value rows) {
    auto byReplicas = [](Operation *op) {
      return op && op->getName().getDialectNamespace() == "kdist";
    };
    return byReplicas(rows.getDefiningOp()) || llvm::any_of(rows.getUsers(), byReplicas) ||
           !llvm::cast<RankedTensorType>(rows.getType()).hasStaticShape();
  };
  for (Gradient &gradient : gradients)
    if (gradient.ids && !gradient.unscaledByReplicas && exchanged(gradient.rows))
      return train.emitOpError("fp16 loss scaling cannot check the rows of @")
             << gradient.variable.getSymName()
             << ": the replicas gather them (or their count is known only at run time) and "
                "kiln-insert-allreduce did not check them first; use --precision=bf16";
  if (llvm::any_of(gradients, [](const Gradient &g) { return g.unscaledByReplicas; }) &&
      replicaRowChecks.empty())
    return train.emitOpError("returns rows marked '")
           << kRowsUnscaledAttr << "' but no '" << kRowsCheckAttr << "' result";
  lossScale = read(scale);
  SmallVector<Value> scaled;
  for (Gradient &gradient : gradients)
    if (!gradient.unscaledByReplicas)
      scaled.push_back(gradient.dense ? gradient.dense : gradient.rows);
  finite = allFinite(gb, scaled, replicaRowChecks);
  kiln::unscaleGradients(gb, lossScale, scaled);
  auto next = scaled.begin();
  for (Gradient &gradient : gradients)
    if (!gradient.unscaledByReplicas)
      (gradient.dense ? gradient.dense : gradient.rows) = *next++;
  return success();
}

void OptimizerExpansion::updateLossScale() {
  kiln::updateLossScale(gb, module, train, lossScale, finite, kept, keptAttrs);
  reads.erase(kLossScaleVariable);
  reads.erase(kGoodStepsVariable);
}

SmallVector<VariableOp> OptimizerExpansion::slotsFor(VariableOp variable) {
  MLIRContext *context = module.getContext();
  RankedTensorType type = variable.getTensorType();
  SmallVector<StringRef> names;
  if (spec.kind == "momentum")
    names = {"momentum"};
  else if (spec.kind == "adam" || spec.kind == "adamw")
    names = {"m", "v"};
  else if (spec.kind == "adagrad")
    names = {"accumulator"};
  SmallVector<VariableOp> slots;
  for (StringRef slot : names) {
    InitializerAttr init = InitializerAttr::get(context, InitKind::zeros);
    if (slot == "accumulator" && spec.initialAccumulator != 0.0) {
      auto value = DenseElementsAttr::get(
          type, FloatAttr::get(type.getElementType(), spec.initialAccumulator));
      init = InitializerAttr::get(context, InitKind::constant, APFloat(0.0), APFloat(0.0),
                                  0, value);
    }
    std::string name = (variable.getSymName() + "/" + slot).str();
    slots.push_back(addVariable(name, type, init, false));
  }
  return slots;
}

LogicalResult OptimizerExpansion::update(Gradient &gradient, Value lr, Value step) {
  VariableOp variable = gradient.variable;
  Type element = variable.getTensorType().getElementType();
  if (!element.isF32()) {
    auto scalar = RankedTensorType::get({}, element);
    lr = builder.create<CastOp>(gb.location(), scalar, lr);
    step = builder.create<CastOp>(gb.location(), scalar, step);
  }
  SmallVector<VariableOp> slots = slotsFor(variable);
  Value param = read(variable);
  SmallVector<Value> slotValues;
  for (VariableOp slot : slots)
    slotValues.push_back(read(slot));
  Location loc = gb.location();
  SmallVector<Value> results;
  double decay = spec.kind == "adamw" ? spec.weightDecay : 0.0;
  Type type = variable.getTensorType();
  auto f64 = [&](double v) { return builder.getF64FloatAttr(v); };
  if (gradient.ids) {
    OptimizerKind kind = spec.kind == "sgd"        ? OptimizerKind::sgd
                         : spec.kind == "momentum" ? OptimizerKind::momentum
                         : spec.kind == "adagrad"  ? OptimizerKind::adagrad
                                                   : OptimizerKind::adam;
    SmallVector<Type> slotTypes(slots.size(), variable.getTensorType());
    auto apply = builder.create<SparseApplyOp>(
        loc, variable.getTensorType(), slotTypes,
        OptimizerKindAttr::get(module.getContext(), kind), param, slotValues, gradient.ids,
        gradient.rows, lr, step, finite,
        builder.getF64FloatAttr(spec.momentum),
        spec.nesterov ? builder.getUnitAttr() : UnitAttr(),
        builder.getF64FloatAttr(spec.beta1), builder.getF64FloatAttr(spec.beta2),
        builder.getF64FloatAttr(spec.epsilon), builder.getF64FloatAttr(decay),
        spec.lazySparse ? UnitAttr() : builder.getUnitAttr());
    results.assign(apply->result_begin(), apply->result_end());
  } else if (spec.kind == "sgd") {
    results = {builder.create<ApplySgdOp>(loc, type, param, gradient.dense, lr).getResult()};
  } else if (spec.kind == "momentum") {
    auto apply = builder.create<ApplyMomentumOp>(
        loc, type, type, param, slotValues[0], gradient.dense, lr, f64(spec.momentum),
        spec.nesterov ? builder.getUnitAttr() : UnitAttr());
    results.assign(apply->result_begin(), apply->result_end());
  } else if (spec.kind == "adam" || spec.kind == "adamw") {
    auto apply = builder.create<ApplyAdamOp>(
        loc, type, type, type, param, slotValues[0], slotValues[1], gradient.dense, lr, step,
        f64(spec.beta1), f64(spec.beta2), f64(spec.epsilon), f64(decay));
    results.assign(apply->result_begin(), apply->result_end());
  } else if (spec.kind == "adagrad") {
    auto apply = builder.create<ApplyAdagradOp>(loc, type, type, param, slotValues[0],
                                                gradient.dense, lr, f64(spec.epsilon));
    results.assign(apply->result_begin(), apply->result_end());
  } else {
    return train.emitOpError("unknown optimizer '") << spec.kind << "'";
  }
  // A row update skips itself (`when`), in place: no select against the
  // old table, which would keep a copy of it alive.
  auto assignResult = [&](VariableOp target, Value value) {
    gradient.ids ? assignAlways(target, value) : assign(target, value);
  };
  assignResult(variable, results[0]);
  for (auto [slot, value] : llvm::zip(slots, llvm::drop_begin(results)))
    assignResult(slot, value);
  return success();
}

LogicalResult OptimizerExpansion::run() {
  if (module.lookupSymbol(kStepVariable))
    return module.emitError("the model already has a variable named '")
           << kStepVariable << "', which the optimizer's step counter needs";
  if (failed(collectGradients()))
    return failure();
  findReads();
  bool scaled = usesLossScaling(module);
  if (scaled && failed(unscaleGradients()))
    return failure();
  Value step = countStep();
  Value lr = learningRate(step);
  if (spec.clipGlobalNorm > 0)
    clipGradients();
  for (Gradient &gradient : gradients)
    if (failed(update(gradient, lr, step)))
      return failure();
  if (scaled)
    updateLossScale();

  MLIRContext *context = module.getContext();
  kept.push_back(lr);
  keptAttrs.push_back(DictionaryAttr::get(
      context, {NamedAttribute(StringAttr::get(context, KilnDialect::kNameAttrName),
                               StringAttr::get(context, "learning_rate"))}));
  setFunctionResults(train, kept, keptAttrs);
  return success();
}

struct ExpandOptimizerPass
    : public kiln::impl::KilnExpandOptimizerBase<ExpandOptimizerPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto spec = module->getAttrOfType<DictionaryAttr>(KilnDialect::kTrainSpecAttrName);
    auto train = module.lookupSymbol<func::FuncOp>("train_step");
    if (!spec || !train) {
      module.emitError("kiln-expand-optimizer needs a train spec and a @train_step "
                       "(run kiln-autodiff first)");
      return signalPassFailure();
    }
    // Parameter servers apply the optimizer (kiln-insert-ps-ops).
    if (trainsWithParameterServers(module))
      return;
    OptimizerSpec optimizer = OptimizerSpec::from(spec.getAs<DictionaryAttr>("optimizer"));
    if (failed(OptimizerExpansion(module, train, optimizer).run()))
      return signalPassFailure();
  }
};

} // namespace
