//===- KilnTrainingOps.cpp - Verifiers of the training-step ops -----------===//

#include "dialects/Kiln/KilnOps.h"

#include <cmath>

using namespace mlir;
using namespace kiln;

namespace {

/// Checks that `lr` (and `step`, when given) have the parameter's element type.
LogicalResult verifyScalars(Operation *op, Value param, Value lr, Value step = {}) {
  Type element = llvm::cast<RankedTensorType>(param.getType()).getElementType();
  for (Value scalar : {lr, step}) {
    if (!scalar)
      continue;
    Type type = llvm::cast<RankedTensorType>(scalar.getType()).getElementType();
    if (type != element)
      return op->emitOpError("expects scalar operands of the parameter's element type ")
             << element << ", got " << type;
  }
  return success();
}

} // namespace

LogicalResult OneHotOp::verify() {
  auto indices = llvm::cast<RankedTensorType>(getIndices().getType());
  auto result = llvm::cast<RankedTensorType>(getType());
  if (result.getRank() != indices.getRank() + 1)
    return emitOpError("expects a result of rank ")
           << indices.getRank() + 1 << " (the indices' plus one), got " << result;
  for (int64_t i = 0; i < indices.getRank(); ++i)
    if (!ShapedType::isDynamic(indices.getDimSize(i)) &&
        !ShapedType::isDynamic(result.getDimSize(i)) &&
        indices.getDimSize(i) != result.getDimSize(i))
      return emitOpError("expects result dimension ") << i << " to be "
             << indices.getDimSize(i) << " (the indices'), got " << result.getDimSize(i);
  if (ShapedType::isDynamic(result.getShape().back()))
    return emitOpError("needs a static depth (the result's last dimension)");
  return success();
}

LogicalResult ScatterAddRowsOp::verify() {
  auto rows = llvm::cast<RankedTensorType>(getRows().getType());
  auto ids = llvm::cast<RankedTensorType>(getIds().getType());
  auto result = llvm::cast<RankedTensorType>(getType());
  if (ids.getRank() != 1)
    return emitOpError("expects ids of rank 1, got ") << ids;
  if (rows.getRank() < 1 || result.getRank() != rows.getRank())
    return emitOpError("expects rows and a result of one rank (at least 1), got ")
           << rows << " and " << result;
  if (rows.getElementType() != result.getElementType())
    return emitOpError("expects the result element type ") << rows.getElementType();
  if (!ShapedType::isDynamic(ids.getDimSize(0)) && !ShapedType::isDynamic(rows.getDimSize(0)) &&
      ids.getDimSize(0) != rows.getDimSize(0))
    return emitOpError("expects one id per row: ") << ids.getDimSize(0) << " ids, "
                                                   << rows.getDimSize(0) << " rows";
  for (int64_t d = 1; d < rows.getRank(); ++d)
    if (!ShapedType::isDynamic(rows.getDimSize(d)) &&
        !ShapedType::isDynamic(result.getDimSize(d)) && rows.getDimSize(d) != result.getDimSize(d))
      return emitOpError("expects result dimension ")
             << d << " to be " << rows.getDimSize(d) << " (the rows'), got "
             << result.getDimSize(d);
  return success();
}

namespace {

/// The checks both loss-by-rows ops share: `perClass` (the softmax or the
/// gradient, named `perClassName`) of the logits' type, labels of the
/// positions' shape, losses of the positions' shape and the logits' type.
LogicalResult verifyLossRows(Operation *op, Value logitsValue, Value labelsValue,
                             Value lossesValue, Value perClass, StringRef perClassName) {
  auto logits = llvm::cast<RankedTensorType>(logitsValue.getType());
  auto labels = llvm::cast<RankedTensorType>(labelsValue.getType());
  auto losses = llvm::cast<RankedTensorType>(lossesValue.getType());
  if (logits.getRank() < 1)
    return op->emitOpError("expects logits of rank 1 or more, got ") << logits;
  if (perClass.getType() != logits)
    return op->emitOpError("expects ") << perClassName << " of the logits' type " << logits
                                       << ", got " << perClass.getType();
  auto positions = logits.getShape().drop_back();
  if (labels.getShape() != positions)
    return op->emitOpError("expects labels of shape [")
           << positions << "] (the logits' without the classes), got " << labels;
  if (losses != RankedTensorType::get(positions, logits.getElementType()))
    return op->emitOpError(
               "expects losses of the labels' shape and the logits' element type, got ")
           << losses;
  return success();
}

} // namespace

LogicalResult SoftmaxCrossEntropyRowsOp::verify() {
  if (failed(SoftmaxCrossEntropyOp::verifyTargets(*this, getLabels(), getIgnoreIndex(),
                                                   getLabelSmoothingAttr())))
    return failure();
  return verifyLossRows(*this, getLogits(), getLabels(), getLosses(), getProbs(), "probs");
}

