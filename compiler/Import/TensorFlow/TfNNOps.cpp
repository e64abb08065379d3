//===- TfNNOps.cpp - TensorFlow convolution, pooling and batch norm -------===//
//
// Conv2D, DepthwiseConv2dNative, Conv2DBackpropInput (Keras'
// Conv2DTranspose), ResizeBilinear and ResizeNearestNeighbor, MaxPool,
// AvgPool and FusedBatchNorm (V1 to V3, inference form); Conv3D,
// Conv3DBackpropInputV2, MaxPool3D and AvgPool3D the same over three
// spatial dimensions. TensorFlow's default layout is channels-last (NHWC,
// NDHWC), kiln's convolution and pooling are channels-first: a
// channels-last input is transposed before the kiln op and its result back
// after it. A filter [KH, KW, C, F] (HWIO) is transposed to kiln's
// [F, C, KH, KW] ([KD, KH, KW, C, F] to [F, C, KD, KH, KW]).
// padding SAME and VALID are resolved into explicit padding here, SAME
// TensorFlow's way (the odd pixel goes after).
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/TensorFlow/TfOps.h"

#include "compiler/Import/DiagnosticText.h"
#include "compiler/Import/Resize.h"
#include "compiler/Import/TensorFlow/TfDilatedConvs.h"
#include "compiler/Import/TensorFlow/TfTensor.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace kiln {
namespace {

using Result = KilnOpBuilder::Result;

/// A window resolved to explicit padding, per spatial dimension.
struct TfWindow {
  SmallVector<int64_t> kernel, strides, dilations, padLow, padHigh;

