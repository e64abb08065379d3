//===- OnnxNNOps.cpp - ONNX convolution, pooling and batch norm -----------===//
//
// Conv, ConvTranspose, MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool and
// BatchNormalization (inference form) over channels-first tensors with one
// to three spatial dimensions. auto_pad is resolved into explicit padding
// here; kiln's ops take only explicit padding.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/Onnx/OnnxOps.h"

#include "compiler/Import/DiagnosticText.h"
#include "compiler/Import/Onnx/OnnxTensor.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace kiln {
namespace {

using Result = KilnOpBuilder::Result;

/// A window's attributes as ONNX gives them, with defaults filled in and
/// auto_pad resolved.
struct OnnxWindow {
  SmallVector<int64_t> kernel, strides, dilations, padLow, padHigh;
  bool ceilMode = false;

  WindowAttrs attrs() const {
    return WindowAttrs{kernel, strides, dilations, padLow, padHigh, ceilMode};
  }
};

/// `name` as a list of `spatial` ints, `fill` when absent.
FailureOr<SmallVector<int64_t>> spatialInts(OnnxNode &node, StringRef name,
                                            int64_t spatial, int64_t fill) {
  FailureOr<std::optional<SmallVector<int64_t>>> attr = node.getIntsAttr(name);
  if (failed(attr))
    return failure();
  if (!*attr)
    return SmallVector<int64_t>(spatial, fill);
  if (static_cast<int64_t>((*attr)->size()) != spatial)
    return node.emitError() << "expects attribute '" << name << "' to have " << spatial
                            << " entries (one per spatial dimension), got "
                            << formatIntList(**attr);
  return **attr;
}

/// Reads kernel_shape (or takes `kernel`, a convolution's filter sizes),
/// strides, dilations, pads and auto_pad for an input of spatial sizes
/// `sizes`.
FailureOr<OnnxWindow> readWindow(OnnxNode &node, ArrayRef<int64_t> sizes,
                                 ArrayRef<int64_t> kernel) {
  int64_t spatial = sizes.size();
  OnnxWindow w;
  // Each read only after the previous succeeded: one error at most.
  FailureOr<std::optional<SmallVector<int64_t>>> kernelAttr =
      node.getIntsAttr("kernel_shape");
  if (failed(kernelAttr))
    return failure();
  FailureOr<SmallVector<int64_t>> strides = spatialInts(node, "strides", spatial, 1);
  if (failed(strides))
    return failure();
  FailureOr<SmallVector<int64_t>> dilations = spatialInts(node, "dilations", spatial, 1);
  if (failed(dilations))
    return failure();
  FailureOr<std::string> autoPad = node.getStringAttr("auto_pad", "NOTSET");
  if (failed(autoPad))
    return failure();
  FailureOr<int64_t> ceilMode = node.getIntAttr("ceil_mode", 0);
  if (failed(ceilMode))
    return failure();
  if (*kernelAttr) {
    if (!kernel.empty() && ArrayRef<int64_t>(**kernelAttr) != kernel)
      return node.emitError() << "has kernel_shape " << formatIntList(**kernelAttr)
                              << " but a filter of spatial shape " << formatIntList(kernel);
    w.kernel = **kernelAttr;
  } else if (kernel.empty()) {
    return node.emitError() << "expects attribute 'kernel_shape'";
  } else {
    w.kernel.assign(kernel.begin(), kernel.end());
  }
  if (static_cast<int64_t>(w.kernel.size()) != spatial)
    return node.emitError() << "expects a kernel of " << spatial
                            << " spatial dimensions, got " << formatIntList(w.kernel);
  for (int64_t d = 0; d < spatial; ++d)
    if ((*strides)[d] < 1 || (*dilations)[d] < 1)
      return node.emitError() << "expects strides and dilations of at least 1, got "
                              << formatIntList(*strides) << " and "
                              << formatIntList(*dilations);
  w.strides = *strides;
  w.dilations = *dilations;
  w.ceilMode = *ceilMode != 0;
  FailureOr<std::optional<SmallVector<int64_t>>> pads = node.getIntsAttr("pads");
  if (failed(pads))
    return failure();
  if (*autoPad == "NOTSET") {
    SmallVector<int64_t> all = *pads ? **pads : SmallVector<int64_t>(2 * spatial, 0);
    if (static_cast<int64_t>(all.size()) != 2 * spatial)
      return node.emitError() << "expects attribute 'pads' to have " << 2 * spatial
                              << " entries (begins, then ends), got "
                              << formatIntList(all);
    w.padLow.assign(all.begin(), all.begin() + spatial);
    w.padHigh.assign(all.begin() + spatial, all.end());
    if (llvm::any_of(all, [](int64_t p) { return p < 0; }))
      return node.emitError() << "expects pads >= 0, got " << formatIntList(all);
    return w;
  }
  if (*pads)
    return node.emitError() << "has both pads and auto_pad '" << printable(*autoPad) << "'";
  for (int64_t d = 0; d < spatial; ++d) {
    int64_t low = 0, high = 0;
    if (*autoPad == "SAME_UPPER" || *autoPad == "SAME_LOWER") {
      // The output keeps ceil(size / stride) positions.
      int64_t out = (sizes[d] + w.strides[d] - 1) / w.strides[d];
      int64_t extent = w.dilations[d] * (w.kernel[d] - 1) + 1;
      int64_t total = std::max<int64_t>(0, (out - 1) * w.strides[d] + extent - sizes[d]);
      low = *autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      high = total - low;
    } else if (*autoPad != "VALID") {
      return node.emitError() << "expects auto_pad NOTSET, SAME_UPPER, SAME_LOWER or "
                                 "VALID, got '"
                              << printable(*autoPad) << "'";
    }
    w.padLow.push_back(low);
    w.padHigh.push_back(high);
  }
  return w;
}

/// The input [N, C, D...] with 1 to 3 static spatial dimensions.
FailureOr<ArrayRef<int64_t>> channelsFirst(OnnxNode &node, Value x) {
  if (failed(node.requireFloat(x, "an input")))
    return failure();
  FailureOr<ArrayRef<int64_t>> shape = node.getStaticShape(x, "an input");
  if (failed(shape))
    return failure();
  if (shape->size() < 3 || shape->size() > 5)
    return node.emitError() << "expects an input [N, C, D...] with 1 to 3 spatial "
                               "dimensions, got shape "
                            << formatIntList(*shape);
  return shape;
}

/// A per-channel vector [C] reshaped to [1, C, 1...] to broadcast over x.
Result perChannel(OnnxNode &node, Value v, ArrayRef<int64_t> xShape, StringRef what) {
  ArrayRef<int64_t> shape = KilnOpBuilder::shapeOf(v);
  if (shape.size() != 1 || shape[0] != xShape[1])
    return node.emitError() << "expects " << what << " of shape [" << xShape[1]
                            << "] (the input's channels), got " << formatIntList(shape);
  SmallVector<int64_t> target(xShape.size(), 1);
  target[1] = xShape[1];
  return node.getBuilder().reshape(v, target);
}

/// What Conv and ConvTranspose read first: the input [N, C, D...], the
/// filter's static shape and the group count.
struct ConvInputs {
  Value x, filter;
  ArrayRef<int64_t> shape, filterShape;
  int64_t group;
};

FailureOr<ConvInputs> readConvInputs(OnnxNode &node) {
  ConvInputs in{node.getInput(0), node.getInput(1), {}, {}, 1};
  FailureOr<ArrayRef<int64_t>> shape = channelsFirst(node, in.x);
  if (failed(shape))
    return failure();
  FailureOr<ArrayRef<int64_t>> filterShape = node.getStaticShape(in.filter, "a filter");
  FailureOr<int64_t> group = succeeded(filterShape) ? node.getIntAttr("group", 1)
                                                    : FailureOr<int64_t>(failure());
  if (failed(group))
    return failure();
  in.shape = *shape;
  in.filterShape = *filterShape;
  in.group = *group;
  return in;
}

/// Output 0: `y`, plus the bias B (input #2, [F]) per channel when given.
LogicalResult setResultWithBias(OnnxNode &node, Result y) {
  if (failed(y) || !node.hasInput(2))
    return node.setResult(0, y);
  Result bias = perChannel(node, node.getInput(2), KilnOpBuilder::shapeOf(*y), "a bias B");
  if (failed(bias))
    return failure();
  return node.setResult(0, node.getBuilder().binary<AddOp>(*y, *bias));
}

LogicalResult convertConv(OnnxNode &node) {
  FailureOr<ConvInputs> in = readConvInputs(node);
  if (failed(in))
    return failure();
  if (in->filterShape.size() != in->shape.size())
    return node.emitError() << "expects a filter of rank " << in->shape.size()
                            << " [F, C / group, K...], got shape "
                            << formatIntList(in->filterShape);
  FailureOr<OnnxWindow> window =
      readWindow(node, in->shape.drop_front(2), in->filterShape.drop_front(2));
  if (failed(window))
    return failure();
  return setResultWithBias(node,
                           node.getBuilder().conv(in->x, in->filter, window->attrs(), in->group));
}

/// ConvTranspose: the gradient of a convolution with respect to its input
/// (kiln.conv_backward_data), whose filter W [C, M / group, K...] is the
/// convolution's [C, M / group, K...] as ONNX lays it out. Output size per
/// spatial dimension: stride (in - 1) + output_padding + dilation (k - 1)
/// + 1 - pads; output_shape (or auto_pad SAME_*: the input's size times the
/// stride) instead gives the size and the pads follow, the odd one at the
/// end under SAME_UPPER, else at the start.
LogicalResult convertConvTranspose(OnnxNode &node) {
  FailureOr<ConvInputs> inputs = readConvInputs(node);
  if (failed(inputs))
    return failure();
  Value x = inputs->x, filter = inputs->filter;
  ArrayRef<int64_t> shape = inputs->shape, filterShape = inputs->filterShape;
  int64_t group = inputs->group;
  int64_t spatial = static_cast<int64_t>(shape.size()) - 2;
  if (static_cast<int64_t>(filterShape.size()) != spatial + 2 || group < 1 ||
      filterShape[0] != shape[1] || shape[1] % group != 0)
    return node.emitError() << "expects a filter [C, M / group, K...] of rank " << spatial + 2
                            << " with C = " << shape[1]
                            << " (the input's channels, divisible by group " << group
                            << "), got " << formatIntList(filterShape);
  FailureOr<SmallVector<int64_t>> outputPadding =
      spatialInts(node, "output_padding", spatial, 0);
  FailureOr<std::optional<SmallVector<int64_t>>> outputShape = node.getIntsAttr("output_shape");
  FailureOr<std::string> autoPad = node.getStringAttr("auto_pad", "NOTSET");
  if (failed(outputPadding) || failed(outputShape) || failed(autoPad))
    return failure();
  bool same = *autoPad == "SAME_UPPER" || *autoPad == "SAME_LOWER";
  if (*outputShape && (**outputShape).size() != size_t(spatial) &&
      (**outputShape).size() != size_t(spatial + 2))
    return node.emitError() << "expects output_shape of " << spatial << " (or " << spatial + 2
                            << ") entries, got " << formatIntList(**outputShape);
  // Under SAME_* or output_shape the pads read here are replaced below.
  FailureOr<OnnxWindow> window =
      readWindow(node, shape.drop_front(2), filterShape.drop_front(2));
  if (failed(window))
    return failure();
  // The product computes [N, M, core...]; output_padding beyond the high
  // pad appends zeros (no input position reaches there).
  SmallVector<int64_t> coreShape = {shape[0], filterShape[1] * group}, appended;
  for (int64_t d = 0; d < spatial; ++d) {
    int64_t in = shape[d + 2], stride = window->strides[d];
    double reach = double(stride) * double(in - 1) +
                   double(window->dilations[d]) * double(window->kernel[d] - 1);
    if (reach > double(int64_t(1) << 31))
      return node.emitError() << "would reach " << reach << " positions in dimension " << d
                              << ": more than 2^31";
    int64_t extent = window->dilations[d] * (window->kernel[d] - 1) + 1;
    int64_t extra = (*outputPadding)[d];
    if (extra < 0 || extra >= std::max(stride, window->dilations[d]))
      return node.emitError() << "expects output_padding below the stride or dilation, got "
                              << formatIntList(*outputPadding);
    int64_t full = stride * (in - 1) + extra + extent;
    if (same || *outputShape) {
      // The pads that give the wanted size.
      int64_t out = *outputShape ? (**outputShape)[(**outputShape).size() == size_t(spatial)
                                                       ? d
                                                       : d + 2]
                                 : in * stride;
      int64_t total = full - out;
      if (total < 0)
        return node.emitError() << "cannot reach output size " << out << " in dimension "
                                << d << " (at most " << full << ")";
      // onnx.ai's rule: the odd one at the end under SAME_UPPER only.
      bool upper = *autoPad == "SAME_UPPER";
      window->padLow[d] = upper ? total / 2 : total - total / 2;
      window->padHigh[d] = total - window->padLow[d];
    }
    int64_t out = full - window->padLow[d] - window->padHigh[d];
    if (out < 1)
      return node.emitError() << "gives an output of size " << out << " in dimension " << d;
    int64_t coreHigh = std::max<int64_t>(window->padHigh[d] - extra, 0);
    int64_t core = full - extra - window->padLow[d] - coreHigh;
    if (core < 1)
      return node.emitError() << "gives an output of size " << core << " before "
                              << "output_padding in dimension " << d;
    window->padHigh[d] = coreHigh;
    coreShape.push_back(core);
    appended.push_back(out - core);
  }
  KilnOpBuilder &b = node.getBuilder();
  Result y = b.convTranspose(x, filter, window->attrs(), group, coreShape);
  for (int64_t d = 0; d < spatial && succeeded(y); ++d) {
    if (appended[d] == 0)
      continue;
    SmallVector<int64_t> zerosShape(KilnOpBuilder::shapeOf(*y));
    zerosShape[d + 2] = appended[d];
    auto type = RankedTensorType::get(zerosShape, getElementTypeOrSelf(y->getType()));
    Result zeros =
        b.constant(SplatElementsAttr::get(type, b.getBuilder().getZeroAttr(type.getElementType())));
    y = succeeded(zeros) ? b.concat({*y, *zeros}, d + 2) : zeros;
  }
  return setResultWithBias(node, y);
}

LogicalResult convertMaxPool(OnnxNode &node) {
  Value x = node.getInput(0);
  FailureOr<ArrayRef<int64_t>> shape = channelsFirst(node, x);
  if (failed(shape))
    return failure();
  FailureOr<int64_t> storageOrder = node.getIntAttr("storage_order", 0);
  if (failed(storageOrder))
    return failure();
  if (*storageOrder != 0)
    return node.emitError() << "expects storage_order 0 (row major), got " << *storageOrder;
  FailureOr<OnnxWindow> window = readWindow(node, shape->drop_front(2), {});
  if (failed(window))
    return failure();
  return node.setResult(0, node.getBuilder().maxPool(x, window->attrs()));
}

LogicalResult convertAveragePool(OnnxNode &node) {
  Value x = node.getInput(0);
  FailureOr<ArrayRef<int64_t>> shape = channelsFirst(node, x);
  if (failed(shape))
    return failure();
  FailureOr<int64_t> includePad = node.getIntAttr("count_include_pad", 0);
  if (failed(includePad))
    return failure();
  FailureOr<OnnxWindow> window = readWindow(node, shape->drop_front(2), {});
  if (failed(window))
    return failure();
  return node.setResult(0, node.getBuilder().avgPool(x, window->attrs(), *includePad == 0));
}

/// GlobalAveragePool and GlobalMaxPool: a reduction over the spatial
/// dimensions, kept as size 1.
template <typename OpTy> LogicalResult convertGlobalPool(OnnxNode &node) {
  Value x = node.getInput(0);
  FailureOr<ArrayRef<int64_t>> shape = channelsFirst(node, x);
  if (failed(shape))
    return failure();
  SmallVector<int64_t> axes;
  for (int64_t d = 2; d < static_cast<int64_t>(shape->size()); ++d)
    axes.push_back(d);
  return node.setResult(0, node.getBuilder().reduce<OpTy>(x, axes, /*keepDims=*/true));
}

/// Marks the variable `v` reads as not trainable (BatchNormalization's
/// running statistics, which inference-form training leaves alone).
void freezeVariable(Value v) {
  auto read = v.getDefiningOp<ReadOp>();
  if (!read)
    return;
  auto module = read->getParentOfType<ModuleOp>();
  if (auto variable = module.lookupSymbol<VariableOp>(read.getVariable()))
    variable.setTrainable(false);
}

/// BatchNormalization with running statistics: y = (x - mean) * scale /
/// sqrt(var + epsilon) + B, per channel. Scale and B train; the statistics
/// are frozen (as PyTorch's module.eval() and Keras' training=False).
LogicalResult convertBatchNorm(OnnxNode &node) {
  FailureOr<float> epsilon = node.getFloatAttr("epsilon", 1e-5f);
  FailureOr<int64_t> training = node.getIntAttr("training_mode", 0);
  FailureOr<int64_t> spatial = node.getIntAttr("spatial", 1);
  FailureOr<float> momentum = node.getFloatAttr("momentum", 0.9f);
  if (failed(epsilon) || failed(training) || failed(spatial) || failed(momentum))
    return failure();
  if (*training != 0)
    return node.emitError() << "is in training mode (batch statistics); kiln imports "
                               "the inference form: export the model in eval mode";
  if (node.getOpset() >= 9 &&
      failed(node.refuseAttr("spatial", "it was removed in opset 9")))
    return failure();
  if (*spatial != 1)
    return node.emitError() << "expects spatial 1, got " << *spatial;
  Value x = node.getInput(0);
  if (failed(node.requireFloat(x, "an input")))
    return failure();
  FailureOr<ArrayRef<int64_t>> shape = node.getStaticShape(x, "an input");
  if (failed(shape))
    return failure();
  if (shape->size() < 2)
    return node.emitError() << "expects an input [N, C, ...], got shape "
                            << formatIntList(*shape);
  KilnOpBuilder &b = node.getBuilder();
  Value mean = node.getInput(3), var = node.getInput(4);
  freezeVariable(mean);
  freezeVariable(var);
  // One error at most: each operand is checked only once the last passed.
  Result scale = perChannel(node, node.getInput(1), *shape, "scale");
  Result bias = failed(scale) ? scale : perChannel(node, node.getInput(2), *shape, "B");
  Result meanC = failed(bias) ? bias : perChannel(node, mean, *shape, "input_mean");
  Result varC = failed(meanC) ? meanC : perChannel(node, var, *shape, "input_var");
  if (failed(varC))
    return failure();
  Result eps = b.splatLike(*varC, *epsilon);
  Result inverse = failed(eps) ? eps : b.binary<AddOp>(*varC, *eps);
  if (succeeded(inverse))
    inverse = b.unary<RsqrtOp>(*inverse);
  if (failed(inverse))
    return failure();
  Result factor = b.binary<MulOp>(*scale, *inverse);
  Result centered = b.binary<SubOp>(x, *meanC);
  if (failed(factor) || failed(centered))
    return failure();
  Result y = b.binary<MulOp>(*centered, *factor);
  if (failed(y))
    return failure();
  return node.setResult(0, b.binary<AddOp>(*y, *bias));
}

constexpr OnnxOpConversion kNNOps[] = {
    {"Conv", 2, 3, 1, "auto_pad dilations group kernel_shape pads strides", convertConv},
    {"ConvTranspose", 2, 3, 1,
     "auto_pad dilations group kernel_shape output_padding output_shape pads strides",
     convertConvTranspose},
    {"MaxPool", 1, 1, 2,
     "auto_pad ceil_mode dilations kernel_shape pads storage_order strides",
     convertMaxPool},
    {"AveragePool", 1, 1, 1,
     "auto_pad ceil_mode count_include_pad dilations kernel_shape pads strides",
     convertAveragePool},
    {"GlobalAveragePool", 1, 1, 1, "", convertGlobalPool<ReduceMeanOp>},
    {"GlobalMaxPool", 1, 1, 1, "", convertGlobalPool<ReduceMaxOp>},
    {"BatchNormalization", 5, 5, 3, "epsilon momentum training_mode spatial",
     convertBatchNorm},
};

} // namespace

ArrayRef<OnnxOpConversion> getOnnxNNOps() { return kNNOps; }

} // namespace kiln