LogicalResult SoftmaxCrossEntropyGradRowsOp::verify() {
  if (!std::isfinite(getScale().convertToDouble()))
    return emitOpError("expects a finite scale, got ") << getScale().convertToDouble();
  if (Value weights = getWeights()) {
    auto logits = llvm::cast<RankedTensorType>(getLogits().getType());
    auto expected = RankedTensorType::get(logits.getShape().drop_back(),
                                          logits.getElementType());
    if (weights.getType() != expected)
      return emitOpError("expects weights of type ") << expected << " (the labels' shape, the "
                                                     << "logits' element type), got "
                                                     << weights.getType();
  }
  if (failed(SoftmaxCrossEntropyOp::verifyTargets(*this, getLabels(), getIgnoreIndex(),
                                                   getLabelSmoothingAttr())))
    return failure();
  return verifyLossRows(*this, getLogits(), getLabels(), getLosses(), getGrad(), "grad");
}

LogicalResult PadOp::verify() {
  auto operand = llvm::cast<RankedTensorType>(getOperand().getType());
  auto result = llvm::cast<RankedTensorType>(getType());
  int64_t rank = operand.getRank();
  if (result.getRank() != rank || static_cast<int64_t>(getLow().size()) != rank ||
      static_cast<int64_t>(getHigh().size()) != rank ||
      static_cast<int64_t>(getInterior().size()) != rank)
    return emitOpError("expects low, high, interior and the result to have rank ") << rank;
  if (operand.getElementType() != result.getElementType())
    return emitOpError("expects the result element type ") << operand.getElementType();
  for (int64_t i = 0; i < rank; ++i) {
    if (getLow()[i] < 0 || getHigh()[i] < 0 || getInterior()[i] < 0)
      return emitOpError("expects non-negative padding, got dimension ") << i;
    int64_t size = operand.getDimSize(i);
    if (ShapedType::isDynamic(size) || ShapedType::isDynamic(result.getDimSize(i)))
      continue;
    int64_t expected =
        getLow()[i] + size + std::max<int64_t>(size - 1, 0) * getInterior()[i] + getHigh()[i];
    if (expected != result.getDimSize(i))
      return emitOpError("expects result dimension ") << i << " to be " << expected
             << ", got " << result.getDimSize(i);
  }
  return success();
}

LogicalResult AssignOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto variable = symbolTable.lookupNearestSymbolFrom<VariableOp>(
      getOperation(), getVariableAttr());
  if (!variable)
    return emitOpError("assigns unknown variable ") << getVariableAttr();
  if (variable.getType() != getValue().getType())
    return emitOpError("expects a value of type ")
           << variable.getType() << " (the variable's), got " << getValue().getType();
  return success();
}

LogicalResult ApplySgdOp::verify() {
  return verifyScalars(*this, getParam(), getLr());
}
LogicalResult ApplyMomentumOp::verify() {
  return verifyScalars(*this, getParam(), getLr());
}
LogicalResult ApplyAdamOp::verify() {
  return verifyScalars(*this, getParam(), getLr(), getStep());
}
LogicalResult ApplyAdagradOp::verify() {
  return verifyScalars(*this, getParam(), getLr());
}

unsigned SparseApplyOp::slotCount(OptimizerKind kind) {
  switch (kind) {
  case OptimizerKind::sgd: return 0;
  case OptimizerKind::momentum: return 1;
  case OptimizerKind::adam: return 2;
  case OptimizerKind::adagrad: return 1;
  }
  llvm_unreachable("unknown optimizer kind");
}

LogicalResult SparseApplyOp::verify() {
  auto param = llvm::cast<RankedTensorType>(getParam().getType());
  unsigned slots = slotCount(getOptimizer());
  if (getSlots().size() != slots)
    return emitOpError("expects ") << slots << " slots for "
           << stringifyOptimizerKind(getOptimizer()) << ", got " << getSlots().size();
  for (Value slot : getSlots())
    if (slot.getType() != param)
      return emitOpError("expects slots of the parameter's type ") << param
             << ", got " << slot.getType();
  for (Type type : getResultTypes())
    if (type != param)
      return emitOpError("expects results of the parameter's type ") << param
             << ", got " << type;
  auto indices = llvm::cast<RankedTensorType>(getIndices().getType());
  auto rows = llvm::cast<RankedTensorType>(getRows().getType());
  if (param.getRank() < 1 || indices.getRank() != 1 || rows.getRank() != param.getRank())
    return emitOpError("expects indices [N] and rows [N, ...] for a parameter of rank ")
           << param.getRank() << ", got " << indices << " and " << rows;
  if (rows.getDimSize(0) != indices.getDimSize(0) ||
      rows.getShape().drop_front() != param.getShape().drop_front() ||
      rows.getElementType() != param.getElementType())
    return emitOpError("expects rows of type [") << indices.getDimSize(0)
           << ", <the parameter's row shape>] x " << param.getElementType() << ", got " << rows;
  return verifyScalars(*this, getParam(), getLr(), getStep());
}