  WindowAttrs attrs() const {
    return WindowAttrs{kernel, strides, dilations, padLow, padHigh, false};
  }
};

/// Whether data_format is channels-last (NHWC, or NDHWC for 3 spatial
/// dimensions: true) or channels-first (NCHW, NCDHW: false).
FailureOr<bool> readChannelsLast(TfNode &node, int spatial = 2) {
  StringRef last = spatial == 3 ? "NDHWC" : "NHWC", first = spatial == 3 ? "NCDHW" : "NCHW";
  FailureOr<std::string> format = node.getStringAttr("data_format", last);
  if (failed(format))
    return failure();
  if (*format != last && *format != first)
    return node.emitError() << "expects data_format " << last << " or " << first << ", got '"
                            << *format << "'";
  return *format == last;
}

/// An attribute of one entry per dimension in data_format order (strides,
/// ksize, dilations): its `spatial` spatial entries. The batch and channel
/// entries must be 1.
FailureOr<SmallVector<int64_t>> readSpatial(TfNode &node, StringRef name, bool channelsLast,
                                            bool required, int spatial = 2) {
  FailureOr<std::optional<SmallVector<int64_t>>> attr = node.getIntsAttr(name);
  if (failed(attr))
    return failure();
  if (!*attr || (*attr)->empty()) {
    if (required)
      return node.emitError() << "expects attribute '" << name << "'";
    return SmallVector<int64_t>(spatial, 1);
  }
  ArrayRef<int64_t> values = **attr;
  int64_t h = channelsLast ? 1 : 2, c = channelsLast ? spatial + 1 : 1;
  if (values.size() != static_cast<size_t>(spatial + 2))
    return node.emitError() << "expects attribute '" << name << "' to have " << spatial + 2
                            << " entries (one per dimension), got " << formatIntList(values);
  if (values[0] != 1 || values[c] != 1)
    return node.emitError()
           << "expects attribute '" << name
           << "' of 1 in the batch and channel dimensions, got "
           << formatIntList(values);
  ArrayRef<int64_t> sizes = values.slice(h, spatial);
  if (llvm::any_of(sizes, [](int64_t size) { return size < 1; }))
    return node.emitError() << "expects attribute '" << name
                            << "' of sizes >= 1, got " << formatIntList(values);
  return SmallVector<int64_t>(sizes);
}

/// strides, dilations (when `hasDilations`), padding and explicit_paddings
/// for an input of spatial sizes `sizes` and a window of `kernel`.
FailureOr<TfWindow> readWindow(TfNode &node, ArrayRef<int64_t> sizes,
                               ArrayRef<int64_t> kernel, bool channelsLast,
                               bool hasDilations) {
  TfWindow w;
  w.kernel.assign(kernel.begin(), kernel.end());
  auto spatial = static_cast<int>(sizes.size());
  FailureOr<SmallVector<int64_t>> strides =
      readSpatial(node, "strides", channelsLast, /*required=*/true, spatial);
  FailureOr<SmallVector<int64_t>> dilations =
      hasDilations
          ? readSpatial(node, "dilations", channelsLast, false, spatial)
          : FailureOr<SmallVector<int64_t>>(SmallVector<int64_t>(spatial, 1));
  FailureOr<std::string> padding = node.getStringAttr("padding", "");
  if (failed(strides) || failed(dilations) || failed(padding))
    return failure();
  w.strides = *strides;
  w.dilations = *dilations;
  if (*padding == "EXPLICIT" && spatial == 2) {
    FailureOr<std::optional<SmallVector<int64_t>>> pads =
        node.getIntsAttr("explicit_paddings");
    if (failed(pads))
      return failure();
    SmallVector<int64_t> all = *pads ? **pads : SmallVector<int64_t>();
    int64_t h = channelsLast ? 1 : 2, c = channelsLast ? 3 : 1;
    if (all.size() != 8)
      return node.emitError() << "expects explicit_paddings of 8 entries "
                                 "(before and after each dimension), got "
                              << formatIntList(all);
    if (all[0] || all[1] || all[2 * c] || all[2 * c + 1] ||
        llvm::any_of(all, [](int64_t p) { return p < 0; }))
      return node.emitError() << "expects explicit_paddings >= 0 and 0 in the "
                                 "batch and channel dimensions, got "
                              << formatIntList(all);
    w.padLow = {all[2 * h], all[2 * h + 2]};
    w.padHigh = {all[2 * h + 1], all[2 * h + 3]};
    return w;
  }
  if (*padding != "SAME" && *padding != "VALID")
    return node.emitError() << "expects padding SAME, VALID"
                            << (spatial == 2 ? " or EXPLICIT" : " (EXPLICIT is 2-D only)")
                            << ", got '" << *padding << "'";
  for (int64_t d = 0; d < spatial; ++d) {
    int64_t total = 0;
    if (*padding == "SAME") {
      // The output keeps ceil(size / stride) positions.
      int64_t out = (sizes[d] + w.strides[d] - 1) / w.strides[d];
      int64_t extent = w.dilations[d] * (w.kernel[d] - 1) + 1;
      total =
          std::max<int64_t>(0, (out - 1) * w.strides[d] + extent - sizes[d]);
    }
    w.padLow.push_back(total / 2);
    w.padHigh.push_back(total - total / 2);
  }
  return w;
}

/// The permutation from channels-last to channels-first of a rank
/// (0, rank - 1, 1, ..., rank - 2), or back.
SmallVector<int64_t> layoutPermutation(int64_t rank, bool toChannelsFirst) {
  SmallVector<int64_t> perm{0};
  if (toChannelsFirst)
    perm.push_back(rank - 1);
  for (int64_t d = toChannelsFirst ? 1 : 2; d < (toChannelsFirst ? rank - 1 : rank); ++d)
    perm.push_back(d);
  if (!toChannelsFirst)
    perm.push_back(1);
  return perm;
}

/// A float input of `spatial` + 2 dimensions: its shape and, channels-first,
/// the value kiln's op takes.
FailureOr<std::pair<SmallVector<int64_t>, Value>>
channelsFirstInput(TfNode &node, bool channelsLast, unsigned index = 0, int spatial = 2) {
  Value x = node.getInput(index);
  StringRef what = spatial == 3 ? (channelsLast ? "an input [N, D, H, W, C]"
                                                : "an input [N, C, D, H, W]")
                                : (channelsLast ? "an input [N, H, W, C]"
                                                : "an input [N, C, H, W]");
  if (failed(node.requireFloat(x, "an input")) ||
      failed(node.requireRank(x, spatial + 2, what)))
    return failure();
  ArrayRef<int64_t> shape = KilnOpBuilder::shapeOf(x);
  if (!channelsLast)
    return std::make_pair(SmallVector<int64_t>(shape), x);
  SmallVector<int64_t> perm = layoutPermutation(spatial + 2, /*toChannelsFirst=*/true);
  SmallVector<int64_t> first;
  for (int64_t d : perm)
    first.push_back(shape[d]);
  Result transposed = node.getBuilder().transpose(x, perm);
  if (failed(transposed))
    return failure();
  return std::make_pair(first, *transposed);
}

/// A channels-first result back in the node's layout.
LogicalResult setLayoutResult(TfNode &node, Result y, bool channelsLast) {
  if (succeeded(y) && channelsLast)
    y = node.getBuilder().transpose(
        *y, layoutPermutation(KilnOpBuilder::rankOf(*y), /*toChannelsFirst=*/false));
  return node.setResult(0, y);
}

/// The permutation of a filter [K..., C, F] (`spatial` K) to kiln's
/// [F, C, K...].
SmallVector<int64_t> filterToKiln(int spatial) {
  SmallVector<int64_t> perm{spatial + 1, spatial};
  for (int64_t d = 0; d < spatial; ++d)
    perm.push_back(d);
  return perm;
}

/// Conv2D, Conv3D (Spatial 3) and DepthwiseConv2dNative.
template <bool Depthwise, int Spatial = 2> LogicalResult convertConv(TfNode &node) {
  FailureOr<bool> channelsLast = readChannelsLast(node, Spatial);
  if (failed(channelsLast))
    return failure();
  auto input = channelsFirstInput(node, *channelsLast, 0, Spatial);
  if (failed(input))
    return failure();
  auto &[shape, x] = *input;
  // A dilated convolution folded from SpaceToBatchND (TfDilatedConvs.cpp):
  // the padded sizes had to be multiples of the blocks.
  FailureOr<std::optional<SmallVector<int64_t>>> blocks = node.getIntsAttr(kBlockPaddingAttr);
  if (failed(blocks))
    return failure();
  if (*blocks && (*blocks)->size() == 4 && Spatial == 2) {
    for (int64_t d = 0; d < 2; ++d) {
      int64_t block = (**blocks)[2 * d], padded = shape[2 + d] + (**blocks)[2 * d + 1];
      if (block >= 1 && padded % block != 0)
        return node.emitError() << "is the convolution of a SpaceToBatchND that pads dimension "
                                << d + 1 << " to " << padded << ", which block size " << block
                                << " does not divide";
    }
  }
  Value filter = node.getInput(1);
  if (failed(node.requireRank(filter, Spatial + 2,
                              Depthwise      ? "a filter [KH, KW, C, M]"
                              : Spatial == 3 ? "a filter [KD, KH, KW, C, F]"
                                             : "a filter [KH, KW, C, F]")))
    return failure();
  ArrayRef<int64_t> f = KilnOpBuilder::shapeOf(filter);
  int64_t channels = shape[1];
  int64_t groups = 1;
  KilnOpBuilder &b = node.getBuilder();
  Result kernel = failure();
  if (Depthwise) {
    if (f[2] != channels)
      return node.emitError()
             << "expects a filter of " << channels
             << " input channels, got shape " << formatIntList(f);
    // [KH, KW, C, M] -> [C * M, 1, KH, KW]; output channel c * M + m reads
    // input channel c, as kiln's groups = C gives.
    groups = channels;
    kernel = b.reshape(filter, {f[0], f[1], f[2] * f[3]});
    if (succeeded(kernel))
      kernel = b.transpose(*kernel, {2, 0, 1});
    if (succeeded(kernel))
      kernel = b.reshape(*kernel, {f[2] * f[3], 1, f[0], f[1]});
  } else {
    int64_t in = f[Spatial], out = f[Spatial + 1];
    if (in < 1 || channels % in || out % (channels / in))
      return node.emitError()
             << "expects a filter whose input channels divide " << channels
             << " (the input's) into groups that "
             << "divide its output channels, got shape " << formatIntList(f);
    groups = channels / in;
    kernel = b.transpose(filter, filterToKiln(Spatial));
  }
  if (failed(kernel))
    return failure();
  FailureOr<TfWindow> window =
      readWindow(node, ArrayRef<int64_t>(shape).drop_front(2), f.take_front(Spatial),
                 *channelsLast, /*hasDilations=*/true);
  if (failed(window))
    return failure();
  return setLayoutResult(node, b.conv(x, *kernel, window->attrs(), groups),
                         *channelsLast);
}

/// Conv2DBackpropInput (and Conv3DBackpropInputV2, Spatial 3)(input_sizes,
/// filter, out_backprop): the gradient of the convolution with respect to
/// its input, which Keras' Conv2DTranspose (Conv3DTranspose) writes:
/// kiln.conv_backward_data of out_backprop by the convolution's filter
/// [K..., C, F] (kiln's [F, C, K...]), for the convolution of an input of
/// input_sizes (known at import) with the node's window.
template <int Spatial = 2> LogicalResult convertConvBackpropInput(TfNode &node) {
  FailureOr<bool> channelsLast = readChannelsLast(node, Spatial);
  if (failed(channelsLast))
    return failure();
  FailureOr<SmallVector<int64_t>> sizes = node.getConstantInts(0, "input_sizes");
  auto gradient = channelsFirstInput(node, *channelsLast, 2, Spatial);
  if (failed(sizes) || failed(gradient))
    return failure();
  FailureOr<int64_t> elements = staticElementCount(*sizes);
  if (sizes->size() != static_cast<size_t>(Spatial + 2) || llvm::any_of(*sizes, [](int64_t d) { return d < 1; }) ||
      failed(elements) || *elements > (int64_t(1) << 31))
    return node.emitError() << "expects input #0 (input_sizes) to be " << Spatial + 2
                            << " sizes >= 1 of at most 2^31 elements, got "
                            << formatIntList(*sizes);
  SmallVector<int64_t> result(*sizes);
  if (*channelsLast) {
    result.clear();
    for (int64_t d : layoutPermutation(Spatial + 2, /*toChannelsFirst=*/true))
      result.push_back((*sizes)[d]);
  }
  Value filter = node.getInput(1);
  if (failed(node.requireRank(filter, Spatial + 2,
                              Spatial == 3 ? "a filter [KD, KH, KW, C, F]"
                                           : "a filter [KH, KW, C, F]")))
    return failure();
  ArrayRef<int64_t> f = KilnOpBuilder::shapeOf(filter);
  auto &[shape, dy] = *gradient;
  if (f[Spatial] != result[1] || f[Spatial + 1] != shape[1])
    return node.emitError() << "expects a filter [" << (Spatial == 3 ? "KD, " : "")
                            << "KH, KW, " << result[1] << ", " << shape[1]
                            << "] (the result's and out_backprop's channels), got "
                            << formatIntList(f);
  FailureOr<TfWindow> window =
      readWindow(node, ArrayRef<int64_t>(result).drop_front(2), f.take_front(Spatial),
                 *channelsLast, /*hasDilations=*/true);
  if (failed(window))
    return failure();
  KilnOpBuilder &b = node.getBuilder();
  Result kernel = b.transpose(filter, filterToKiln(Spatial));
  if (failed(kernel))
    return failure();
  return setLayoutResult(node, b.convTranspose(dy, *kernel, window->attrs(), 1, result),
                         *channelsLast);
}

/// ResizeBilinear and ResizeNearestNeighbor of images [N, H, W, C] to `size`
/// (known at import), by compiler/Import/Resize.cpp with TensorFlow's float
/// arithmetic: half_pixel_centers (Keras' UpSampling2D and Resizing set it)
/// is onnx.ai's half_pixel for bilinear, floor((i + 0.5) in / out) for
/// nearest; align_corners maps the corners onto each other (nearest rounds
/// half away from zero); neither reads i in / out (nearest: its floor).
template <bool Bilinear> LogicalResult convertResize(TfNode &node) {
  Value images = node.getInput(0);
  FailureOr<SmallVector<int64_t>> size = node.getConstantInts(1, "size");
  FailureOr<bool> alignCorners = node.getBoolAttr("align_corners", false);
  FailureOr<bool> halfPixel = node.getBoolAttr("half_pixel_centers", false);
  if (failed(node.requireNumeric(images, "images")) ||
      failed(node.requireRank(images, 4, "images [N, H, W, C]")) || failed(size) ||
      failed(alignCorners) || failed(halfPixel))
    return failure();
  ArrayRef<int64_t> shape = KilnOpBuilder::shapeOf(images);
  if (llvm::any_of(shape, [](int64_t d) { return d < 1; }))
    return node.emitError() << "expects images of no empty dimension, got "
                            << formatIntList(shape);
  // ResizeBilinear computes and gives float32 whatever the images' type;
  // nearest keeps it.
  KilnOpBuilder &b = node.getBuilder();
  if (Bilinear && !getElementTypeOrSelf(images.getType()).isF32()) {
    Result cast = b.cast(images, b.getBuilder().getF32Type());
    if (failed(cast))
      return failure();
    images = *cast;
  }
  if (size->size() != 2 || (*size)[0] < 1 || (*size)[1] < 1)
    return node.emitError() << "expects input #1 (size) to be 2 sizes >= 1, got "
                            << formatIntList(*size);
  if (*alignCorners && *halfPixel)
    return node.emitError() << "expects align_corners and half_pixel_centers not both true";
  SmallVector<int64_t> outSizes = {shape[0], (*size)[0], (*size)[1], shape[3]};
  FailureOr<int64_t> elements = staticElementCount(outSizes);
  if (failed(elements) || *elements > (int64_t(1) << 31))
    return node.emitError() << "would make " << formatIntList(outSizes)
                            << ": more than 2^31 elements";
  SmallVector<double> scales = {1, double(outSizes[1]) / double(shape[1]),
                                double(outSizes[2]) / double(shape[2]), 1};
  ResizeMethod method;
  method.mode = Bilinear ? "linear" : "nearest";
  method.tfFloat32 = true;
  if (*alignCorners) {
    method.transform = "align_corners";
    method.rounding = "round_prefer_ceil";
  } else if (*halfPixel) {
    method.transform = Bilinear ? "half_pixel" : "tf_half_pixel_for_nn";
    method.rounding = "floor";
  } else {
    method.transform = "asymmetric";
    method.rounding = "floor";
  }
  FailureOr<Value> y = buildResize(node, images, outSizes, scales, method);
  return failed(y) ? failure() : node.setResult(0, *y);
}

/// MaxPool and AvgPool (MaxPool3D and AvgPool3D: Spatial 3). TensorFlow's
/// average divides by the number of input elements in the window (padding
/// excluded).
template <bool Max, int Spatial = 2> LogicalResult convertPool(TfNode &node) {
  FailureOr<bool> channelsLast = readChannelsLast(node, Spatial);
  if (failed(channelsLast))
    return failure();
  auto input = channelsFirstInput(node, *channelsLast, 0, Spatial);
  FailureOr<SmallVector<int64_t>> kernel =
      readSpatial(node, "ksize", *channelsLast, /*required=*/true, Spatial);
  if (failed(input) || failed(kernel))
    return failure();
  auto &[shape, x] = *input;
  FailureOr<TfWindow> window =
      readWindow(node, ArrayRef<int64_t>(shape).drop_front(2), *kernel,
                 *channelsLast, /*hasDilations=*/false);
  if (failed(window))
    return failure();
  KilnOpBuilder &b = node.getBuilder();
  Result y = Max ? b.maxPool(x, window->attrs())
                 : b.avgPool(x, window->attrs(), /*excludePad=*/true);
  return setLayoutResult(node, y, *channelsLast);
}

/// FusedBatchNorm(x, scale, offset, mean, variance) in inference form:
/// (x - mean) * (rsqrt(variance + epsilon) * scale) + offset per channel,
/// TensorFlow's order of operations. The statistics are frozen variables
/// that do not train (TfGraph::findMovingStatistics).
LogicalResult convertFusedBatchNorm(TfNode &node) {
  FailureOr<bool> training = node.getBoolAttr("is_training", true);
  FailureOr<float> epsilon = node.getFloatAttr("epsilon", 1e-4f);
  if (failed(training) || failed(epsilon))
    return failure();
  if (*training)
    return node.emitError() << "is in training mode (is_training true: batch "
                               "statistics); kiln imports the inference form: "
                               "export the model with training=False";
  Value x = node.getInput(0);
  int64_t rank = KilnOpBuilder::rankOf(x);
  if (failed(node.requireFloat(x, "an input")) ||
      failed(node.requireRank(x, rank == 5 ? 5 : 4, "an input of rank 4 or 5")))
    return failure();
  // NHWC or NCHW; NDHWC or NCDHW for rank 5 (BatchNormalization after a
  // Conv3D).
  FailureOr<bool> channelsLast = readChannelsLast(node, static_cast<int>(rank) - 2);
  if (failed(channelsLast))
    return failure();
  ArrayRef<int64_t> shape = KilnOpBuilder::shapeOf(x);
  int64_t channelAxis = *channelsLast ? rank - 1 : 1, channels = shape[channelAxis];
  KilnOpBuilder &b = node.getBuilder();
  static constexpr StringLiteral kNames[] = {"scale", "offset", "mean",
                                             "variance"};
  SmallVector<Value> perChannel;
  for (unsigned i = 1; i <= 4; ++i) {
    Value v = node.getInput(i);
    ArrayRef<int64_t> vShape = KilnOpBuilder::shapeOf(v);
    if (vShape.size() != 1 || vShape[0] != channels)
      return node.emitError()
             << "expects " << kNames[i - 1] << " of shape [" << channels
             << "] (the input's channels), got " << formatIntList(vShape);
    SmallVector<int64_t> column(rank - 1, 1);
    column[0] = channels;
    Result aligned = *channelsLast ? Result(v) : b.reshape(v, column);
    if (failed(aligned))
      return failure();
    perChannel.push_back(*aligned);
  }
  Value scale = perChannel[0], offset = perChannel[1], mean = perChannel[2],
        variance = perChannel[3];
  Result eps = b.splatLike(variance, *epsilon);
  Result factor = failed(eps) ? eps : b.binary<AddOp>(variance, *eps);
  if (succeeded(factor))
    factor = b.unary<RsqrtOp>(*factor);
  if (succeeded(factor))
    factor = b.binary<MulOp>(*factor, scale);
  Result centered = b.binary<SubOp>(x, mean);
  if (failed(factor) || failed(centered))
    return failure();
  Result y = b.binary<MulOp>(*centered, *factor);
  if (failed(y))
    return failure();
  return node.setResult(0, b.binary<AddOp>(*y, offset));
}

constexpr TfOpConversion kNNOps[] = {
    {"Conv2D", 2, 2,
     "T data_format dilations explicit_paddings padding strides "
     "use_cudnn_on_gpu",
     convertConv<false>},
    {"DepthwiseConv2dNative", 2, 2,
     "T data_format dilations explicit_paddings padding strides",
     convertConv<true>},
    {"Conv2DBackpropInput", 3, 3,
     "T data_format dilations explicit_paddings padding strides use_cudnn_on_gpu",
     convertConvBackpropInput<2>},
    {"Conv3D", 2, 2, "T data_format dilations padding strides", convertConv<false, 3>},
    {"Conv3DBackpropInputV2", 3, 3, "T Tshape data_format dilations padding strides",
     convertConvBackpropInput<3>},
    {"MaxPool3D", 1, 1, "T data_format ksize padding strides", convertPool<true, 3>},
    {"AvgPool3D", 1, 1, "T data_format ksize padding strides", convertPool<false, 3>},
    {"ResizeBilinear", 2, 2, "T align_corners half_pixel_centers", convertResize<true>},
    {"ResizeNearestNeighbor", 2, 2, "T align_corners half_pixel_centers",
     convertResize<false>},
    {"MaxPool", 1, 1, "T data_format explicit_paddings ksize padding strides",
     convertPool<true>},
    {"AvgPool", 1, 1, "T data_format ksize padding strides",
     convertPool<false>},
    {"FusedBatchNorm", 5, 5,
     "T data_format epsilon exponential_avg_factor is_training",
     convertFusedBatchNorm},
    {"FusedBatchNormV2", 5, 5,
     "T U data_format epsilon exponential_avg_factor is_training",
     convertFusedBatchNorm},
    {"FusedBatchNormV3", 5, 5,
     "T U data_format epsilon exponential_avg_factor is_training",
     convertFusedBatchNorm},
};

} // namespace

ArrayRef<TfOpConversion> getTfNNOps() { return kNNOps; }

} // namespace kiln
