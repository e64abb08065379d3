//===- OnnxNode.cpp - What an op conversion sees of one ONNX node ---------===//

#include "compiler/Import/Onnx/OnnxNode.h"

#include "compiler/Import/Onnx/OnnxNames.h"
#include "compiler/Import/Onnx/OnnxTensor.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace kiln {
namespace {

std::string getAttrTypeName(const onnx::AttributeProto &attr) {
  int type = attr.type();
  if (onnx::AttributeProto::AttributeType_IsValid(type))
    return onnx::AttributeProto::AttributeType_Name(
        static_cast<onnx::AttributeProto::AttributeType>(type));
  return "type " + std::to_string(type);
}

/// Whether `attr` holds a value of `type`. Files from before the `type`
/// field leave it UNDEFINED; then the field that is set decides.
bool holds(const onnx::AttributeProto &attr,
           onnx::AttributeProto::AttributeType type) {
  if (attr.type() == type)
    return true;
  if (attr.type() != onnx::AttributeProto::UNDEFINED)
    return false;
  switch (type) {
  case onnx::AttributeProto::INT:
    return attr.has_i();
  case onnx::AttributeProto::FLOAT:
    return attr.has_f();
  case onnx::AttributeProto::STRING:
    return attr.has_s();
  case onnx::AttributeProto::INTS:
    return attr.ints_size() > 0;
  default:
    return false;
  }
}

} // namespace

DenseElementsAttr OnnxNode::getConstantInput(unsigned i) {
  if (!hasInput(i))
    return nullptr;
  return scope.lookupConstant(proto.input(i));
}

FailureOr<Value> OnnxNode::getInputAsConstant(unsigned i) {
  if (DenseElementsAttr value = getConstantInput(i))
    return builder.constant(value);
  return getInput(i);
}

FailureOr<SmallVector<int64_t>> OnnxNode::getConstantInts(unsigned i,
                                                          StringRef what) {
  DenseElementsAttr value = getConstantInput(i);
  if (!value)
    return emitError() << "expects input #" << i << " (" << what << ", '"
                       << printable(proto.input(i))
                       << "') to be known at import time: an initializer, a "
                          "Constant node's output, or computed from those and "
                          "static shapes";
  Type elementType = value.getElementType();
  if (!elementType.isInteger(64) && !elementType.isInteger(32))
    return emitError() << "expects input #" << i << " (" << what
                       << ") to hold int64 values, got " << elementType;
  if (value.getType().getRank() > 1)
    return emitError() << "expects input #" << i << " (" << what
                       << ") of rank 0 or 1, got shape "
                       << formatOnnxShape(value.getType().getShape());
  SmallVector<int64_t> result;
  for (const APInt &v : value.getValues<APInt>())
    result.push_back(v.getSExtValue());
  return result;
}

const onnx::AttributeProto *OnnxNode::getAttribute(StringRef name) const {
  for (const onnx::AttributeProto &attr : proto.attribute())
    if (attr.name() == name)
      return &attr;
  return nullptr;
}

FailureOr<int64_t> OnnxNode::getIntAttr(StringRef name,
                                        int64_t defaultValue) const {
  const onnx::AttributeProto *attr = getAttribute(name);
  if (!attr)
    return defaultValue;
  if (!holds(*attr, onnx::AttributeProto::INT))
    return emitError() << "expects attribute '" << name
                       << "' to be an INT, got " << getAttrTypeName(*attr);
  return attr->i();
}

FailureOr<float> OnnxNode::getFloatAttr(StringRef name,
                                        float defaultValue) const {
  const onnx::AttributeProto *attr = getAttribute(name);
  if (!attr)
    return defaultValue;
  if (!holds(*attr, onnx::AttributeProto::FLOAT))
    return emitError() << "expects attribute '" << name
                       << "' to be a FLOAT, got " << getAttrTypeName(*attr);
  return attr->f();
}

FailureOr<std::string> OnnxNode::getStringAttr(StringRef name,
                                               StringRef defaultValue) const {
  const onnx::AttributeProto *attr = getAttribute(name);
  if (!attr)
    return defaultValue.str();
  if (!holds(*attr, onnx::AttributeProto::STRING))
    return emitError() << "expects attribute '" << name
                       << "' to be a STRING, got " << getAttrTypeName(*attr);
  return attr->s();
}

