//===- OnnxShapeOps.cpp - ONNX shape, layout and constant ops -------------===//
//
// Identity, Dropout, Constant, Shape, Size, ConstantOfShape, Range, Reshape,
// Flatten, Transpose, Concat, Split, Slice, Tile, Squeeze, Unsqueeze, Expand,
// Gather and GatherElements. Shapes, axes, starts and repeats given as inputs
// must be known at import time: initializers, Constant outputs, or values
// folded from them (Shape -> Gather -> Concat is, once input shapes are
// static); all shapes are static.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/Onnx/OnnxOps.h"

#include "compiler/Import/DiagnosticText.h"
#include "compiler/Import/Onnx/OnnxTensor.h"
#include "compiler/Import/Onnx/OnnxTorchExport.h"
#include "compiler/Import/ShapeConversions.h"

#include "mlir/IR/TypeUtilities.h"

#include <algorithm>
#include <cmath>

using namespace mlir;

namespace kiln {
namespace {

using Result = KilnOpBuilder::Result;

/// An Identity over a float initializer is a parameter of its own with the
/// same initial value: torch.onnx.export writes parameters whose values are
/// equal (LayerNorm weights of ones, zero biases) as one initializer and an
/// Identity per duplicate, and training must update them separately.
LogicalResult convertIdentity(OnnxNode &node) {
  if (!node.setResultToInitializerCopy(0, 0))
    node.setResultToInput(0, 0);
  return success();
}

/// Dropout as in inference: the identity. A graph exported in training mode
/// (training_mode true with a nonzero ratio) is refused: kiln does not draw
/// dropout masks yet. Its mask output may not be used.
LogicalResult convertDropout(OnnxNode &node) {
  if (node.getOpset() >= 12 &&
      failed(node.refuseAttr("ratio", "the ratio is input #1 from opset 12")))
    return failure();
  if (node.hasInput(2)) {
    DenseElementsAttr training = node.getConstantInput(2);
    if (!training)
      return node.emitError() << "expects training_mode (input #2) known at "
                                 "import time";
    DenseElementsAttr ratio = node.getConstantInput(1);
    bool zeroRatio = ratio && ratio.isSplat() &&
                     llvm::isa<FloatType>(ratio.getElementType()) &&
                     ratio.getSplatValue<APFloat>().isZero();
    if (training.isSplat() && training.getSplatValue<bool>() && !zeroRatio)
      return node.emitError()
             << "is in training mode; kiln does not apply dropout: export "
                "the model in eval mode (model.eval()), where Dropout is the "
                "identity";
  }
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
    return decodeOnnxTensor(attr.t(), node.getModelDir(), node.getLoc(),
                            /*narrowDouble=*/true);
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

LogicalResult setShapeConstant(OnnxNode &node, ArrayRef<int64_t> values,
                               bool scalar = false) {
  Builder b(node.getContext());
  SmallVector<int64_t> shape;
  if (!scalar)
    shape.push_back(values.size());
  node.setConstantResult(0, DenseElementsAttr::get(
                                RankedTensorType::get(shape, b.getI64Type()), values));
  return success();
}

/// Shape: the input's static dimensions [start, end) as int64.
LogicalResult convertShape(OnnxNode &node) {
  FailureOr<ArrayRef<int64_t>> shape = node.getStaticShape(node.getInput(0), "an input");
  if (failed(shape))
    return failure();
  int64_t rank = shape->size();
  FailureOr<int64_t> start = node.getIntAttr("start", 0);
  FailureOr<int64_t> end = node.getIntAttr("end", rank);
  if (failed(start) || failed(end))
    return failure();
  auto clampAxis = [&](int64_t a) {
    return std::clamp<int64_t>(a < 0 ? a + rank : a, 0, rank);
  };
  int64_t first = clampAxis(*start), last = std::max(first, clampAxis(*end));
  return setShapeConstant(node, shape->slice(first, last - first));
}

LogicalResult convertSize(OnnxNode &node) {
  FailureOr<ArrayRef<int64_t>> shape = node.getStaticShape(node.getInput(0), "an input");
  if (failed(shape))
    return failure();
  return setShapeConstant(node, {*staticElementCount(*shape)}, /*scalar=*/true);
}

/// ConstantOfShape: a splat of `value` (a one-element tensor, default float
/// 0) shaped by the constant input.
LogicalResult convertConstantOfShape(OnnxNode &node) {
  FailureOr<SmallVector<int64_t>> shape = node.getConstantInts(0, "shape");
  if (failed(shape))
    return failure();
  if (llvm::any_of(*shape, [](int64_t d) { return d < 0; }) ||
      failed(staticElementCount(*shape)))
    return node.emitError() << "expects a shape of sizes >= 0, got "
                            << formatIntList(*shape);
  Builder b(node.getContext());
  Attribute element = b.getF32FloatAttr(0.0f);
  if (const onnx::AttributeProto *attr = node.getAttribute("value")) {
    if (attr->type() != onnx::AttributeProto::TENSOR)
      return node.emitError() << "expects attribute 'value' to be a TENSOR";
    FailureOr<DenseElementsAttr> value =
        decodeOnnxTensor(attr->t(), node.getModelDir(), node.getLoc());
    if (failed(value))
      return failure();
    if (value->getNumElements() != 1)
      return node.emitError() << "expects a one-element 'value', got "
                              << value->getNumElements() << " elements";
    element = *value->getValues<Attribute>().begin();
  }
  auto type = RankedTensorType::get(*shape, llvm::cast<TypedAttr>(element).getType());
  node.setConstantResult(0, SplatElementsAttr::get(type, element));
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
                                << formatIntList(*requested);
      inferred = i;
      shape.push_back(1);
    } else if (size == 0 && !*allowZero) {
      if (i >= inShape->size())
        return node.emitError() << "shape " << formatIntList(*requested)
                                << " copies dimension " << i
                                << " of an input of rank " << inShape->size();
      shape.push_back((*inShape)[i]);
    } else if (size < 0) {
      return node.emitError()
             << "expects sizes >= -1 in shape " << formatIntList(*requested);
    } else {
      shape.push_back(size);
    }
  }
  if (inferred) {
    FailureOr<int64_t> total = staticElementCount(*inShape);
    FailureOr<int64_t> known = staticElementCount(shape);
    if (failed(total) || failed(known) || *known == 0 || *total % *known)
      return node.emitError()
             << "cannot reshape " << formatIntList(*inShape) << " to "
             << formatIntList(*requested) << " (the -1 does not divide out)";
    shape[*inferred] = *total / *known;
  } else if (failed(staticElementCount(shape))) {
    return node.emitError() << "has a shape with too many elements "
                            << formatIntList(*requested);
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

/// Slice: starts, ends, axes and steps as attributes before opset 10, as
/// (constant) inputs from then on. Out-of-range bounds clamp as the
/// specification says; a negative step reads backwards (torch.flip).
LogicalResult convertSlice(OnnxNode &node) {
  Value x = node.getInput(0);
  FailureOr<ArrayRef<int64_t>> shape = node.getStaticShape(x, "an input");
  if (failed(shape))
    return failure();
  int64_t rank = shape->size();
  SmallVector<int64_t> starts, ends, axes, steps;
  if (node.getOpset() < 10) {
    if (node.getNumInputs() > 1)
      return node.emitError() << "takes starts, ends and axes as attributes before "
                                 "opset 10, got "
                              << node.getNumInputs() << " inputs";
    FailureOr<std::optional<SmallVector<int64_t>>> s = node.getIntsAttr("starts");
    FailureOr<std::optional<SmallVector<int64_t>>> e = node.getIntsAttr("ends");
    FailureOr<std::optional<SmallVector<int64_t>>> a = node.getIntsAttr("axes");
    if (failed(s) || failed(e) || failed(a))
      return failure();
    if (!*s || !*e)
      return node.emitError() << "expects attributes 'starts' and 'ends'";
    starts = **s;
    ends = **e;
    if (*a)
      axes = **a;
  } else {
    for (StringRef attr : {"starts", "ends", "axes"})
      if (failed(node.refuseAttr(attr, "they are inputs from opset 10")))
        return failure();
    FailureOr<SmallVector<int64_t>> s = node.getConstantInts(1, "starts");
    FailureOr<SmallVector<int64_t>> e = node.getConstantInts(2, "ends");
    if (failed(s) || failed(e))
      return failure();
    starts = *s;
    ends = *e;
    if (node.hasInput(3)) {
      FailureOr<SmallVector<int64_t>> a = node.getConstantInts(3, "axes");
      if (failed(a))
        return failure();
      axes = *a;
    }
    if (node.hasInput(4)) {
      FailureOr<SmallVector<int64_t>> st = node.getConstantInts(4, "steps");
      if (failed(st))
        return failure();
      steps = *st;
    }
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i)
      axes.push_back(i);
  if (steps.empty())
    steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size())
    return node.emitError() << "expects starts, ends, axes and steps of one length, got "
                            << starts.size() << ", " << ends.size() << ", "
                            << axes.size() << " and " << steps.size();
  FailureOr<SmallVector<int64_t>> normalized = node.normalizeAxes(axes, rank);
  if (failed(normalized))
    return failure();
  SmallVector<int64_t> start(rank, 0), limit(*shape), step(rank, 1);
  SmallVector<int64_t> reversed;
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
    int64_t dim = (*shape)[axis], st = steps[i];
    if (st == 0)
      return node.emitError() << "expects nonzero steps, got " << formatIntList(steps);
    int64_t first = starts[i], end = ends[i];
    // INT64_MAX / INT64_MIN mean "to the end": keep them from overflowing.
    first = first < 0 ? std::max<int64_t>(first, -dim) + dim : first;
    end = end < 0 ? std::max<int64_t>(end, -dim - 1) + dim : end;
    if (st > 0) {
      first = std::clamp<int64_t>(first, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
    } else {
      first = std::clamp<int64_t>(first, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
    }
    // The span is at most the dimension; the step may be any int64.
    int64_t span = st > 0 ? end - first : first - end;
    __int128 stride = st > 0 ? static_cast<__int128>(st) : -static_cast<__int128>(st);
    int64_t count = span <= 0 ? 0 : static_cast<int64_t>(1 + (span - 1) / stride);
    if (count <= 1) {
      // One element or none: the step does not matter (and may be any int64).
      start[axis] = count ? first : 0;
      step[axis] = 1;
    } else if (st > 0) {
      start[axis] = first;
      step[axis] = st;
    } else {
      // The same elements read forwards from the last one, then reversed.
      start[axis] = first + (count - 1) * st;
      step[axis] = -st;
      reversed.push_back(axis);
    }
    limit[axis] = count ? start[axis] + (count - 1) * step[axis] + 1 : start[axis];
  }
  KilnOpBuilder::Result y = node.getBuilder().slice(x, start, limit, step);
  for (int64_t axis : reversed) {
    if (failed(y))
      return failure();
    if (KilnOpBuilder::shapeOf(*y)[axis] > 1)
      y = node.getBuilder().reverse(*y, axis);
  }
  return node.setResult(0, y);
}

/// Slices of `x` along `axis`, of `sizes` (summing to its size there).
FailureOr<SmallVector<Value>> sliceParts(OnnxNode &node, Value x, int64_t axis,
                                         ArrayRef<int64_t> sizes) {
  ArrayRef<int64_t> shape = llvm::cast<RankedTensorType>(x.getType()).getShape();
  SmallVector<Value> parts;
  int64_t offset = 0;
  for (int64_t size : sizes) {
    SmallVector<int64_t> start(shape.size(), 0), limit(shape), step(shape.size(), 1);
    start[axis] = offset;
    limit[axis] = offset + size;
    offset += size;
    KilnOpBuilder::Result part = node.getBuilder().slice(x, start, limit, step);
    if (failed(part))
      return failure();
    parts.push_back(*part);
  }
  return parts;
}

/// Split into equal parts (the last smaller from opset 18's num_outputs) or
/// by the sizes given as an attribute (before 13) or input.
LogicalResult convertSplit(OnnxNode &node) {
  Value x = node.getInput(0);
  FailureOr<ArrayRef<int64_t>> shape = node.getStaticShape(x, "an input");
  FailureOr<int64_t> axisAttr = node.getIntAttr("axis", 0);
  if (failed(shape) || failed(axisAttr))
    return failure();
  FailureOr<int64_t> axis = node.normalizeAxis(*axisAttr, shape->size());
  if (failed(axis))
    return failure();
  int64_t dim = (*shape)[*axis], outputs = node.getNumOutputs();
  SmallVector<int64_t> sizes;
  if (node.getOpset() < 13) {
    if (node.getNumInputs() > 1)
      return node.emitError() << "takes split sizes as an attribute before opset 13, got "
                              << node.getNumInputs() << " inputs";
    FailureOr<std::optional<SmallVector<int64_t>>> split = node.getIntsAttr("split");
    if (failed(split))
      return failure();
    if (*split)
      sizes = **split;
  } else {
    if (failed(node.refuseAttr("split", "sizes are input #1 from opset 13")))
      return failure();
    if (node.hasInput(1)) {
      FailureOr<SmallVector<int64_t>> split = node.getConstantInts(1, "split");
      if (failed(split))
        return failure();
      sizes = *split;
    }
  }
  if (node.hasAttribute("num_outputs")) {
    FailureOr<int64_t> n = node.getIntAttr("num_outputs", outputs);
    if (failed(n))
      return failure();
    if (!sizes.empty() || *n != outputs || *n < 1)
      return node.emitError() << "expects num_outputs (" << *n
                              << ") to equal the outputs (" << outputs
                              << ") and no split sizes";
  }
  if (sizes.empty()) {
    int64_t part = node.getOpset() >= 18 ? (dim + outputs - 1) / outputs : dim / outputs;
    if (node.getOpset() < 18 && dim % outputs)
      return node.emitError() << "cannot split dimension " << *axis << " of size "
                              << dim << " into " << outputs << " equal parts";
    for (int64_t i = 0; i < outputs; ++i)
      sizes.push_back(std::min(part, dim - i * part));
  }
  int64_t total = 0;
  for (int64_t size : sizes)
    total += size;
  if (static_cast<int64_t>(sizes.size()) != outputs || total != dim ||
      llvm::any_of(sizes, [](int64_t s) { return s < 1; }))
    return node.emitError() << "expects " << outputs << " split sizes summing to "
                            << dim << ", got " << formatIntList(sizes);
  FailureOr<SmallVector<Value>> parts = sliceParts(node, x, *axis, sizes);
  if (failed(parts))
    return failure();
  for (int64_t i = 0; i < outputs; ++i)
    if (failed(node.setResult(i, (*parts)[i])))
      return failure();
  return success();
}

/// SplitToSequence: the parts as Split makes them (sizes given, or chunks of
/// a scalar size, the last smaller), or without `split` every slice of size
/// 1, squeezed away unless keepdims; a sequence only SequenceAt reads.
LogicalResult convertSplitToSequence(OnnxNode &node) {
  Value x = node.getInput(0);
  FailureOr<ArrayRef<int64_t>> shape = node.getStaticShape(x, "an input");
  FailureOr<int64_t> axisAttr = node.getIntAttr("axis", 0);
  FailureOr<int64_t> keepDims = node.getIntAttr("keepdims", 1);
  if (failed(shape) || failed(axisAttr) || failed(keepDims))
    return failure();
  FailureOr<int64_t> axis = node.normalizeAxis(*axisAttr, shape->size());
  if (failed(axis))
    return failure();
  int64_t dim = (*shape)[*axis];
  SmallVector<int64_t> sizes;
  bool squeeze = false;
  if (!node.hasInput(1)) {
    sizes.assign(dim, 1);
    squeeze = *keepDims == 0;
  } else {
    DenseElementsAttr split = node.getConstantInput(1);
    FailureOr<SmallVector<int64_t>> given = node.getConstantInts(1, "split");
    if (failed(given))
      return failure();
    if (split && split.getType().getRank() == 0) { // Chunks of one size.
      int64_t chunk = given->front();
      if (chunk < 1)
        return node.emitError() << "expects a split size of at least 1, got " << chunk;
      for (int64_t at = 0; at < dim; at += chunk)
        sizes.push_back(std::min(chunk, dim - at));
    } else {
      sizes = *given;
    }
  }
  int64_t total = 0;
  for (int64_t size : sizes)
    total += size;
  if (total != dim || llvm::any_of(sizes, [](int64_t s) { return s < 1; }))
    return node.emitError() << "expects split sizes summing to " << dim << ", got "
                            << formatIntList(sizes);
  FailureOr<SmallVector<Value>> parts = sliceParts(node, x, *axis, sizes);
  if (failed(parts))
    return failure();
  if (squeeze) {
    SmallVector<int64_t> squeezed(*shape);
    squeezed.erase(squeezed.begin() + *axis);
    for (Value &part : *parts) {
      KilnOpBuilder::Result reshaped = node.getBuilder().reshape(part, squeezed);
      if (failed(reshaped))
        return failure();
      part = *reshaped;
    }
  }
  node.setSequenceResult(0, std::move(*parts));
  return success();
}

/// SequenceAt: the tensor at a position known at import (negative counts
/// from the end) of a sequence SplitToSequence made.
LogicalResult convertSequenceAt(OnnxNode &node) {
  const SmallVector<Value> *sequence = node.getSequenceInput(0);
  if (!sequence)
    return node.emitError() << "expects a sequence made by SplitToSequence as input #0";
  FailureOr<SmallVector<int64_t>> position = node.getConstantInts(1, "position");
  if (failed(position))
    return failure();
  int64_t count = sequence->size();
  int64_t at = position->empty() ? 0 : position->front();
  if (position->size() != 1 || at < -count || at >= count)
    return node.emitError() << "expects one position in [" << -count << ", " << count
                            << "), got " << formatIntList(*position);
  return node.setResult(0, (*sequence)[at < 0 ? at + count : at]);
}

/// SequenceEmpty: a sequence of no tensors (a Loop's rows start as one).
LogicalResult convertSequenceEmpty(OnnxNode &node) {
  node.setSequenceResult(0, {});
  return success();
}

/// ConcatFromSequence: the tensors concatenated along `axis`, or stacked
/// along a new axis there with `new_axis`; of a stacked sequence (a Loop's
/// rows, [count, element...]), that tensor with its axis 0 moved to `axis`,
/// and merged into the next one unless `new_axis`.
LogicalResult convertConcatFromSequence(OnnxNode &node) {
  FailureOr<int64_t> axisAttr = node.getIntAttr("axis", INT64_MIN);
  FailureOr<int64_t> newAxis = node.getIntAttr("new_axis", 0);
  if (failed(axisAttr) || failed(newAxis))
    return failure();
  if (*axisAttr == INT64_MIN)
    return node.emitError() << "needs attribute 'axis'";
  if (*newAxis != 0 && *newAxis != 1)
    return node.emitError() << "expects new_axis 0 or 1, got " << *newAxis;
  KilnOpBuilder &b = node.getBuilder();
  if (Value stacked = node.getStackedSequenceInput(0)) {
    ArrayRef<int64_t> shape = KilnOpBuilder::shapeOf(stacked);
    int64_t elementRank = shape.size() - 1;
    FailureOr<int64_t> axis = node.normalizeAxis(*axisAttr, elementRank, *newAxis != 0);
    if (failed(axis))
      return failure();
    SmallVector<int64_t> permutation;
    for (int64_t d = 1; d <= elementRank; ++d) {
      if (d - 1 == *axis)
        permutation.push_back(0);
      permutation.push_back(d);
    }
    if (*axis == elementRank)
      permutation.push_back(0);
    Result moved = b.transpose(stacked, permutation);
    if (failed(moved) || *newAxis)
      return node.setResult(0, moved);
    SmallVector<int64_t> merged(KilnOpBuilder::shapeOf(*moved));
    merged[*axis] *= merged[*axis + 1];
    merged.erase(merged.begin() + *axis + 1);
    return node.setResult(0, b.reshape(*moved, merged));
  }
  const SmallVector<Value> *parts = node.getSequenceInput(0);
  if (!parts)
    return node.emitError() << "expects a sequence as input #0";
  if (parts->empty())
    return node.emitError() << "reads an empty sequence (kiln's tensors are never empty)";
  int64_t rank = KilnOpBuilder::rankOf(parts->front());
  FailureOr<int64_t> axis = node.normalizeAxis(*axisAttr, rank, *newAxis != 0);
  if (failed(axis))
    return failure();
  SmallVector<Value> inputs;
  for (Value part : *parts) {
    if (!*newAxis) {
      inputs.push_back(part);
      continue;
    }
    SmallVector<int64_t> shape(KilnOpBuilder::shapeOf(part));
    shape.insert(shape.begin() + *axis, 1);
    Result expanded = b.reshape(part, shape);
    if (failed(expanded))
      return failure();
    inputs.push_back(*expanded);
  }
  return node.setResult(0, b.concat(inputs, *axis));
}

/// Trilu: the upper (j - i >= k) or lower (j - i <= k) triangle of the last
/// two dimensions, the rest 0: a select against a mask known at import
/// (scaled_dot_product_attention(is_causal=True) writes it over ones, which
/// then folds to a constant).
LogicalResult convertTrilu(OnnxNode &node) {
  Value x = node.getInput(0);
  FailureOr<ArrayRef<int64_t>> shape = node.getStaticShape(x, "an input");
  FailureOr<int64_t> upper = node.getIntAttr("upper", 1);
  if (failed(shape) || failed(upper))
    return failure();
  if (shape->size() < 2)
    return node.emitError() << "expects an input of rank 2 or more, got "
                            << formatIntList(*shape);
  int64_t k = 0;
  if (node.hasInput(1)) {
    FailureOr<SmallVector<int64_t>> given = node.getConstantInts(1, "k");
    if (failed(given))
      return failure();
    if (given->size() != 1)
      return node.emitError() << "expects one diagonal offset k, got " << formatIntList(*given);
    k = given->front();
  }
  int64_t rows = (*shape)[shape->size() - 2], cols = shape->back();
  SmallVector<bool> keep;
  keep.reserve(rows * cols);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      keep.push_back(*upper ? j - i >= k : j - i <= k);
  KilnOpBuilder &b = node.getBuilder();
  auto maskType = RankedTensorType::get({rows, cols}, b.getBuilder().getI1Type());
  KilnOpBuilder::Result mask = b.constant(DenseElementsAttr::get(maskType, ArrayRef<bool>(keep)));
  KilnOpBuilder::Result zero = b.splatLike(x, 0.0);
  if (failed(mask) || failed(zero))
    return failure();
  return node.setResult(0, b.select(*mask, x, *zero));
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
             << " (shape " << formatIntList(*shape) << ")";
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
           << "expects sizes >= 0 in shape " << formatIntList(*requested);
  Value x = node.getInput(0);
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShapes(KilnOpBuilder::shapeOf(x), *requested);
  if (failed(shape))
    return node.emitError()
           << "cannot broadcast " << formatIntList(KilnOpBuilder::shapeOf(x))
           << " with shape " << formatIntList(*requested);
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

/// An nn.Embedding lookup with padding_idx, as PyTorch trains it: the rows
/// looked up at the padding index are the table's in the forward pass but
/// take no gradient (a select of their value held by stop_gradient), so
/// that row of the table is never updated by them.
Result holdPaddingRows(KilnOpBuilder &b, Value rows, Value indices, int64_t padding) {
  Result pad = b.splatLike(indices, static_cast<double>(padding));
  Result isPad = succeeded(pad) ? b.compare(ComparePredicate::eq, indices, *pad) : pad;
  SmallVector<int64_t> maskShape(KilnOpBuilder::shapeOf(indices));
  maskShape.append(KilnOpBuilder::rankOf(rows) - maskShape.size(), 1);
  Result mask = succeeded(isPad) ? b.reshape(*isPad, maskShape) : isPad;
  Result held = b.unary<StopGradientOp>(rows);
  if (failed(mask) || failed(held))
    return failure();
  return b.select(*mask, *held, rows);
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
  KilnOpBuilder &b = node.getBuilder();
  Result rows = b.gather(table, *indices, *axis);
  std::optional<int64_t> padding = torchEmbeddingPaddingIndex(torchFxNodeOf(node.getProto()));
  if (failed(rows) || *axis != 0 || !padding)
    return node.setResult(0, rows);
  return node.setResult(0, holdPaddingRows(b, *rows, *indices, *padding));
}

LogicalResult convertGatherElements(OnnxNode &node) {
  FailureOr<int64_t> axisAttr = node.getIntAttr("axis", 0);
  if (failed(axisAttr))
    return failure();
  Value input = node.getInput(0);
  FailureOr<int64_t> axis = node.normalizeAxis(*axisAttr, KilnOpBuilder::rankOf(input));
  if (failed(axis))
    return failure();
  // Indices known at import time are checked as Gather's are.
  int64_t size = KilnOpBuilder::shapeOf(input)[*axis];
  if (DenseElementsAttr constant = node.getConstantInput(1))
    if (constant.getElementType().isSignlessInteger(64) ||
        constant.getElementType().isSignlessInteger(32))
      for (const APInt &index : constant.getValues<APInt>()) {
        int64_t i = index.getSExtValue();
        if (!ShapedType::isDynamic(size) && (i < -size || i >= size))
          return node.emitError() << "has index " << i << " out of range [" << -size << ", "
                                  << size << ") for dimension " << *axis;
      }
  return node.setResult(0, node.getBuilder().gatherElements(input, node.getInput(1), *axis));
}

constexpr OnnxOpConversion kShapeOps[] = {
    {"Identity", 1, 1, 1, "", convertIdentity},
    {"Dropout", 1, 3, 2, "ratio seed", convertDropout, 7},
    {"Shape", 1, 1, 1, "start end", convertShape},
    {"Size", 1, 1, 1, "", convertSize},
    {"ConstantOfShape", 1, 1, 1, "value", convertConstantOfShape, 9},
    {"Range", 3, 3, 1, "", convertRange<OnnxNode>, 11},
    {"Slice", 1, 5, 1, "starts ends axes", convertSlice},
    {"Split", 1, 2, OnnxOpConversion::kVariadic, "axis split num_outputs", convertSplit},
    {"SplitToSequence", 1, 2, 1, "axis keepdims", convertSplitToSequence, 11},
    {"Trilu", 1, 2, 1, "upper", convertTrilu, 14},
    {"SequenceAt", 2, 2, 1, "", convertSequenceAt, 11},
    {"SequenceEmpty", 0, 0, 1, "dtype", convertSequenceEmpty, 11},
    {"ConcatFromSequence", 1, 1, 1, "axis new_axis", convertConcatFromSequence, 11},
    {"Tile", 2, 2, 1, "", convertTile},
    {"GatherElements", 2, 2, 1, "axis", convertGatherElements, 11},
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
