//===- AccumulateGradients.cpp - The kiln-accumulate-gradients pass -------===//
//
// With `accumulate_steps` N > 1 in the train spec, one update uses the
// gradients of N micro-batches. kiln-autodiff's @train_step becomes
// @accumulate_step, run once per micro-batch: it returns the loss as before
// and adds its gradients into variables instead of returning them. A new
// @train_step without feeds turns the accumulators back into the gradients
// kiln-expand-optimizer consumes:
//
//   - a dense gradient is summed into `<var>/gradient_sum`; @train_step
//     returns the sum / N and zeroes the sum;
//   - a sparse gradient (K ids and rows per micro-batch) is shifted into
//     `<var>/gradient_ids` [N*K] and `<var>/gradient_rows` [N*K, ...]:
//     after N micro-batches they hold every micro-batch's ids and rows in
//     order; @train_step returns the ids and the rows / N.
//
// Each micro-batch's loss is its mean, so sum / N is the gradient of the
// mean over all N micro-batches: one update equals one batch N times larger.
//
//===----------------------------------------------------------------------===//

#include "passes/Graph/Passes.h"

#include "dialects/Kiln/KilnOps.h"
#include "dialects/Kiln/TrainSpec.h"
#include "passes/Graph/GradientBuilder.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/MapVector.h"

namespace kiln {
#define GEN_PASS_DEF_KILNACCUMULATEGRADIENTS
#include "passes/Graph/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

constexpr llvm::StringLiteral kAccumulateProgram = "accumulate_step";

/// One gradient result of @train_step: which variable, which part.
struct GradientResult {
  unsigned index;
  FlatSymbolRefAttr variable;
  StringRef kind; // kGradientAttr, kGradientIndicesAttr or kGradientRowsAttr
};

class Accumulation {
public:
  Accumulation(ModuleOp module, func::FuncOp train, int64_t steps)
      : module(module), micro(train), steps(steps) {}

  LogicalResult run();

private:
  VariableOp addVariable(const Twine &name, RankedTensorType type);
  /// Adds `g` into the accumulator in @accumulate_step.
  void accumulate(GradientBuilder &gb, const GradientResult &result, Value g,
                  VariableOp accumulator);
  /// The gradient @train_step returns for `result`, from its accumulator.
  Value gradientFrom(GradientBuilder &gb, const GradientResult &result,
                     VariableOp accumulator);

  ModuleOp module;
  func::FuncOp micro;
  int64_t steps;
};

VariableOp Accumulation::addVariable(const Twine &name, RankedTensorType type) {
  OpBuilder builder(micro);
  return builder.create<VariableOp>(
      micro.getLoc(), name.str(), type,
      InitializerAttr::get(module.getContext(), InitKind::zeros),
      /*trainable=*/false);
}

void Accumulation::accumulate(GradientBuilder &gb, const GradientResult &result,
                              Value g, VariableOp accumulator) {
  OpBuilder &b = gb.builder();
  Location loc = gb.location();
  RankedTensorType type = accumulator.getTensorType();
  Value old = b.create<ReadOp>(loc, type, accumulator.getSymName());
  Value next;
  if (result.kind == kGradientAttr) {
    next = gb.add(old, g);
  } else {
    // Drop the oldest micro-batch's K entries, append this one's.
    int64_t k = tensorType(g).getDimSize(0);
    SmallVector<int64_t> start(type.getRank(), 0), limit(type.getShape()),
        step(type.getRank(), 1);
    start[0] = k;
    Value kept = b.create<SliceOp>(loc, old, start, limit, step);
    next = b.create<ConcatOp>(loc, ValueRange{kept, g}, 0);
  }
  b.create<AssignOp>(loc, accumulator.getSymName(), next);
}

Value Accumulation::gradientFrom(GradientBuilder &gb, const GradientResult &result,
                                 VariableOp accumulator) {
  OpBuilder &b = gb.builder();
  Location loc = gb.location();
  RankedTensorType type = accumulator.getTensorType();
  Value stored = b.create<ReadOp>(loc, type, accumulator.getSymName());
  if (result.kind == kGradientIndicesAttr)
    return stored;
  Value mean = gb.scale(stored, 1.0 / static_cast<double>(steps));
  if (result.kind == kGradientAttr) // The next update starts from zero.
    b.create<AssignOp>(loc, accumulator.getSymName(), gb.scale(stored, 0.0));
  return mean;
}

LogicalResult Accumulation::run() {
  auto ret = llvm::cast<func::ReturnOp>(micro.getBody().back().getTerminator());
  SmallVector<GradientResult> gradients;
  SmallVector<Value> kept;
  SmallVector<DictionaryAttr> keptAttrs;
  for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
    DictionaryAttr attrs = micro.getResultAttrDict(i);
    GradientResult result{static_cast<unsigned>(i), {}, {}};
    for (StringRef kind : {kGradientAttr, kGradientIndicesAttr, kGradientRowsAttr})
      if (auto ref = attrs ? attrs.getAs<FlatSymbolRefAttr>(kind) : FlatSymbolRefAttr()) {
        result.variable = ref;
        result.kind = kind;
      }
    if (result.variable) {
      gradients.push_back(result);
      continue;
    }
    kept.push_back(value);
    keptAttrs.push_back(attrs ? attrs : DictionaryAttr::get(module.getContext()));
  }
  if (gradients.empty())
    return micro.emitOpError("returns no gradients: run kiln-autodiff first");

