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
RankedTensorType refineType(RankedTensorType current, Type inferred) {
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
  return inferElementwiseType(
      ShapeDiag(op->getLoc(), op->getName().getStringRef()), shapes);
}

/// A reshape result with exactly one `?` gets it from the element count.
/// Nothing to say is `std::nullopt`; a count the static sizes cannot fill is
/// an error.
FailureOr<std::optional<RankedTensorType>> inferReshape(ReshapeOp op) {
  auto operand = llvm::cast<RankedTensorType>(op.getOperand().getType());
  RankedTensorType result = op.getType();
  FailureOr<int64_t> count = staticElementCount(operand.getShape());
  if (failed(count) || result.getNumDynamicDims() != 1)
    return std::optional<RankedTensorType>();
  int64_t known = 1;
  for (int64_t d : result.getShape())
    if (!ShapedType::isDynamic(d))
      known *= d;
  if (known == 0 && *count == 0)
    return std::optional<RankedTensorType>();
  if (known == 0 || *count % known != 0)
    return op.emitOpError("cannot reshape ")
           << *count << " elements to " << result;
  SmallVector<int64_t> shape(result.getShape());
  for (int64_t &d : shape)
    if (ShapedType::isDynamic(d))
      d = *count / known;
  return std::optional<RankedTensorType>(
      RankedTensorType::get(shape, result.getElementType()));
}

/// The types the op's rule infers for its results, or nothing when it has
/// no rule or nothing to say.
FailureOr<SmallVector<Type>> inferResultTypes(Operation *op) {
  SmallVector<Type> types;
  // Before InferTypeOpInterface: ODS gives same-type ops an inference that
  // returns the first operand's type, which neither checks the other
  // operands nor takes a size only they know.
  bool sameShape = op->hasTrait<OpTrait::SameOperandsAndResultType>() ||
                   op->hasTrait<OpTrait::SameOperandsAndResultShape>();
  if (sameShape && op->getNumResults() == 1 && op->getNumOperands() > 0) {
    Type elementType = getElementTypeOrSelf(op->getResult(0).getType());
    FailureOr<RankedTensorType> joined = joinOperandShapes(op, elementType);
    if (failed(joined))
      return failure();
    types.push_back(*joined);
    return types;
  }
  if (auto inferable = llvm::dyn_cast<InferTypeOpInterface>(op)) {
    if (failed(inferable.inferReturnTypes(
            op->getContext(), op->getLoc(), op->getOperands(),
            op->getRawDictionaryAttrs(), op->getPropertiesStorage(),
            op->getRegions(), types)))
      return failure();
    return types;
  }
  if (auto reshape = llvm::dyn_cast<ReshapeOp>(op)) {
    FailureOr<std::optional<RankedTensorType>> type = inferReshape(reshape);
    if (failed(type))
      return failure();
    if (*type)
      types.push_back(**type);
  }
  return types;
}

bool isKilnOp(Operation *op) {
  return llvm::isa_and_nonnull<KilnDialect>(op->getDialect());
}

bool haveOneType(ValueRange values) {
  return llvm::all_equal(
      llvm::map_range(values, [](Value v) { return v.getType(); }));
}

/// Refines the types in one function, then takes back each refinement that
/// would leave IR the verifier or the parser rejects.
class FunctionRefiner {
public:
  FunctionRefiner(func::FuncOp func, bool signatureFixed)
      : func(func), signatureFixed(signatureFixed) {}

  LogicalResult run() {
    WalkResult walk = func.walk([&](Operation *op) {
      return failed(refineOp(op)) ? WalkResult::interrupt()
                                  : WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();
    do {
      changed = false;
      func.walk([&](Operation *op) { repair(op); });
    } while (changed);
    if (!signatureFixed)
      updateResultTypes();
    return success();
  }

private:
  /// Gives each result of a kiln op the more static type its rule infers.
  LogicalResult refineOp(Operation *op) {
    if (!isKilnOp(op))
      return success();
    FailureOr<SmallVector<Type>> inferred = inferResultTypes(op);
    if (failed(inferred))
      return failure();
    for (auto [result, type] : llvm::zip(op->getResults(), *inferred))
      if (auto current = llvm::dyn_cast<RankedTensorType>(result.getType()))
        setType(result, refineType(current, type));
    return success();
  }

  /// Undoes refinements `op` cannot take: values an op outside kiln uses
  /// (its types were checked against the unrefined ones), values returned
  /// from a function whose signature stays, and operands and results that
  /// must share one type (the assembly format prints it once) but no longer
  /// do. Only ever moves a type back towards its original, so it terminates.
  void repair(Operation *op) {
    if (!isKilnOp(op)) {
      if (!llvm::isa<func::ReturnOp>(op) || signatureFixed)
        revert(op->getOperands());
      return;
    }
    if (op->hasTrait<OpTrait::SameOperandsAndResultType>()) {
      SmallVector<Value> values(op->getOperands());
      llvm::append_range(values, op->getResults());
      if (!haveOneType(values))
        revert(values);
    }
    if (op->hasTrait<OpTrait::SameTypeOperands>() &&
        !haveOneType(op->getOperands()))
      revert(op->getOperands());
    if (auto select = llvm::dyn_cast<SelectOp>(op)) {
      Value values[] = {select.getOnTrue(), select.getOnFalse()};
      if (!haveOneType(values))
        revert(values);
    }
    // The parser infers these results from the operands, so the printed IR
    // only reads back when the result is exactly what the rule infers.
    if (llvm::isa<CompareOp, SelectOp>(op)) {
      FailureOr<SmallVector<Type>> inferred = inferResultTypes(op);
      if (succeeded(inferred))
        setType(op->getResult(0), inferred->front());
    }
  }

  void setType(Value value, Type type) {
    if (value.getType() == type)
      return;
    original.try_emplace(value, value.getType());
    value.setType(type);
    changed = true;
  }

  void revert(ValueRange values) {
    for (Value value : values)
      if (auto it = original.find(value); it != original.end())
        setType(value, it->second);
  }

  /// Makes the function's result types those its return op now produces.
  void updateResultTypes() {
    auto ret =
        llvm::cast<func::ReturnOp>(func.getBody().back().getTerminator());
    func.setType(FunctionType::get(func.getContext(), func.getArgumentTypes(),
                                   ret.getOperandTypes()));
  }

  func::FuncOp func;
  /// Whether the result types must stay: the function is called, or returns
  /// from more than one block.
  bool signatureFixed;
  /// The type each refined value had before the pass.
  DenseMap<Value, Type> original;
  bool changed = false;
};

struct InferShapesPass
    : public kiln::impl::KilnInferShapesBase<InferShapesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      bool signatureFixed = !func.getBody().hasOneBlock() ||
                            !SymbolTable::symbolKnownUseEmpty(func, module);
      if (failed(FunctionRefiner(func, signatureFixed).run()))
        return signalPassFailure();
    }
  }
};

} // namespace
