//===- TfNode.cpp - What an op conversion sees of one TF node -------------===//

#include "compiler/Import/TensorFlow/TfNode.h"

#include "compiler/Import/Onnx/OnnxNames.h"
#include "compiler/Import/TensorFlow/TfGraph.h"
#include "compiler/Import/TensorFlow/TfTensor.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace kiln {
namespace {

/// What an attribute holds, as TensorFlow's op registry names attr types.
StringRef getAttrKindName(const tensorflow::AttrValue &attr) {
  switch (attr.value_case()) {
  case tensorflow::AttrValue::kS:
    return "a string";
  case tensorflow::AttrValue::kI:
    return "an int";
  case tensorflow::AttrValue::kF:
    return "a float";
  case tensorflow::AttrValue::kB:
    return "a bool";
  case tensorflow::AttrValue::kType:
    return "a type";
  case tensorflow::AttrValue::kShape:
    return "a shape";
  case tensorflow::AttrValue::kTensor:
    return "a tensor";
  case tensorflow::AttrValue::kList:
    return "a list";
  case tensorflow::AttrValue::kFunc:
    return "a function";
  case tensorflow::AttrValue::kPlaceholder:
    return "a placeholder";
  default:
    return "no value";
  }
}

} // namespace

FailureOr<SmallVector<int64_t>> TfNode::getConstantInts(unsigned i,
                                                        StringRef what) {
  DenseElementsAttr value = getConstantInput(i);
  if (!value)
    return emitError() << "expects input #" << i << " (" << what << ", '"
                       << printable(inputKeys[i])
                       << "') to be known at import time: a Const or a "
                          "value computed from Consts and static shapes";
  Type elementType = value.getElementType();
  if (!elementType.isInteger(64) && !elementType.isInteger(32))
    return emitError() << "expects input #" << i << " (" << what
                       << ") to hold int32 or int64 values, got "
                       << elementType;
  if (value.getType().getRank() > 1)
    return emitError() << "expects input #" << i << " (" << what
                       << ") of rank 0 or 1, got shape "
                       << formatTfShape(value.getType().getShape());
  SmallVector<int64_t> result;
  for (const APInt &v : value.getValues<APInt>())
    result.push_back(v.getSExtValue());
  return result;
}

const tensorflow::AttrValue *TfNode::getAttr(StringRef name) const {
  auto it = proto.attr().find(name.str());
  return it == proto.attr().end() ? nullptr : &it->second;
}

FailureOr<bool> TfNode::getBoolAttr(StringRef name, bool defaultValue) const {
  const tensorflow::AttrValue *attr = getAttr(name);
  if (!attr)
    return defaultValue;
  if (attr->value_case() != tensorflow::AttrValue::kB)
    return emitError() << "expects attribute '" << name
                       << "' to be a bool, got " << getAttrKindName(*attr);
  return attr->b();
}

FailureOr<int64_t> TfNode::getIntAttr(StringRef name,
                                      int64_t defaultValue) const {
  const tensorflow::AttrValue *attr = getAttr(name);
  if (!attr)
    return defaultValue;
  if (attr->value_case() != tensorflow::AttrValue::kI)
    return emitError() << "expects attribute '" << name
                       << "' to be an int, got " << getAttrKindName(*attr);
  return attr->i();
}

FailureOr<float> TfNode::getFloatAttr(StringRef name,
                                      float defaultValue) const {
  const tensorflow::AttrValue *attr = getAttr(name);
  if (!attr)
    return defaultValue;
  if (attr->value_case() != tensorflow::AttrValue::kF)
    return emitError() << "expects attribute '" << name
                       << "' to be a float, got " << getAttrKindName(*attr);
  return attr->f();
}

FailureOr<std::string> TfNode::getStringAttr(StringRef name,
                                             StringRef defaultValue) const {
  const tensorflow::AttrValue *attr = getAttr(name);
  if (!attr)
    return defaultValue.str();
  if (attr->value_case() != tensorflow::AttrValue::kS)
    return emitError() << "expects attribute '" << name
                       << "' to be a string, got " << getAttrKindName(*attr);
  return attr->s();
}

