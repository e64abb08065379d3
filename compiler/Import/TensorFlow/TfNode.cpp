//===- TfNode.cpp - What an op conversion sees of one TF node -------------===//

#include "compiler/Import/TensorFlow/TfNode.h"

#include "compiler/Import/DiagnosticText.h"
#include "compiler/Import/TensorFlow/TfGraph.h"

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
  return readConstantInts(
      i, what, "a Const or a value computed from Consts and static shapes",
      "int32 or int64 values");
}

FailureOr<int64_t> TfNode::getConstantAxis(unsigned i, int64_t rank) {
  FailureOr<SmallVector<int64_t>> given = getConstantInts(i, "axis");
  if (failed(given))
    return failure();
  if (given->size() != 1)
    return emitError() << "expects one axis, got " << formatIntList(*given);
  return normalizeAxis(given->front(), rank);
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

FailureOr<std::optional<SmallVector<float>>>
TfNode::getFloatsAttr(StringRef name) const {
  const tensorflow::AttrValue *attr = getAttr(name);
  if (!attr)
    return std::optional<SmallVector<float>>();
  if (attr->value_case() != tensorflow::AttrValue::kList)
    return emitError() << "expects attribute '" << name << "' to be a list of floats, got "
                       << getAttrKindName(*attr);
  const tensorflow::AttrValue::ListValue &list = attr->list();
  return std::optional<SmallVector<float>>(SmallVector<float>(list.f().begin(), list.f().end()));
}

std::string TfNode::getOutputName(unsigned i) const {
  return tfValueKey(proto.name(), i);
}

} // namespace kiln
