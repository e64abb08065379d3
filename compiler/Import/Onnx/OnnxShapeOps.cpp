//===- OnnxShapeOps.cpp - ONNX shape, layout and constant ops -------------===//
//
// Identity, Constant, Reshape, Flatten, Transpose, Concat, Squeeze,
// Unsqueeze, Expand and Gather. Shapes and axes given as inputs must be known
// at import time (initializers or Constant outputs); all shapes are static.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/Onnx/OnnxOps.h"

#include "compiler/Import/Onnx/OnnxTensor.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace kiln {
namespace {

using Result = KilnOpBuilder::Result;

LogicalResult convertIdentity(OnnxNode &node) {
  node.setResultToInput(0, 0);
  return success();
}

/// A Constant's value from whichever of its value attributes is set.
FailureOr<DenseElementsAttr>
getConstantValue(OnnxNode &node, const onnx::AttributeProto &attr) {
  Builder b(node.getContext());
  StringRef name = attr.name();
  auto expect = [&](onnx::AttributeProto::AttributeType type,
                    StringRef typeName) -> LogicalResult {
    if (attr.type() == type)
      return success();
    return node.emitError()
           << "expects attribute '" << name << "' to be " << typeName;
  };
  if (name == "value") {
    if (failed(expect(onnx::AttributeProto::TENSOR, "a TENSOR")))
      return failure();
    return decodeOnnxTensor(attr.t(), node.getModelDir(), node.getLoc());
  }
  if (name == "value_float" || name == "value_floats") {
    bool scalar = name == "value_float";
    if (failed(scalar ? expect(onnx::AttributeProto::FLOAT, "a FLOAT")
                      : expect(onnx::AttributeProto::FLOATS, "FLOATS")))
      return failure();
    SmallVector<float> values(attr.floats().begin(), attr.floats().end());
    if (scalar)
      values.assign(1, attr.f());
    SmallVector<int64_t> shape;
    if (!scalar)
      shape.push_back(values.size());
    return DenseElementsAttr::get(RankedTensorType::get(shape, b.getF32Type()),
                                  ArrayRef<float>(values));
  }
  bool scalar = name == "value_int";
  if (failed(scalar ? expect(onnx::AttributeProto::INT, "an INT")
                    : expect(onnx::AttributeProto::INTS, "INTS")))
    return failure();
  SmallVector<int64_t> values(attr.ints().begin(), attr.ints().end());
  if (scalar)
    values.assign(1, attr.i());
  SmallVector<int64_t> shape;
  if (!scalar)
    shape.push_back(values.size());
  return DenseElementsAttr::get(RankedTensorType::get(shape, b.getI64Type()),
                                ArrayRef<int64_t>(values));
}

LogicalResult convertConstant(OnnxNode &node) {
  const onnx::NodeProto &proto = node.getProto();
  if (proto.attribute_size() != 1)
    return node.emitError() << "expects exactly one value attribute, got "
                            << proto.attribute_size();
  FailureOr<DenseElementsAttr> value =
      getConstantValue(node, proto.attribute(0));
  if (failed(value))
    return failure();
  node.setConstantResult(0, *value);
  return success();
}

/// Reshape's target shape: 0 copies the input's dimension (unless
/// allowzero), one -1 takes what is left.
LogicalResult convertReshape(OnnxNode &node) {
  FailureOr<int64_t> allowZero = node.getIntAttr("allowzero", 0);
  FailureOr<SmallVector<int64_t>> requested = node.getConstantInts(1, "shape");
  if (failed(allowZero) || failed(requested))
    return failure();
  Value x = node.getInput(0);
  FailureOr<ArrayRef<int64_t>> inShape = node.getStaticShape(x, "an input");
  if (failed(inShape))
    return failure();
  SmallVector<int64_t> shape;
  std::optional<size_t> inferred;
  for (auto [i, size] : llvm::enumerate(*requested)) {
    if (size == -1) {
      if (inferred)
        return node.emitError() << "expects at most one -1 in shape "
                                << formatOnnxShape(*requested);
      inferred = i;
      shape.push_back(1);
    } else if (size == 0 && !*allowZero) {
      if (i >= inShape->size())
        return node.emitError() << "shape " << formatOnnxShape(*requested)
                                << " copies dimension " << i
                                << " of an input of rank " << inShape->size();
      shape.push_back((*inShape)[i]);
    } else if (size < 0) {
      return node.emitError()
             << "expects sizes >= -1 in shape " << formatOnnxShape(*requested);
    } else {
      shape.push_back(size);
    }
  }
  if (inferred) {
    FailureOr<int64_t> total = staticElementCount(*inShape);
    FailureOr<int64_t> known = staticElementCount(shape);
    if (failed(total) || failed(known) || *known == 0 || *total % *known)
      return node.emitError()
             << "cannot reshape " << formatOnnxShape(*inShape) << " to "
             << formatOnnxShape(*requested) << " (the -1 does not divide out)";
    shape[*inferred] = *total / *known;
  } else if (failed(staticElementCount(shape))) {
    return node.emitError() << "has a shape with too many elements "
                            << formatOnnxShape(*requested);
  }
  return node.setResult(0, node.getBuilder().reshape(x, shape));
}

/// Flatten to [prod(dims before axis), prod(dims from axis)].
LogicalResult convertFlatten(OnnxNode &node) {
  Value x = node.getInput(0);
  FailureOr<ArrayRef<int64_t>> shape = node.getStaticShape(x, "an input");
  FailureOr<int64_t> axisAttr = node.getIntAttr("axis", 1);
  if (failed(shape) || failed(axisAttr))
    return failure();
  FailureOr<int64_t> axis =
      node.normalizeAxis(*axisAttr, shape->size(), /*inclusive=*/true);
  if (failed(axis))
    return failure();
  FailureOr<int64_t> outer = staticElementCount(shape->take_front(*axis));
  FailureOr<int64_t> inner = staticElementCount(shape->drop_front(*axis));
  if (failed(outer) || failed(inner))
    return node.emitError() << "has an input with too many elements";
  return node.setResult(0, node.getBuilder().reshape(x, {*outer, *inner}));
}

LogicalResult convertTranspose(OnnxNode &node) {
  Value x = node.getInput(0);
  FailureOr<std::optional<SmallVector<int64_t>>> perm =
      node.getIntsAttr("perm");
  if (failed(perm))
    return failure();
  SmallVector<int64_t> permutation;
  if (*perm)
    permutation = **perm;
  else
    for (int64_t d = KilnOpBuilder::rankOf(x) - 1; d >= 0; --d)
      permutation.push_back(d);
  return node.setResult(0, node.getBuilder().transpose(x, permutation));
}

LogicalResult convertConcat(OnnxNode &node) {
  if (!node.hasAttribute("axis"))
    return node.emitError() << "expects attribute 'axis'";
  FailureOr<int64_t> axisAttr = node.getIntAttr("axis", 0);
  if (failed(axisAttr))
    return failure();
  SmallVector<Value> inputs;
  for (unsigned i = 0, e = node.getNumInputs(); i < e; ++i) {
    if (!node.hasInput(i))
      return node.emitError()
             << "expects input #" << i << " to be given, got an empty name";
    inputs.push_back(node.getInput(i));
  }
  FailureOr<int64_t> axis =
      node.normalizeAxis(*axisAttr, KilnOpBuilder::rankOf(inputs.front()));
  if (failed(axis))
    return failure();
  return node.setResult(0, node.getBuilder().concat(inputs, *axis));
}

/// The axes of Squeeze/Unsqueeze: an attribute before opset 13, an input
/// from then on. std::nullopt when absent.
FailureOr<std::optional<SmallVector<int64_t>>> getSqueezeAxes(OnnxNode &node) {
  if (node.getOpset() < 13) {
    if (node.getNumInputs() > 1)
      return node.emitError() << "takes axes as an attribute before opset 13, "
                                 "got "
                              << node.getNumInputs() << " inputs";
    return node.getIntsAttr("axes");
  }
  if (failed(node.refuseAttr("axes", "axes are input #1 from opset 13")))
    return failure();
  if (!node.hasInput(1))
    return std::optional<SmallVector<int64_t>>();
  FailureOr<SmallVector<int64_t>> axes = node.getConstantInts(1, "axes");
  if (failed(axes))
    return failure();
  return std::optional<SmallVector<int64_t>>(std::move(*axes));
}

LogicalResult convertSqueeze(OnnxNode &node) {
  Value x = node.getInput(0);
  FailureOr<ArrayRef<int64_t>> shape = node.getStaticShape(x, "an input");
  FailureOr<std::optional<SmallVector<int64_t>>> axes = getSqueezeAxes(node);
  if (failed(shape) || failed(axes))
    return failure();
  SmallVector<int64_t> squeezed;
  if (!*axes) {
    for (int64_t d : *shape)
      if (d != 1)
        squeezed.push_back(d);
    return node.setResult(0, node.getBuilder().reshape(x, squeezed));
  }
  FailureOr<SmallVector<int64_t>> normalized =
      node.normalizeAxes(**axes, shape->size());
  if (failed(normalized))
    return failure();
  for (auto [i, d] : llvm::enumerate(*shape)) {
    if (!llvm::is_contained(*normalized, static_cast<int64_t>(i))) {
      squeezed.push_back(d);
    } else if (d != 1) {
      return node.emitError()
             << "cannot squeeze dimension " << i << " of size " << d
             << " (shape " << formatOnnxShape(*shape) << ")";
    }
  }
  return node.setResult(0, node.getBuilder().reshape(x, squeezed));
}

LogicalResult convertUnsqueeze(OnnxNode &node) {
  Value x = node.getInput(0);
  FailureOr<ArrayRef<int64_t>> shape = node.getStaticShape(x, "an input");
  FailureOr<std::optional<SmallVector<int64_t>>> axes = getSqueezeAxes(node);
  if (failed(shape) || failed(axes))
    return failure();
  if (!*axes)
    return node.emitError()
           << "expects axes ("
           << (node.getOpset() < 13 ? "attribute 'axes'" : "input #1") << ")";
  int64_t rank = shape->size() + (*axes)->size();
  FailureOr<SmallVector<int64_t>> normalized = node.normalizeAxes(**axes, rank);
  if (failed(normalized))
    return failure();
  SmallVector<int64_t> expanded;
  const int64_t *next = shape->begin();
  for (int64_t d = 0; d < rank; ++d)
    expanded.push_back(llvm::is_contained(*normalized, d) ? 1 : *next++);
  return node.setResult(0, node.getBuilder().reshape(x, expanded));
}

/// Expand broadcasts both ways: the result is the numpy broadcast of the
/// input's shape and the given one.
LogicalResult convertExpand(OnnxNode &node) {
  FailureOr<SmallVector<int64_t>> requested = node.getConstantInts(1, "shape");
  if (failed(requested))
    return failure();
  if (llvm::any_of(*requested, [](int64_t d) { return d < 0; }))
    return node.emitError()
           << "expects sizes >= 0 in shape " << formatOnnxShape(*requested);
  Value x = node.getInput(0);
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShapes(KilnOpBuilder::shapeOf(x), *requested);
  if (failed(shape))
    return node.emitError()
           << "cannot broadcast " << formatOnnxShape(KilnOpBuilder::shapeOf(x))
           << " with shape " << formatOnnxShape(*requested);
  return node.setResult(0, node.getBuilder().broadcastTo(x, *shape));
}

/// Indices known at import time, with negative ones (counting from the end)
/// made non-negative, or null if they are computed at run time.
FailureOr<Value> getGatherIndices(OnnxNode &node, int64_t dimSize) {
  DenseElementsAttr constant = node.getConstantInput(1);
  if (!constant || !constant.getElementType().isSignlessInteger() ||
      constant.getElementType().isInteger(1) || ShapedType::isDynamic(dimSize))
    return node.getInput(1);
  bool anyNegative = false;
  for (const APInt &index : constant.getValues<APInt>()) {
    int64_t i = index.getSExtValue();
    if (i < -dimSize || i >= dimSize)
      return node.emitError()
             << "has index " << i << " out of range [" << -dimSize << ", "
             << dimSize << ") for the gathered dimension";
    anyNegative |= i < 0;
  }
  if (!anyNegative)
    return node.getInput(1);
  DenseElementsAttr fixed =
      constant.mapValues(constant.getElementType(), [&](const APInt &index) {
        return index.isNegative() ? index + dimSize : index;
      });
  return node.getBuilder().constant(fixed);
}

LogicalResult convertGather(OnnxNode &node) {
  FailureOr<int64_t> axisAttr = node.getIntAttr("axis", 0);
  if (failed(axisAttr))
    return failure();
  Value table = node.getInput(0);
  FailureOr<int64_t> axis =
      node.normalizeAxis(*axisAttr, KilnOpBuilder::rankOf(table));
  if (failed(axis))
    return failure();
  FailureOr<Value> indices =
      getGatherIndices(node, KilnOpBuilder::shapeOf(table)[*axis]);
  if (failed(indices))
    return failure();
  return node.setResult(0, node.getBuilder().gather(table, *indices, *axis));
}

constexpr OnnxOpConversion kShapeOps[] = {
    {"Identity", 1, 1, 1, "", convertIdentity},
    {"Constant", 0, 0, 1, "value value_float value_floats value_int value_ints",
     convertConstant},
    {"Reshape", 2, 2, 1, "allowzero", convertReshape, 5},
    {"Flatten", 1, 1, 1, "axis", convertFlatten},
    {"Transpose", 1, 1, 1, "perm", convertTranspose},
    {"Concat", 1, OnnxOpConversion::kVariadic, 1, "axis", convertConcat},
    {"Squeeze", 1, 2, 1, "axes", convertSqueeze},
    {"Unsqueeze", 1, 2, 1, "axes", convertUnsqueeze},
    {"Expand", 2, 2, 1, "", convertExpand, 8},
    {"Gather", 2, 2, 1, "axis", convertGather},
};

} // namespace

ArrayRef<OnnxOpConversion> getOnnxShapeOps() { return kShapeOps; }

} // namespace kiln
