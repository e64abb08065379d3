//===- KilnOps.cpp - kiln dialect ops: type inference and verifiers -------===//

#include "dialects/Kiln/KilnOps.h"

#include "dialects/Kiln/ComputePrecision.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/Support/Format.h"

using namespace mlir;
using namespace kiln;

#define GET_OP_CLASSES
#include "dialects/Kiln/KilnOps.cpp.inc"

namespace {
/// The diagnostic sink of an op's own shape rule.
template <typename OpTy>
ShapeDiag diagFor(std::optional<Location> loc) {
  return ShapeDiag(loc, OpTy::getOperationName());
}
} // namespace

//===----------------------------------------------------------------------===//
// Variables
//===----------------------------------------------------------------------===//

LogicalResult VariableOp::verify() {
  RankedTensorType type = getTensorType();
  if (!type.hasStaticShape())
    return emitOpError("expects a static shape, got ") << type;
  return getInitializer().verifyFor(type, [&] { return emitOpError(); });
}

LogicalResult ReadOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto variable = symbolTable.lookupNearestSymbolFrom<VariableOp>(
      getOperation(), getVariableAttr());
  if (!variable)
    return emitOpError("reads unknown variable ") << getVariableAttr();
  if (variable.getType() != getType())
    return emitOpError("expects result type ")
           << variable.getType() << " (the variable's), got " << getType();
  return success();
}

//===----------------------------------------------------------------------===//
// Type inference
//===----------------------------------------------------------------------===//

LogicalResult CompareOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  return appendInferred(inferCompareType(diagFor<CompareOp>(loc),
                                         adaptor.getLhs().getType(),
                                         adaptor.getRhs().getType()),
                        types);
}

LogicalResult SelectOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  return appendInferred(inferSelectType(diagFor<SelectOp>(loc),
                                        adaptor.getCondition().getType(),
                                        adaptor.getOnTrue().getType(),
                                        adaptor.getOnFalse().getType()),
                        types);
}

/// `type` with f32 elements where they are `precision`'s: a product marked
/// kiln.compute_precision reads inputs already rounded to that type as its
/// f32 inputs, and gives f32.
static Type asComputedFrom(Type type, Type precision) {
  auto tensor = llvm::dyn_cast<RankedTensorType>(type);
  if (!precision || !tensor || tensor.getElementType() != precision)
    return type;
  return tensor.clone(Float32Type::get(type.getContext()));
}

LogicalResult MatmulOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  Type precision;
  if (DictionaryAttr attrs = adaptor.getAttributes())
    if (auto attr = attrs.getAs<TypeAttr>(kComputePrecisionAttrName))
      precision = attr.getValue();
  return appendInferred(
      inferMatmulType(diagFor<MatmulOp>(loc),
                      asComputedFrom(adaptor.getLhs().getType(), precision),
                      asComputedFrom(adaptor.getRhs().getType(), precision),
                      adaptor.getTransposeA(), adaptor.getTransposeB()),
      types);
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  return appendInferred(inferTransposeType(diagFor<TransposeOp>(loc),
                                           adaptor.getOperand().getType(),
                                           adaptor.getPermutation()),
                        types);
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  return appendInferred(inferConcatType(diagFor<ConcatOp>(loc),
                                        adaptor.getInputs().getTypes(),
                                        adaptor.getAxis()),
                        types);
}

LogicalResult SliceOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  return appendInferred(inferSliceType(diagFor<SliceOp>(loc),
                                       adaptor.getOperand().getType(),
                                       adaptor.getStart(), adaptor.getLimit(),
                                       adaptor.getStep()),
                        types);
}



LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  Type bias = adaptor.getBias() ? adaptor.getBias().getType() : Type();
  return appendInferred(
      inferLayerNormType(diagFor<LayerNormOp>(loc),
                         adaptor.getInput().getType(),
                         adaptor.getScale().getType(), bias, adaptor.getAxis(),
                         adaptor.getEpsilon().convertToDouble()),
      types);
}

LogicalResult GatherOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  return appendInferred(inferGatherType(diagFor<GatherOp>(loc),
                                        adaptor.getTable().getType(),
                                        adaptor.getIndices().getType(),
                                        adaptor.getAxis()),
                        types);
}

LogicalResult SoftmaxCrossEntropyOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  return appendInferred(
      inferSoftmaxCrossEntropyType(diagFor<SoftmaxCrossEntropyOp>(loc),
                                   adaptor.getLogits().getType(),
                                   adaptor.getLabels().getType()),
      types);
}

LogicalResult SoftmaxCrossEntropyOp::verifyTargets(Operation *op, Value labels,
                                                   std::optional<int64_t> ignored,
                                                   FloatAttr smoothing) {
  Type element = llvm::cast<RankedTensorType>(labels.getType()).getElementType();
  unsigned width = element.getIntOrFloatBitWidth();
  if (ignored && width < 64 && !llvm::isIntN(width, *ignored))
    return op->emitOpError("expects an ignore_index that ")
           << element << " labels can hold, got " << *ignored;
  double e = smoothingOf(smoothing);
  if (!(e >= 0.0 && e <= 1.0)) {
    std::string text;
    llvm::raw_string_ostream(text) << llvm::format("%g", e);
    return op->emitOpError("expects a label_smoothing in [0, 1], got ") << text;
  }
  return success();
}

LogicalResult SoftmaxCrossEntropyOp::verify() {
  return verifyTargets(*this, getLabels(), getIgnoreIndex(), getLabelSmoothingAttr());
}

Value SoftmaxCrossEntropyOp::buildKept(OpBuilder &b, Location loc, Value labels,
                                       int64_t ignoreIndex, Type floatType) {
  auto labelsType = llvm::cast<RankedTensorType>(labels.getType());
  auto keptType = RankedTensorType::get(labelsType.getShape(), floatType);
  auto constant = [&](RankedTensorType type, Attribute value) -> Value {
    return b.create<ConstantOp>(loc, DenseElementsAttr::get(type, value));
  };
  Value ignored = constant(labelsType, b.getIntegerAttr(labelsType.getElementType(), ignoreIndex));
  Value kept = b.create<CompareOp>(loc, ComparePredicate::ne, labels, ignored);
  Value one = constant(keptType, b.getFloatAttr(floatType, 1.0));
  Value zero = constant(keptType, b.getFloatAttr(floatType, 0.0));
  return b.create<SelectOp>(loc, kept, one, zero);
}

//===----------------------------------------------------------------------===//
// Verifiers of type-defining ops
//===----------------------------------------------------------------------===//

LogicalResult SoftmaxOp::verify() {
  return inferSoftmaxType(diagFor<SoftmaxOp>(getLoc()), getType(), getAxis());
}

LogicalResult LogSoftmaxOp::verify() {
  return inferSoftmaxType(diagFor<LogSoftmaxOp>(getLoc()), getType(),
                          getAxis());
}

LogicalResult ReshapeOp::verify() {
  return verifyReshape(diagFor<ReshapeOp>(getLoc()), getOperand().getType(),
                       getType());
}

LogicalResult BroadcastOp::verify() {
  return verifyBroadcast(diagFor<BroadcastOp>(getLoc()), getOperand().getType(),
                         getType());
}
