//===- InferShapes.cpp - Refine `?` dimensions from shape rules -----------===//

#include "passes/Graph/Passes.h"

#include "dialects/Kiln/KilnOps.h"

#include "mlir/Interfaces/InferTypeOpInterface.h"

namespace kiln {
#define GEN_PASS_DEF_KILNINFERSHAPES
#include "passes/Graph/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// `current` with each `?` replaced by the matching static size of
/// `inferred`, when the two are compatible; otherwise `current`.
RankedTensorType refine(RankedTensorType current, Type inferred) {
  auto from = llvm::dyn_cast<RankedTensorType>(inferred);
  if (!from || from.getRank() != current.getRank())
    return current;
  SmallVector<int64_t> shape(current.getShape());
  for (auto [dim, known] : llvm::zip(shape, from.getShape()))
    if (ShapedType::isDynamic(dim))
      dim = known;
  return RankedTensorType::get(shape, current.getElementType(),
                               current.getEncoding());
}

/// The shape every operand and result of a same-shape op shares, as a type
/// with `elementType`.
FailureOr<RankedTensorType> joinOperandShapes(Operation *op, Type elementType) {
  SmallVector<Type> shapes;
  for (Value operand : op->getOperands()) {
    auto type = llvm::dyn_cast<RankedTensorType>(operand.getType());
    if (!type)
      return failure();
    shapes.push_back(RankedTensorType::get(type.getShape(), elementType));
  }
  return inferElementwiseType(ShapeDiag(op->getLoc(), op->getName().getStringRef()),
                              shapes);
}

/// A reshape result with exactly one `?` gets it from the element count.
std::optional<RankedTensorType> inferReshape(ReshapeOp op) {
  auto operand = llvm::cast<RankedTensorType>(op.getOperand().getType());
  RankedTensorType result = op.getType();
  FailureOr<int64_t> count = staticElementCount(operand.getShape());
  if (failed(count) || result.getNumDynamicDims() != 1)
    return std::nullopt;
  int64_t known = 1;
  for (int64_t d : result.getShape())
    if (!ShapedType::isDynamic(d))
      known *= d;
  if (known == 0 || *count % known != 0)
    return std::nullopt;
  SmallVector<int64_t> shape(result.getShape());
  for (int64_t &d : shape)
    if (ShapedType::isDynamic(d))
      d = *count / known;
  return RankedTensorType::get(shape, result.getElementType());
}

/// The types the op's rule infers for its results, or nothing when it has
/// no rule or nothing to say.
FailureOr<SmallVector<Type>> inferResultTypes(Operation *op) {
  SmallVector<Type> types;
  if (auto inferable = llvm::dyn_cast<InferTypeOpInterface>(op)) {
    if (failed(inferable.inferReturnTypes(
            op->getContext(), op->getLoc(), op->getOperands(),
            op->getRawDictionaryAttrs(), op->getPropertiesStorage(),
            op->getRegions(), types)))
      return failure();
    return types;
  }
  if (auto reshape = llvm::dyn_cast<ReshapeOp>(op)) {
    if (std::optional<RankedTensorType> type = inferReshape(reshape))
      types.push_back(*type);
    return types;
  }
  bool sameShape = op->hasTrait<OpTrait::SameOperandsAndResultType>() ||
                   op->hasTrait<OpTrait::SameOperandsAndResultShape>();
  if (sameShape && op->getNumResults() == 1 && op->getNumOperands() > 0) {
    Type elementType = getElementTypeOrSelf(op->getResult(0).getType());
    FailureOr<RankedTensorType> joined = joinOperandShapes(op, elementType);
    if (failed(joined))
      return failure();
    types.push_back(*joined);
  }
  return types;
}

struct InferShapesPass
    : public kiln::impl::KilnInferShapesBase<InferShapesPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      WalkResult walk = func.walk([](Operation *op) {
        if (op->getDialect() && !llvm::isa<KilnDialect>(op->getDialect()))
          return WalkResult::advance();
        FailureOr<SmallVector<Type>> inferred = inferResultTypes(op);
        if (failed(inferred))
          return WalkResult::interrupt();
        for (auto [result, type] : llvm::zip(op->getResults(), *inferred))
          if (auto current = llvm::dyn_cast<RankedTensorType>(result.getType()))
            result.setType(refine(current, type));
        return WalkResult::advance();
      });
      if (walk.wasInterrupted())
        return signalPassFailure();
      updateResultTypes(func);
    }
  }

  /// Makes the function's result types those its return ops now produce.
  static void updateResultTypes(func::FuncOp func) {
    auto ret = llvm::cast<func::ReturnOp>(func.getBody().back().getTerminator());
    func.setType(FunctionType::get(func.getContext(), func.getArgumentTypes(),
                                   ret.getOperandTypes()));
  }
};

} // namespace
