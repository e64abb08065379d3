//===- LossScaling.cpp - The fp16 loss scale's check and update -----------===//
//
// Shared by kiln-expand-optimizer (the update applied in the step) and
// kiln-insert-ps-ops (the servers apply it: the step checks what it pushes,
// which the servers divide by the scale, and the runtime sends a skip
// marker instead of gradients that are not finite).
//
//===----------------------------------------------------------------------===//

#include "passes/Graph/LossScaling.h"

#include "passes/Graph/GradientBuilder.h"

using namespace mlir;

namespace kiln {

Value allFinite(GradientBuilder &gb, ValueRange gradients, ValueRange checks) {
  // A sum is finite when every element is (or the sum overflows: a step to
  // skip too); x - x is 0 then, NaN otherwise. A check is 0 or NaN already.
  Value total;
  for (Value check : checks)
    total = total ? gb.add(total, check) : check;
  for (Value g : gradients) {
    SmallVector<int64_t> axes;
    for (int64_t d = 0; d < tensorType(g).getRank(); ++d)
      axes.push_back(d);
    Value sum = gb.reduceSum(g, axes, false);
    total = total ? gb.add(total, sum) : sum;
  }
  Value difference = gb.sub(total, total);
  return gb.compare(ComparePredicate::eq, difference, gb.splatLike(difference, 0.0));
}

void unscaleGradients(GradientBuilder &gb, Value lossScale, MutableArrayRef<Value> gradients) {
  Value inverse = gb.div(gb.splatLike(lossScale, 1.0), lossScale);
  for (Value &g : gradients)
    g = gb.mul(g, gb.broadcastTo(inverse, tensorType(g)));
}

void updateLossScale(GradientBuilder &gb, ModuleOp module, func::FuncOp train, Value lossScale,
                     Value finite, SmallVectorImpl<Value> &results,
                     SmallVectorImpl<DictionaryAttr> &resultAttrs) {
  OpBuilder &builder = gb.builder();
  MLIRContext *context = module.getContext();
  auto type = llvm::cast<RankedTensorType>(lossScale.getType());
  OpBuilder moduleBuilder(module.getBodyRegion());
  moduleBuilder.setInsertionPoint(train);
  auto counter = moduleBuilder.create<VariableOp>(
      train.getLoc(), kGoodStepsVariable, type,
      InitializerAttr::get(context, InitKind::zeros), /*trainable=*/false);
  Location loc = gb.location();
  auto select = [&](Value condition, Value x, Value y) {
    return builder.create<SelectOp>(loc, condition, x, y).getResult();
  };
  Value good = builder.create<ReadOp>(loc, type, counter.getSymName());
  Value zero = gb.splatLike(good, 0.0);
  Value counted = select(finite, gb.add(good, gb.splatLike(good, 1.0)), zero);
  Value grow = gb.compare(ComparePredicate::ge, counted, gb.splatLike(good, kGrowthInterval));
  Value next = select(finite, select(grow, gb.scale(lossScale, 2.0), lossScale),
                      gb.scale(lossScale, 0.5));
  builder.create<AssignOp>(loc, kLossScaleVariable, next);
  builder.create<AssignOp>(loc, counter.getSymName(), select(grow, zero, counted));
  auto named = [&](StringRef name) {
    return DictionaryAttr::get(
        context, {NamedAttribute(StringAttr::get(context, KilnDialect::kNameAttrName),
                                 StringAttr::get(context, name))});
  };
  results.push_back(next);
  resultAttrs.push_back(named(kLossScaleOutput));
  results.push_back(select(finite, zero, gb.splatLike(good, 1.0)));
  resultAttrs.push_back(named(kSkippedStepOutput));
}

} // namespace kiln
