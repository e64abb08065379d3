//===- ImportNode.cpp - What an op conversion sees of one node ------------===//

#include "compiler/Import/ImportNode.h"

#include "compiler/Import/DiagnosticText.h"

#include "mlir/IR/TypeUtilities.h"

#include <climits>

using namespace mlir;

namespace kiln {

DenseElementsAttr ImportNode::getConstantInput(unsigned i) {
  StringRef name = getInputName(i);
  if (name.empty())
    return nullptr;
  return scope.lookupConstant(name);
}

FailureOr<SmallVector<int64_t>>
ImportNode::readConstantInts(unsigned i, StringRef what, StringRef sources,
                             StringRef elementTypes) {
  DenseElementsAttr value = getConstantInput(i);
  if (!value)
    return emitError() << "expects input #" << i << " (" << what << ", '"
                       << printable(getInputName(i))
                       << "') to be known at import time: " << sources;
  Type elementType = value.getElementType();
  if (!elementType.isInteger(64) && !elementType.isInteger(32))
    return emitError() << "expects input #" << i << " (" << what << ") to hold "
                       << elementTypes << ", got " << elementType;
  if (value.getType().getRank() > 1)
    return emitError() << "expects input #" << i << " (" << what
                       << ") of rank 0 or 1, got shape "
                       << formatIntList(value.getType().getShape());
  SmallVector<int64_t> result;
  for (const APInt &v : value.getValues<APInt>())
    result.push_back(v.getSExtValue());
  return result;
}

FailureOr<int64_t> ImportNode::normalizeAxisIn(int64_t axis, int64_t low,
                                               int64_t limit,
                                               int64_t rank) const {
  if (axis < low || axis >= limit)
    return emitError() << "expects axis (" << axis << ") to be in [" << low
                       << ", " << limit << ") for an input of rank " << rank;
  return axis < 0 ? axis - low : axis;
}

FailureOr<int64_t> ImportNode::normalizeAxis(int64_t axis, int64_t rank,
                                             bool inclusive) const {
  return normalizeAxisIn(axis, -rank, inclusive ? rank + 1 : rank, rank);
}

FailureOr<SmallVector<int64_t>>
ImportNode::normalizeAxes(ArrayRef<int64_t> axes, int64_t rank) const {
  SmallVector<int64_t> result;
  for (int64_t axis : axes) {
    if (axis < -rank || axis >= rank)
      return emitError() << "expects axes in [" << -rank << ", " << rank
                         << ") for an input of rank " << rank << ", got "
                         << formatIntList(axes);
    result.push_back(axis < 0 ? axis + rank : axis);
  }
  llvm::sort(result);
  if (std::adjacent_find(result.begin(), result.end()) != result.end())
    return emitError() << "expects distinct axes, got " << formatIntList(axes);
  return result;
}

FailureOr<ArrayRef<int64_t>> ImportNode::getStaticShape(Value value,
                                                        StringRef what) const {
  auto type = llvm::cast<RankedTensorType>(value.getType());
  if (!type.hasStaticShape())
    return emitError() << "expects " << what << " of a static shape, got "
                       << type;
  return type.getShape();
}

LogicalResult ImportNode::requireFloat(Value value, StringRef what) const {
  Type type = getElementTypeOrSelf(value.getType());
  if (llvm::isa<FloatType>(type))
    return success();
  return emitError() << "expects " << what << " of a float type, got " << type;
}

LogicalResult ImportNode::requireNumeric(Value value, StringRef what) const {
  Type type = getElementTypeOrSelf(value.getType());
  if (!type.isInteger(1))
    return success();
  return emitError() << "expects " << what << " of a numeric type, got "
                     << type;
}

LogicalResult ImportNode::requireRank(Value value, int64_t rank,
                                      StringRef what) const {
  if (KilnOpBuilder::rankOf(value) == rank)
    return success();
  return emitError() << "expects " << what << " of rank " << rank
                     << ", got shape "
                     << formatIntList(KilnOpBuilder::shapeOf(value));
}

LogicalResult ImportNode::requireCount(unsigned count, unsigned min,
                                       unsigned max, StringRef noun) const {
  if (count >= min && count <= max)
    return success();
  InFlightDiagnostic error = emitError();
  error << "expects ";
  bool variadic = max == UINT_MAX;
  if (variadic)
    error << "at least " << min;
  else if (min == max)
    error << min;
  else
    error << min << " to " << max;
  unsigned last = variadic ? min : max;
  return error << " " << noun << (last == 1 ? "" : "s") << ", got " << count;
}

void ImportNode::markResult(unsigned i) {
  if (results.size() <= i)
    results.resize(i + 1, false);
  results[i] = true;
}

LogicalResult ImportNode::setResult(unsigned i, FailureOr<Value> value) {
  if (failed(value))
    return failure();
  markResult(i);
  std::string name = getOutputName(i);
  if (!name.empty())
    scope.define(name, *value);
  return success();
}

void ImportNode::setResultToInput(unsigned i, unsigned input) {
  markResult(i);
  std::string name = getOutputName(i);
  if (!name.empty())
    scope.alias(name, getInputName(input));
}

void ImportNode::setConstantResult(unsigned i, DenseElementsAttr value) {
  markResult(i);
  std::string name = getOutputName(i);
  if (!name.empty())
    scope.defineConstant(name, value, getLoc());
}

bool ImportNode::isOutputUsed(unsigned i) const {
  std::string name = getOutputName(i);
  return !name.empty() && scope.isUsed(name);
}

} // namespace kiln
