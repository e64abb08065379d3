//===- OnnxNode.cpp - What an op conversion sees of one ONNX node ---------===//

#include "compiler/Import/Onnx/OnnxNode.h"

#include "compiler/Import/DiagnosticText.h"
#include "compiler/Import/Onnx/OnnxGraphOrder.h"
#include "compiler/Import/Onnx/OnnxOps.h"
#include "compiler/Import/Onnx/OnnxTensor.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"

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

FailureOr<Value> OnnxNode::getInputAsConstant(unsigned i) {
  if (DenseElementsAttr value = getConstantInput(i))
    return builder.constant(value);
  return getInput(i);
}

FailureOr<SmallVector<int64_t>> OnnxNode::getConstantInts(unsigned i,
                                                          StringRef what) {
  return readConstantInts(i, what,
                          "an initializer, a Constant node's output, or "
                          "computed from those and static shapes",
                          "int64 values");
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

bool OnnxNode::setResultToInitializerCopy(unsigned i, unsigned input) {
  if (i >= getNumOutputs() || proto.output(i).empty() || !hasInput(input) ||
      !onnxScope.copyInitializer(proto.output(i), proto.input(input)))
    return false;
  markResult(i);
  return true;
}

namespace {

void renameNested(onnx::GraphProto &graph, const llvm::StringMap<std::string> &names);

/// Renames every read and write of a name in `names` in `graph`, and in the
/// graphs nested in it where they do not define the name themselves.
void renameIn(onnx::GraphProto &graph, const llvm::StringMap<std::string> &names) {
  auto rename = [&](std::string &name) {
    if (auto it = names.find(name); it != names.end())
      name = it->second;
  };
  for (onnx::NodeProto &node : *graph.mutable_node()) {
    for (std::string &input : *node.mutable_input())
      rename(input);
    for (std::string &output : *node.mutable_output())
      rename(output);
    for (onnx::AttributeProto &attribute : *node.mutable_attribute()) {
      if (attribute.has_g())
        renameNested(*attribute.mutable_g(), names);
      for (onnx::GraphProto &nested : *attribute.mutable_graphs())
        renameNested(nested, names);
    }
  }
  for (onnx::ValueInfoProto &output : *graph.mutable_output())
    rename(*output.mutable_name());
  for (onnx::TensorProto &initializer : *graph.mutable_initializer())
    rename(*initializer.mutable_name());
}

void renameNested(onnx::GraphProto &graph, const llvm::StringMap<std::string> &names) {
  llvm::StringMap<std::string> visible(names);
  for (const onnx::ValueInfoProto &input : graph.input())
    visible.erase(input.name());
  for (const onnx::TensorProto &initializer : graph.initializer())
    visible.erase(initializer.name());
  for (const onnx::NodeProto &node : graph.node())
    for (const std::string &output : node.output())
      visible.erase(output);
  renameIn(graph, visible);
}

} // namespace

LogicalResult OnnxNode::importBranch(const onnx::GraphProto &original, StringRef tag) {
  // Each name the branch defines becomes `<this node's first output>#tag#name`:
  // a sibling branch, or a later node, may define the same name (ONNX scopes
  // a subgraph's names), and the graph around the node holds every value by
  // name.
  onnx::GraphProto branch(original);
  std::string prefix =
      (getNumOutputs() && !proto.output(0).empty() ? proto.output(0) : proto.name()) + "#" +
      tag.str() + "#";
  llvm::StringMap<std::string> names;
  for (const onnx::TensorProto &initializer : branch.initializer())
    names[initializer.name()] = prefix + initializer.name();
  for (const onnx::NodeProto &node : branch.node())
    for (const std::string &output : node.output())
      if (!output.empty())
        names[output] = prefix + output;
  renameIn(branch, names);
  // What the branch reads from around it exists: the graph order put this
  // node after its producers.
  llvm::StringSet<> available;
  for (const std::string &name : graphOuterNames(branch))
    available.insert(name);
  Location around = getLoc();
  Location fileLoc = around;
  if (auto named = llvm::dyn_cast<NameLoc>(around))
    fileLoc = named.getChildLoc();
  std::string where = " in a branch of " + proto.op_type() + " '" + printable(proto.name()) + "'";
  auto nodeLoc = [&](int i) -> Location {
    const onnx::NodeProto &node = original.node(i);
    std::string name = node.name().empty() ? "node #" + std::to_string(i)
                                           : "node '" + printable(node.name()) + "'";
    return NameLoc::get(StringAttr::get(getContext(), name + " (" + printable(node.op_type()) +
                                                          ")" + where),
                        fileLoc);
  };
  for (auto [tensor, named] : llvm::zip(branch.initializer(), original.initializer())) {
    Location loc = NameLoc::get(
        StringAttr::get(getContext(), "initializer '" + printable(named.name()) + "'" + where),
        fileLoc);
    FailureOr<DenseElementsAttr> value = decodeOnnxTensor(tensor, modelDir, loc);
    if (failed(value))
      return failure();
    onnxScope.defineConstant(tensor.name(), *value, loc);
    available.insert(tensor.name());
  }
  FailureOr<SmallVector<int>> order = orderOnnxNodes(branch, available, nodeLoc);
  if (failed(order))
    return failure();
  KilnOpBuilder &builder = getBuilder();
  for (int i : *order) {
    builder.setLoc(nodeLoc(i));
    if (failed(convertOnnxNodeProto(branch.node(i), opset, modelDir, builder, onnxScope)))
      return failure();
  }
  builder.setLoc(around);
  for (unsigned i = 0; i < getNumOutputs() && i < static_cast<unsigned>(branch.output_size()); ++i)
    setResultToName(i, branch.output(i).name());
  return success();
}

} // namespace kiln
