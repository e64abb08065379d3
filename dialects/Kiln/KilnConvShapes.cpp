//===- KilnConvShapes.cpp - Shape rules of convolution and pooling --------===//
//
// Windows over channels-first tensors [N, C, D...] (KilnConvOps.td). The
// output size of one spatial dimension is
//   floor((D + low + high - dilation * (K - 1) - 1) / stride) + 1,
// rounded up instead with ceil_mode, where (as in PyTorch and ONNX) a last
// window that would start in the high padding is dropped.
//
//===----------------------------------------------------------------------===//

#include "dialects/Kiln/KilnShapes.h"

using namespace mlir;

namespace kiln {
namespace {

constexpr int64_t kDynamic = ShapedType::kDynamic;

/// Checks that every per-dimension list has `spatial` entries and sane
/// values; `kernel` is skipped when empty (a convolution's filter gives it).
LogicalResult checkWindow(const ShapeDiag &diag, const WindowAttrs &window,
                          int64_t spatial) {
  struct Named {
    const char *name;
    ArrayRef<int64_t> values;
    int64_t min;
  };
  Named lists[] = {{"kernel", window.kernel, 1},
                   {"strides", window.strides, 1},
                   {"dilations", window.dilations, 1},
                   {"pad_low", window.padLow, 0},
                   {"pad_high", window.padHigh, 0}};
  for (const Named &list : lists) {
    if (list.values.empty() && StringRef(list.name) == "kernel")
      continue;
    if (static_cast<int64_t>(list.values.size()) != spatial)
      return diag.fail("expects ", list.name, " to have ", spatial,
                       " entries (one per spatial dimension), got ",
                       list.values.size());
    for (int64_t v : list.values)
      if (v < list.min)
        return diag.fail("expects ", list.name, " of at least ", list.min,
                         ", got ", formatShape(list.values));
  }
  return success();
}

/// The spatial output sizes, or a diagnostic naming the dimension that the
/// window does not fit.
FailureOr<SmallVector<int64_t>> outputSizes(const ShapeDiag &diag,
                                            ArrayRef<int64_t> sizes,
                                            ArrayRef<int64_t> kernel,
                                            const WindowAttrs &window) {
  SmallVector<int64_t> out;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (kernel[i] != kDynamic && kernel[i] < 1)
      return diag.fail("expects a window of at least 1 in spatial dimension ", i, ", got ",
                       kernel[i]);
    if (sizes[i] == kDynamic || kernel[i] == kDynamic) {
      out.push_back(kDynamic);
      continue;
    }
    FailureOr<int64_t> size = windowOutputSize(
        sizes[i], kernel[i], window.strides[i], window.dilations[i],
        window.padLow[i], window.padHigh[i], window.ceilMode);
    if (failed(size))
      return diag.fail("expects the window (kernel ", kernel[i], ", dilation ",
                       window.dilations[i], ") to fit spatial dimension ", i,
                       " of size ", sizes[i], " padded by ", window.padLow[i],
                       " and ", window.padHigh[i]);
    out.push_back(*size);
  }
  return out;
}

} // namespace

FailureOr<int64_t> windowOutputSize(int64_t size, int64_t kernel, int64_t stride,
                                    int64_t dilation, int64_t low, int64_t high,
                                    bool ceilMode) {
  int64_t span = size + low + high - dilation * (kernel - 1) - 1;
  if (span < 0)
    return failure();
  int64_t out = (ceilMode ? (span + stride - 1) / stride : span / stride) + 1;
  // A window starting in the high padding reads no element: PyTorch drops it.
  if (ceilMode && (out - 1) * stride >= size + low)
    --out;
  return out;
}

