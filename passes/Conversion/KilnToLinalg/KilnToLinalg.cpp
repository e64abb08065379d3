//===- KilnToLinalg.cpp - The convert-kiln-to-linalg pass -----------------===//

#include "passes/Conversion/Passes.h"

#include "dialects/Kiln/KilnOps.h"
#include "passes/Conversion/KilnToLinalg/Patterns.h"

#include "mlir/Transforms/DialectConversion.h"

namespace kiln {
#define GEN_PASS_DEF_CONVERTKILNTOLINALG
#include "passes/Conversion/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// Reports each kiln op with a dynamic dimension: the patterns build
/// static-shaped linalg ops and cannot lower it.
LogicalResult checkStaticShapes(Operation *root) {
  bool allStatic = true;
  root->walk([&](Operation *op) {
    if (!llvm::isa<KilnDialect>(op->getDialect()) ||
        llvm::isa<VariableOp, ReadOp>(op))
      return;
    auto isDynamic = [](Type type) {
      auto tensor = llvm::dyn_cast<RankedTensorType>(type);
      return tensor && !tensor.hasStaticShape();
    };
    auto dynamic = llvm::find_if(op->getOperandTypes(), isDynamic);
    Type offending = dynamic != op->operand_type_end() ? *dynamic : Type();
    if (!offending) {
      auto result = llvm::find_if(op->getResultTypes(), isDynamic);
      if (result != op->result_type_end())
        offending = *result;
    }
    if (!offending)
      return;
    op->emitOpError("expects static shapes (run kiln-infer-shapes first), got ")
        << offending;
    allStatic = false;
  });
  return success(allStatic);
}

struct ConvertKilnToLinalgPass
    : public kiln::impl::ConvertKilnToLinalgBase<ConvertKilnToLinalgPass> {
  void runOnOperation() override {
    if (failed(checkStaticShapes(getOperation())))
      return signalPassFailure();
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    populateElementwiseToLinalgPatterns(patterns);
    populateShapeToLinalgPatterns(patterns);
    populateReductionToLinalgPatterns(patterns);
    populateNormalizationToLinalgPatterns(patterns);
    populateGatherAndLossToLinalgPatterns(patterns);
    populateMatmulToLinalgPatterns(patterns);
    populateTrainingToLinalgPatterns(patterns);
    populateWindowToLinalgPatterns(patterns);
    populateFusionToLinalgPatterns(patterns);

    ConversionTarget target(*context);
    target.addLegalDialect<arith::ArithDialect, linalg::LinalgDialect,
                           math::MathDialect, scf::SCFDialect,
                           tensor::TensorDialect>();
    target.addIllegalDialect<KilnDialect>();
    target.addLegalOp<VariableOp, ReadOp>();
    if (failed(applyPartialConversion(getOperation(), target, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
