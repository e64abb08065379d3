//===- MixedPrecision.cpp - Matrix products in bf16 or f16 ----------------===//
//
// kiln-mixed-precision: marks the module's f32 matrix products with the
// 16-bit type their inputs are rounded to (Passes.td says what stays f32).
//
//===----------------------------------------------------------------------===//

#include "passes/Optimize/Passes.h"

#include "dialects/Kiln/ComputePrecision.h"
#include "dialects/Kiln/KilnOps.h"
#include "dialects/Kiln/TrainSpec.h"
#include "passes/Graph/LossScaling.h"

#include "mlir/IR/Builders.h"

namespace kiln {
#define GEN_PASS_DEF_KILNMIXEDPRECISION
#include "passes/Optimize/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

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
      auto elementType = [](Value value) {
        return llvm::cast<ShapedType>(value.getType()).getElementType();
      };
      if (elementType(matmul.getLhs()).isF32() && elementType(matmul.getRhs()).isF32())
        matmul->setAttr(kComputePrecisionAttrName, TypeAttr::get(type));
    });
  }
};

} // namespace
