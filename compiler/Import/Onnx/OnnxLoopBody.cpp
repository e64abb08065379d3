//===- OnnxLoopBody.cpp - Reading an ONNX Loop's body ---------------------===//

#include "compiler/Import/Onnx/OnnxLoopBody.h"

#include "llvm/ADT/STLExtras.h"

#include <cstring>

using namespace llvm;

namespace kiln {

using Node = onnx::NodeProto;

bool isOneOf(StringRef opType, std::initializer_list<StringRef> types) {
  return llvm::is_contained(types, opType);
}

const std::string &nodeInput(const onnx::NodeProto &node, int i) {
  static const std::string none;
  return i < node.input_size() ? node.input(i) : none;
}

int64_t intAttribute(const onnx::NodeProto &node, StringRef name, int64_t defaultValue) {
  for (const onnx::AttributeProto &attribute : node.attribute())
    if (attribute.name() == name)
      return attribute.i();
  return defaultValue;
}

std::optional<int64_t> scalarOf(const onnx::TensorProto &tensor) {
  switch (tensor.data_type()) {
  case onnx::TensorProto::INT64:
    if (tensor.int64_data_size() == 1)
      return tensor.int64_data(0);
    if (tensor.raw_data().size() == 8) {
      int64_t value;
      std::memcpy(&value, tensor.raw_data().data(), 8);
      return value;
    }
    return std::nullopt;
  case onnx::TensorProto::INT32:
  case onnx::TensorProto::BOOL:
    if (tensor.int32_data_size() == 1)
      return tensor.int32_data(0);
    if (tensor.raw_data().size() == 4) {
      int32_t value;
      std::memcpy(&value, tensor.raw_data().data(), 4);
      return value;
    }
    if (tensor.data_type() == onnx::TensorProto::BOOL && tensor.raw_data().size() == 1)
      return tensor.raw_data()[0] != 0;
    return std::nullopt;
  default:
    return std::nullopt;
  }
}

bool LoopBodyNodes::isZeros(StringRef name) const {
  const Node *node = producer(name);
  while (node && isOneOf(node->op_type(), {"Cast", "CastLike", "Identity", "Expand"})) {
    name = nodeInput(*node, 0);
    node = producer(name);
  }
  const onnx::TensorProto *tensor = nullptr;
  if (node && node->op_type() == "Constant") {
    for (const onnx::AttributeProto &attribute : node->attribute()) {
      if (attribute.name() == "value_float" || attribute.name() == "value_int")
        return attribute.f() == 0 && attribute.i() == 0;
      if (attribute.name() == "value_floats" || attribute.name() == "value_ints")
        return llvm::all_of(attribute.floats(), [](float v) { return v == 0; }) &&
               llvm::all_of(attribute.ints(), [](int64_t v) { return v == 0; });
      if (attribute.name() == "value" && attribute.has_t())
        tensor = &attribute.t();
    }
  } else if (!node) {
    tensor = initializers.lookup(name);
  }
  if (!tensor)
    return false;
  return llvm::all_of(tensor->raw_data(), [](char c) { return c == 0; }) &&
         llvm::all_of(tensor->float_data(), [](float v) { return v == 0; }) &&
         llvm::all_of(tensor->int64_data(), [](int64_t v) { return v == 0; }) &&
         llvm::all_of(tensor->int32_data(), [](int32_t v) { return v == 0; });
}

std::optional<bool> LoopBodyNodes::condition(StringRef name) const {
  const Node *node = producer(name);
  if (node && node->op_type() == "Not")
    if (std::optional<bool> inner = condition(nodeInput(*node, 0)))
      return !*inner;
  if (node && node->op_type() == "Equal" && node->input_size() == 2) {
    std::optional<int64_t> lhs = constant(nodeInput(*node, 0)), rhs = constant(nodeInput(*node, 1));
    if (lhs && rhs)
      return *lhs == *rhs;
  }
  if (std::optional<int64_t> value = constant(name))
    return *value != 0;
  return std::nullopt;
}

void LoopBodyNodes::add(const onnx::GraphProto &graph) {
  live.insert(&graph);
  for (const onnx::ValueInfoProto &input : graph.input())
    defined.insert(input.name());
  for (const onnx::TensorProto &initializer : graph.initializer()) {
    defined.insert(initializer.name());
    initializers[initializer.name()] = &initializer;
  }
  for (const Node &node : graph.node()) {
    nodes.push_back(&node);
    for (const std::string &output : node.output()) {
      defined.insert(output);
      producers[output] = &node;
    }
    std::optional<bool> taken;
    if (node.op_type() == "If" && node.input_size() == 1)
      taken = condition(node.input(0));
    for (const onnx::AttributeProto &attribute : node.attribute()) {
      if (taken && attribute.name() != (*taken ? "then_branch" : "else_branch"))
        continue;
      if (attribute.has_g())
        add(attribute.g());
      for (const onnx::GraphProto &nested : attribute.graphs())
        add(nested);
    }
  }
}

std::optional<int64_t> LoopBodyNodes::constant(StringRef name) const {
  const Node *node = producer(name);
  bool toBool = false;
  while (node && isOneOf(node->op_type(), {"Cast", "CastLike", "Identity"})) {
    if (node->op_type() == "Cast") {
      int64_t to = intAttribute(*node, "to", 0);
      if (to == onnx::TensorProto::BOOL)
        toBool = true;
      else if (to != onnx::TensorProto::INT64 && to != onnx::TensorProto::INT32)
        return std::nullopt;
    }
    node = producer(nodeInput(*node, 0));
  }
  if (!node || node->op_type() != "Constant")
    return std::nullopt;
  std::optional<int64_t> value;
  for (const onnx::AttributeProto &attribute : node->attribute()) {
    if (attribute.name() == "value_int")
      value = attribute.i();
    if (attribute.name() == "value" && attribute.has_t())
      value = scalarOf(attribute.t());
  }
  if (value && toBool)
    return *value != 0;
  return value;
}

} // namespace kiln