FailureOr<std::optional<SmallVector<int64_t>>>
OnnxNode::getIntsAttr(StringRef name) const {
  const onnx::AttributeProto *attr = getAttribute(name);
  if (!attr)
    return std::optional<SmallVector<int64_t>>();
  if (!holds(*attr, onnx::AttributeProto::INTS))
    return emitError() << "expects attribute '" << name << "' to be INTS, got "
                       << getAttrTypeName(*attr);
  return std::optional<SmallVector<int64_t>>(
      SmallVector<int64_t>(attr->ints().begin(), attr->ints().end()));
}

LogicalResult OnnxNode::refuseAttr(StringRef name, StringRef hint) const {
  if (!hasAttribute(name))
    return success();
  return emitError() << "attribute '" << name << "' is not part of "
                     << printable(getOpType()) << " in opset " << opset << " ("
                     << hint << ")";
}

FailureOr<int64_t> OnnxNode::normalizeAxis(int64_t axis, int64_t rank,
                                           bool inclusive) const {
  int64_t limit = inclusive ? rank + 1 : rank;
  if (axis < -rank || axis >= limit)
    return emitError() << "expects axis (" << axis << ") to be in [" << -rank
                       << ", " << limit << ") for an input of rank " << rank;
  return axis < 0 ? axis + rank : axis;
}

FailureOr<SmallVector<int64_t>> OnnxNode::normalizeAxes(ArrayRef<int64_t> axes,
                                                        int64_t rank) const {
  SmallVector<int64_t> result;
  for (int64_t axis : axes) {
    if (axis < -rank || axis >= rank)
      return emitError() << "expects axes in [" << -rank << ", " << rank
                         << ") for an input of rank " << rank << ", got "
                         << formatOnnxShape(axes);
    result.push_back(axis < 0 ? axis + rank : axis);
  }
  llvm::sort(result);
  if (std::adjacent_find(result.begin(), result.end()) != result.end())
    return emitError() << "expects distinct axes, got "
                       << formatOnnxShape(axes);
  return result;
}

FailureOr<ArrayRef<int64_t>> OnnxNode::getStaticShape(Value value,
                                                      StringRef what) const {
  auto type = llvm::cast<RankedTensorType>(value.getType());
  if (!type.hasStaticShape())
    return emitError() << "expects " << what << " of a static shape, got "
                       << type;
  return type.getShape();
}

LogicalResult OnnxNode::requireFloat(Value value, StringRef what) const {
  Type type = getElementTypeOrSelf(value.getType());
  if (llvm::isa<FloatType>(type))
    return success();
  return emitError() << "expects " << what << " of a float type, got " << type;
}

LogicalResult OnnxNode::requireNumeric(Value value, StringRef what) const {
  Type type = getElementTypeOrSelf(value.getType());
  if (!type.isInteger(1))
    return success();
  return emitError() << "expects " << what << " of a numeric type, got "
                     << type;
}

LogicalResult OnnxNode::setResult(unsigned i, FailureOr<Value> value) {
  if (failed(value))
    return failure();
  if (results.size() <= i)
    results.resize(i + 1, false);
  results[i] = true;
  if (i < getNumOutputs() && !proto.output(i).empty())
    scope.define(proto.output(i), *value);
  return success();
}

void OnnxNode::setResultToInput(unsigned i, unsigned input) {
  if (results.size() <= i)
    results.resize(i + 1, false);
  results[i] = true;
  if (i < getNumOutputs() && !proto.output(i).empty())
    scope.alias(proto.output(i), proto.input(input));
}

bool OnnxNode::setResultToInitializerCopy(unsigned i, unsigned input) {
  if (i >= getNumOutputs() || proto.output(i).empty() || !hasInput(input) ||
      !scope.copyInitializer(proto.output(i), proto.input(input)))
    return false;
  if (results.size() <= i)
    results.resize(i + 1, false);
  results[i] = true;
  return true;
}

void OnnxNode::setConstantResult(unsigned i, DenseElementsAttr value) {
  if (results.size() <= i)
    results.resize(i + 1, false);
  results[i] = true;
  if (i < getNumOutputs() && !proto.output(i).empty())
    scope.defineConstant(proto.output(i), value, getLoc());
}

} // namespace kiln