FailureOr<int> TfNode::getTypeAttr(StringRef name) const {
  const tensorflow::AttrValue *attr = getAttr(name);
  if (!attr)
    return emitError() << "expects attribute '" << name << "' (a type)";
  if (attr->value_case() != tensorflow::AttrValue::kType)
    return emitError() << "expects attribute '" << name
                       << "' to be a type, got " << getAttrKindName(*attr);
  return static_cast<int>(attr->type());
}

FailureOr<std::optional<SmallVector<int64_t>>>
TfNode::getIntsAttr(StringRef name) const {
  const tensorflow::AttrValue *attr = getAttr(name);
  if (!attr)
    return std::optional<SmallVector<int64_t>>();
  if (attr->value_case() != tensorflow::AttrValue::kList)
    return emitError() << "expects attribute '" << name
                       << "' to be a list of ints, got "
                       << getAttrKindName(*attr);
  const tensorflow::AttrValue::ListValue &list = attr->list();
  return std::optional<SmallVector<int64_t>>(
      SmallVector<int64_t>(list.i().begin(), list.i().end()));
}

FailureOr<int64_t> TfNode::normalizeAxis(int64_t axis, int64_t rank,
                                         bool inclusive) const {
  int64_t limit = inclusive ? rank + 1 : rank;
  int64_t low = inclusive ? -rank - 1 : -rank;
  if (axis < low || axis >= limit)
    return emitError() << "expects axis (" << axis << ") to be in [" << low
                       << ", " << limit << ") for an input of rank " << rank;
  return axis < 0 ? axis + (inclusive ? rank + 1 : rank) : axis;
}

FailureOr<SmallVector<int64_t>> TfNode::normalizeAxes(ArrayRef<int64_t> axes,
                                                      int64_t rank) const {
  SmallVector<int64_t> result;
  for (int64_t axis : axes) {
    if (axis < -rank || axis >= rank)
      return emitError() << "expects axes in [" << -rank << ", " << rank
                         << ") for an input of rank " << rank << ", got "
                         << formatTfShape(axes);
    result.push_back(axis < 0 ? axis + rank : axis);
  }
  llvm::sort(result);
  if (std::adjacent_find(result.begin(), result.end()) != result.end())
    return emitError() << "expects distinct axes, got " << formatTfShape(axes);
  return result;
}

LogicalResult TfNode::requireFloat(Value value, StringRef what) const {
  Type type = getElementTypeOrSelf(value.getType());
  if (llvm::isa<FloatType>(type))
    return success();
  return emitError() << "expects " << what << " of a float type, got " << type;
}

LogicalResult TfNode::requireNumeric(Value value, StringRef what) const {
  Type type = getElementTypeOrSelf(value.getType());
  if (!type.isInteger(1))
    return success();
  return emitError() << "expects " << what << " of a numeric type, got "
                     << type;
}

LogicalResult TfNode::requireRank(Value value, int64_t rank,
                                  StringRef what) const {
  if (KilnOpBuilder::rankOf(value) == rank)
    return success();
  return emitError() << "expects " << what << " of rank " << rank
                     << ", got shape "
                     << formatTfShape(KilnOpBuilder::shapeOf(value));
}

std::string TfNode::keyOf(unsigned i) const {
  return tfValueKey(proto.name(), i);
}

void TfNode::markResult(unsigned i) {
  if (results.size() <= i)
    results.resize(i + 1, false);
  results[i] = true;
}

LogicalResult TfNode::setResult(unsigned i, FailureOr<Value> value) {
  if (failed(value))
    return failure();
  markResult(i);
  scope.define(keyOf(i), *value);
  return success();
}

void TfNode::setResultToInput(unsigned i, unsigned input) {
  markResult(i);
  scope.alias(keyOf(i), inputKeys[input]);
}

void TfNode::setConstantResult(unsigned i, DenseElementsAttr value) {
  markResult(i);
  scope.defineConstant(keyOf(i), value, getLoc());
}

bool TfNode::isOutputUsed(unsigned i) const { return scope.isUsed(keyOf(i)); }

} // namespace kiln