  MLIRContext *context = module.getContext();
  // The new @train_step, after @accumulate_step; its type is set once its
  // results (the accumulated gradients) are built.
  SmallVector<DictionaryAttr> gradientAttrs;
  for (const GradientResult &result : gradients)
    gradientAttrs.push_back(micro.getResultAttrDict(result.index));
  OpBuilder moduleBuilder(context);
  moduleBuilder.setInsertionPointAfter(micro);
  auto train = moduleBuilder.create<func::FuncOp>(
      micro.getLoc(), "train_step", FunctionType::get(context, {}, {}));
  micro.setSymName(kAccumulateProgram);
  OpBuilder applyBuilder(context);
  applyBuilder.setInsertionPointToStart(train.addEntryBlock());
  GradientBuilder applyGb(applyBuilder, micro.getLoc());
  OpBuilder microBuilder(ret);
  GradientBuilder microGb(microBuilder, micro.getLoc());

  SmallVector<Value> applied;
  for (const GradientResult &result : gradients) {
    Value g = ret.getOperand(result.index);
    RankedTensorType type = tensorType(g);
    StringRef suffix = result.kind == kGradientAttr          ? "gradient_sum"
                       : result.kind == kGradientIndicesAttr ? "gradient_ids"
                                                             : "gradient_rows";
    if (result.kind != kGradientAttr) {
      SmallVector<int64_t> shape(type.getShape());
      shape[0] *= steps;
      type = RankedTensorType::get(shape, type.getElementType());
    }
    std::string name = (result.variable.getValue() + "/" + suffix).str();
    if (module.lookupSymbol(name))
      return module.emitError("the model already has a variable named '")
             << name << "', which gradient accumulation needs";
    VariableOp accumulator = addVariable(name, type);
    accumulate(microGb, result, g, accumulator);
    applied.push_back(gradientFrom(applyGb, result, accumulator));
  }
  applyBuilder.create<func::ReturnOp>(micro.getLoc(), applied);
  train.setType(FunctionType::get(context, {}, ValueRange(applied).getTypes()));
  train.setAllResultAttrs(gradientAttrs);
  setFunctionResults(micro, kept, keptAttrs);
  return success();
}

struct AccumulateGradientsPass
    : public kiln::impl::KilnAccumulateGradientsBase<AccumulateGradientsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto spec = module->getAttrOfType<DictionaryAttr>(KilnDialect::kTrainSpecAttrName);
    auto steps = spec ? spec.getAs<IntegerAttr>("accumulate_steps") : IntegerAttr();
    if (!steps || steps.getInt() <= 1)
      return;
    auto train = module.lookupSymbol<func::FuncOp>("train_step");
    if (!train) {
      module.emitError("kiln-accumulate-gradients needs a @train_step (run "
                       "kiln-autodiff first)");
      return signalPassFailure();
    }
    if (module.lookupSymbol(kAccumulateProgram)) {
      module.emitError("the module already has an @") << kAccumulateProgram;
      return signalPassFailure();
    }
    if (failed(Accumulation(module, train, steps.getInt()).run()))
      return signalPassFailure();
  }
};

} // namespace