InferredType inferConvType(const ShapeDiag &diag, Type inputType, Type filterType,
                           const WindowAttrs &window, int64_t groups) {
  FailureOr<RankedTensorType> input = ranked(diag, inputType, "input");
  FailureOr<RankedTensorType> filter = ranked(diag, filterType, "filter");
  if (failed(input) || failed(filter))
    return failure();
  int64_t rank = input->getRank();
  if (rank < 3 || rank > 5)
    return diag.fail("expects an input [N, C, D...] with 1 to 3 spatial "
                     "dimensions, got shape ",
                     formatShape(input->getShape()));
  if (filter->getRank() != rank)
    return diag.fail("expects a filter of rank ", rank, " [F, C / groups, K...], got shape ",
                     formatShape(filter->getShape()));
  if (input->getElementType() != filter->getElementType())
    return diag.fail("expects input and filter of one element type, got ",
                     input->getElementType(), " and ", filter->getElementType());
  if (failed(checkWindow(diag, window, rank - 2)))
    return failure();
  if (groups < 1)
    return diag.fail("expects groups of at least 1, got ", groups);
  int64_t channels = input->getDimSize(1), features = filter->getDimSize(0);
  if (channels != kDynamic && channels % groups)
    return diag.fail("expects input channels (", channels,
                     ") divisible by groups (", groups, ")");
  if (features != kDynamic && features % groups)
    return diag.fail("expects filter outputs (", features,
                     ") divisible by groups (", groups, ")");
  int64_t perGroup = filter->getDimSize(1);
  if (channels != kDynamic && perGroup != kDynamic && perGroup * groups != channels)
    return diag.fail("expects filter dimension 1 (", perGroup,
                     ") to be input channels / groups (", channels, " / ", groups,
                     ")");
  FailureOr<SmallVector<int64_t>> spatial = outputSizes(
      diag, input->getShape().drop_front(2), filter->getShape().drop_front(2), window);
  if (failed(spatial))
    return failure();
  SmallVector<int64_t> shape = {input->getDimSize(0), features};
  llvm::append_range(shape, *spatial);
  return RankedTensorType::get(shape, input->getElementType());
}

InferredType inferPoolType(const ShapeDiag &diag, Type inputType,
                           const WindowAttrs &window, Type elementType) {
  FailureOr<RankedTensorType> input = ranked(diag, inputType, "input");
  if (failed(input))
    return failure();
  int64_t rank = input->getRank();
  if (rank < 3 || rank > 5)
    return diag.fail("expects an input [N, C, D...] with 1 to 3 spatial "
                     "dimensions, got shape ",
                     formatShape(input->getShape()));
  if (window.kernel.empty())
    return diag.fail("expects a kernel");
  if (failed(checkWindow(diag, window, rank - 2)))
    return failure();
  for (size_t i = 0; i < window.kernel.size(); ++i)
    if (window.padLow[i] >= window.dilations[i] * (window.kernel[i] - 1) + 1 ||
        window.padHigh[i] >= window.dilations[i] * (window.kernel[i] - 1) + 1)
      return diag.fail("expects padding smaller than the window in spatial "
                       "dimension ",
                       i, ", got ", window.padLow[i], " and ", window.padHigh[i],
                       " for a kernel of ", window.kernel[i]);
  FailureOr<SmallVector<int64_t>> spatial =
      outputSizes(diag, input->getShape().drop_front(2), window.kernel, window);
  if (failed(spatial))
    return failure();
  SmallVector<int64_t> shape(input->getShape().take_front(2));
  llvm::append_range(shape, *spatial);
  return RankedTensorType::get(shape, elementType ? elementType
                                                  : input->getElementType());
}

InferredType inferGatherElementsType(const ShapeDiag &diag, Type inputType,
                                     Type indicesType, int64_t axis) {
  FailureOr<RankedTensorType> input = ranked(diag, inputType, "input");
  FailureOr<RankedTensorType> indices = ranked(diag, indicesType, "indices");
  if (failed(input) || failed(indices))
    return failure();
  if (!indices->getElementType().isInteger(32) &&
      !indices->getElementType().isInteger(64))
    return diag.fail("expects i32 or i64 indices, got ", indices->getElementType());
  int64_t rank = input->getRank();
  if (indices->getRank() != rank)
    return diag.fail("expects indices of the input's rank (", rank, "), got shape ",
                     formatShape(indices->getShape()));
  if (axis < 0 || axis >= rank)
    return diag.fail("expects axis (", axis, ") to be in [0, ", rank, ")");
  for (int64_t d = 0; d < rank; ++d) {
    int64_t have = indices->getDimSize(d), limit = input->getDimSize(d);
    if (d != axis && have != kDynamic && limit != kDynamic && have > limit)
      return diag.fail("expects indices dimension ", d, " (", have,
                       ") to be at most the input's (", limit, ")");
  }
  return RankedTensorType::get(indices->getShape(), input->getElementType());
}

} // namespace kiln
