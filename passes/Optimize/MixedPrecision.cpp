//===- MixedPrecision.cpp - Matrix products in bf16 or f16 ----------------===//
//
// kiln-mixed-precision: marks the module's f32 matrix products (and in bf16
// its convolutions) with the 16-bit type their inputs are rounded to
// (Passes.td says what stays f32).
//
//===----------------------------------------------------------------------===//

#include "passes/Optimize/Passes.h"

#include "dialects/Kiln/ComputePrecision.h"
#include "dialects/Kiln/KilnOps.h"
#include "dialects/Kiln/TrainSpec.h"
#include "passes/Graph/LossScaling.h"
#include "passes/Optimize/Fusible.h"
#include "passes/Optimize/SavedActivations.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/SetVector.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace kiln {
#define GEN_PASS_DEF_KILNMIXEDPRECISION
#include "passes/Optimize/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// Whether a convolution (or gradient) gains from bf16, by its input
/// channels per group (its filter's second dimension). kiln-bench's
/// "convolutions" section on an EPYC Zen 4, [32, C, 28, 28] 3x3 to 32
/// channels, f32 / bf16 time: C = 1 forward 1.0-1.1x, filter gradient 0.54x
/// (slower); C = 4 1.54x and 2.31x; C = 8 1.68x and 1.49x; C >= 16
/// 1.5-1.85x for all three kinds. A data gradient with
/// fewer than 16 channels runs oneDNN's plain kernel, which the runtime
/// keeps f32 (cpu::kMinBlockedInputChannels), so it is not marked either.
bool gainsFromBF16(Operation *op) {
  Value filter = llvm::isa<ConvBackwardFilterOp>(op) ? op->getResult(0) : op->getOperand(1);
  int64_t channels = llvm::cast<RankedTensorType>(filter.getType()).getDimSize(1);
  return channels >= (llvm::isa<ConvBackwardDataOp>(op) ? 16 : 4);
}

/// The precision the train spec asks for, as the option spells it.
std::string specPrecision(ModuleOp module) {
  StringRef precision = trainSpecPrecision(module);
  return precision == "bf16_mixed"   ? "bf16"
         : precision == "fp16_mixed" ? "fp16"
                                     : "fp32";
}

class KilnMixedPrecisionPass
    : public kiln::impl::KilnMixedPrecisionBase<KilnMixedPrecisionPass> {
public:
  using KilnMixedPrecisionBase::KilnMixedPrecisionBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::string chosen = precision.empty() ? specPrecision(module) : precision.getValue();
    if (chosen == "fp32")
      return;
    if (chosen != "bf16" && chosen != "fp16") {
      module.emitError("unknown precision '") << chosen << "' (expected fp32, bf16 or fp16)";
      return signalPassFailure();
    }
    if (chosen == "fp16" && module.lookupSymbol("train_step") &&
        !module.lookupSymbol(kLossScaleVariable)) {
      module.emitError("fp16 training needs dynamic loss scaling: the train spec's precision "
                       "must be fp16_mixed when the training passes run (kilnc --precision=fp16 "
                       "sets it)");
      return signalPassFailure();
    }
    Builder builder(module.getContext());
    Type type = chosen == "bf16" ? Type(builder.getBF16Type()) : Type(builder.getF16Type());
    module.walk([&](MatmulOp matmul) {
      if (elementType(matmul.getLhs()).isF32() && elementType(matmul.getRhs()).isF32())
        matmul->setAttr(kComputePrecisionAttrName, TypeAttr::get(type));
    });
    // bf16 convolutions: the runtime converts their f32 inputs as it lays
    // them out for oneDNN (f16 ones have no fast kernel on these CPUs).
    if (chosen == "bf16")
      module.walk([&](Operation *op) {
        if (llvm::isa<ConvOp, ConvBackwardDataOp, ConvBackwardFilterOp>(op) &&
            llvm::all_of(op->getOperands(), [](Value v) { return elementType(v).isF32(); }) &&
            gainsFromBF16(op))
          op->setAttr(kComputePrecisionAttrName, TypeAttr::get(type));
      });
    // bf16 products read their inputs rounded by the kernels that compute
    // them. f16 products are emulated on every CPU (the runtime rounds into
    // f32 buffers), so a 16-bit copy of their inputs would only add work.
    if (chosen == "bf16" && roundInKernels)
      module.walk([&](func::FuncOp func) { roundInputsWhereComputed(func, type); });
    // After the products' copies, which the saved values share.
    if (chosen == "bf16" && roundInKernels && storeActivations)
      for (StringRef step : {"train_step", "accumulate_step"})
        if (auto func = module.lookupSymbol<func::FuncOp>(step); func && !func.isExternal())
          storeSavedActivations(func, trainSpecLoss(module), type);
  }

private:
  /// Gives each marked product of `func` its inputs as `type` tensors: one
  /// kiln.cast per f32 value, however many products read it (a reshape
  /// reshapes the cast of its operand instead). A value an op fusion could
  /// compute is cast right after it (the cast joins its kernel), any other
  /// right before its first product.
  void roundInputsWhereComputed(func::FuncOp func, Type type) {
    DenseMap<Value, Value> rounded;
    SmallVector<Value> replaced;
    func.walk([&](MatmulOp matmul) {
      if (!computePrecisionOf(matmul))
        return;
      for (OpOperand *operand : {&matmul.getLhsMutable(), &matmul.getRhsMutable()})
        if (elementType(operand->get()).isF32()) {
          replaced.push_back(operand->get());
          operand->set(roundedValue(operand->get(), type, matmul, rounded));
        }
    });
    // A reshape only products read is dead now; left, it would keep its
    // f32 operand alive (a fusion would still write it out).
    llvm::SetVector<Operation *> candidates;
    for (Value value : replaced)
      if (Operation *def = value.getDefiningOp())
        candidates.insert(def);
    eraseDead(candidates);
  }

  /// Erases the side-effect-free ops among `worklist` that nothing reads,
  /// then the ops computing their operands the same way.
  static void eraseDead(llvm::SetVector<Operation *> &worklist) {
    llvm::SmallPtrSet<Operation *, 16> erased;
    while (!worklist.empty()) {
      Operation *op = worklist.pop_back_val();
      if (erased.contains(op) || !op->use_empty() || !isMemoryEffectFree(op))
        continue;
      for (Value operand : op->getOperands())
        if (Operation *def = operand.getDefiningOp(); def && !erased.contains(def))
          worklist.insert(def);
      erased.insert(op);
      op->erase();
    }
  }

  /// `value` as `type` (memoized in `rounded`), for the product `reader`.
  Value roundedValue(Value value, Type type, Operation *reader, DenseMap<Value, Value> &rounded) {
    if (Value done = rounded.lookup(value))
      return done;
    auto shaped = llvm::cast<RankedTensorType>(value.getType());
    Value result;
    Operation *def = value.getDefiningOp();
    if (auto reshape = llvm::dyn_cast_or_null<ReshapeOp>(def)) {
      Value source = roundedValue(reshape.getOperand(), type, reader, rounded);
      OpBuilder builder(source.getContext());
      builder.setInsertionPointAfterValue(source);
      result = builder.create<ReshapeOp>(reshape.getLoc(), shaped.clone(type), source);
    } else {
      OpBuilder builder(reader);
      if (def && isFusible(def))
        builder.setInsertionPointAfter(def);
      result = builder.create<CastOp>(value.getLoc(), shaped.clone(type), value);
    }
    rounded[value] = result;
    return result;
  }

  static Type elementType(Value value) {
    return llvm::cast<ShapedType>(value.getType()).getElementType();
  }
};

} // namespace
