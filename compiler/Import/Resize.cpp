//===- Resize.cpp - Resizing a tensor from kiln ops -----------------------===//

#include "compiler/Import/Resize.h"

#include "mlir/IR/TypeUtilities.h"

#include <algorithm>
#include <array>
#include <cmath>

using namespace mlir;

namespace kiln {
namespace {

using Result = KilnOpBuilder::Result;

/// The most output indices of one dimension a resize by gathers handles.
constexpr int64_t kMaxTableEntries = int64_t(1) << 20;

/// The input coordinate output index `i` maps to along a dimension of `in`
/// elements resized to `out` by `scale` (the model's, or out / in when it
/// gives sizes).
double sourceCoordinate(int64_t i, int64_t in, int64_t out, double scale,
                        llvm::StringRef transform, bool tfFloat32) {
  if (tfFloat32) {
    // TensorFlow's CalculateResizeScale and scalers, in float.
    float tfScale = transform == "align_corners" && out > 1
                        ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                        : static_cast<float>(in) / static_cast<float>(out);
    float y = static_cast<float>(i);
    if (transform == "half_pixel")
      return (y + 0.5f) * tfScale - 0.5f;
    if (transform == "tf_half_pixel_for_nn")
      return (y + 0.5f) * tfScale;
    return y * tfScale; // align_corners, asymmetric
  }
  if (transform == "half_pixel" || (transform == "pytorch_half_pixel" && out > 1))
    return (i + 0.5) / scale - 0.5;
  if (transform == "pytorch_half_pixel")
    return 0;
  if (transform == "half_pixel_symmetric") {
    double adjustment = out / (scale * in), center = in / 2.0;
    return center * (1 - adjustment) + (i + 0.5) / scale - 0.5;
  }
  if (transform == "align_corners")
    return out == 1 ? 0 : i * static_cast<double>(in - 1) / static_cast<double>(out - 1);
  if (transform == "tf_half_pixel_for_nn")
    return (i + 0.5) / scale;
  return i / scale; // asymmetric
}

/// The input index output index `i` reads by nearest `rounding`, clamped.
int64_t nearestSource(int64_t i, int64_t in, int64_t out, double scale,
                      llvm::StringRef transform, llvm::StringRef rounding, bool tfFloat32) {
  double x = sourceCoordinate(i, in, out, scale, transform, tfFloat32);
  double rounded = rounding == "floor"               ? std::floor(x)
                   : rounding == "ceil"              ? std::ceil(x)
                   : rounding == "round_prefer_ceil" ? std::floor(x + 0.5)
                                                     : std::ceil(x - 0.5);
  return std::clamp<int64_t>(static_cast<int64_t>(rounded), 0, in - 1);
}

/// One dimension's resize: for each tap k, the input index and weight of
/// every output index.
struct Taps {
  SmallVector<SmallVector<int64_t>> indices;
  SmallVector<SmallVector<double>> weights;
};

/// The cubic convolution coefficients of the four inputs around x (at
/// floor(x) - 1 .. floor(x) + 2) for fraction `t` = x - floor(x).
std::array<double, 4> cubicCoefficients(double t, double a) {
  auto near = [a](double d) { return ((a + 2) * d - (a + 3)) * d * d + 1; };          // |d| <= 1
  auto far = [a](double d) { return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a; };     // 1 < |d| < 2
  return {far(t + 1), near(t), near(1 - t), far(2 - t)};
}

Taps dimensionTaps(int64_t in, int64_t out, double scale, const ResizeMethod &method) {
  int64_t count = method.mode == "nearest" ? 1 : method.mode == "linear" ? 2 : 4;
  Taps taps;
  taps.indices.assign(count, SmallVector<int64_t>(out));
  taps.weights.assign(count, SmallVector<double>(out));
  for (int64_t i = 0; i < out; ++i) {
    if (count == 1) {
      taps.indices[0][i] =
          nearestSource(i, in, out, scale, method.transform, method.rounding, method.tfFloat32);
      taps.weights[0][i] = 1;
      continue;
    }
    double x = sourceCoordinate(i, in, out, scale, method.transform, method.tfFloat32);
    double base = std::floor(x), t = x - base;
    int64_t first = static_cast<int64_t>(base) - (count == 4 ? 1 : 0);
    std::array<double, 4> coefficients = count == 2 ? std::array<double, 4>{1 - t, t, 0, 0}
                                                    : cubicCoefficients(t, method.cubicA);
    double kept = 0;
    for (int64_t k = 0; k < count; ++k) {
      int64_t source = first + k;
      bool outside = source < 0 || source >= in;
      double weight = outside && method.excludeOutside ? 0 : coefficients[k];
      taps.indices[k][i] = std::clamp<int64_t>(source, 0, in - 1);
      taps.weights[k][i] = weight;
      kept += weight;
    }
    if (method.excludeOutside && kept != 0)
      for (int64_t k = 0; k < count; ++k)
        taps.weights[k][i] /= kept;
  }
  // Taps with no weight anywhere read nothing.
  for (int64_t k = count - 1; k >= 0; --k)
    if (llvm::all_of(taps.weights[k], [](double w) { return w == 0; }) &&
        taps.indices.size() > 1) {
      taps.indices.erase(taps.indices.begin() + k);
      taps.weights.erase(taps.weights.begin() + k);
    }
  return taps;
}

/// `x` resized along `axis` by `taps`: sum over k of x gathered at
/// indices[k], times weights[k] broadcast along the axis.
Result resizeAlong(KilnOpBuilder &b, Value x, int64_t axis, const Taps &taps) {
  int64_t rank = KilnOpBuilder::rankOf(x);
  int64_t out = static_cast<int64_t>(taps.indices[0].size());
  Type elementType = getElementTypeOrSelf(x.getType());
  Value sum;
  for (size_t k = 0; k < taps.indices.size(); ++k) {
    auto indexType = RankedTensorType::get({out}, b.getBuilder().getI64Type());
    Result ids = b.constant(DenseElementsAttr::get(indexType, ArrayRef(taps.indices[k])));
    Result term = succeeded(ids) ? b.gather(x, *ids, axis) : ids;
    if (failed(term))
      return failure();
    if (llvm::any_of(taps.weights[k], [](double w) { return w != 1; })) {
      SmallVector<int64_t> weightShape(rank, 1);
      weightShape[axis] = out;
      SmallVector<APFloat> weights;
      for (double w : taps.weights[k]) {
        APFloat value(w);
        bool lost;
        value.convert(llvm::cast<FloatType>(elementType).getFloatSemantics(),
                      APFloat::rmNearestTiesToEven, &lost);
        weights.push_back(value);
      }
      Result scale = b.constant(
          DenseElementsAttr::get(RankedTensorType::get(weightShape, elementType), weights));
      term = succeeded(scale) ? b.binary<MulOp>(*term, *scale) : scale;
      if (failed(term))
        return failure();
    }
    if (!sum) {
      sum = *term;
      continue;
    }
    Result added = b.binary<AddOp>(sum, *term);
    if (failed(added))
      return failure();
    sum = *added;
  }
  return sum;
}

/// Whether `taps` read each input index once with weight 1 in order.
bool isIdentity(const Taps &taps, int64_t in) {
  if (taps.indices.size() != 1 || static_cast<int64_t>(taps.indices[0].size()) != in)
    return false;
  for (int64_t i = 0; i < in; ++i)
    if (taps.indices[0][i] != i || taps.weights[0][i] != 1)
      return false;
  return true;
}

/// Nearest resize by whole multiples where every input element is repeated
/// (what F.interpolate(scale_factor=2) exports): x reshaped to [.., d, 1,
/// ..], broadcast to [.., d, s, ..] and merged; failure (no error) when the
/// resize is not such a repetition.
FailureOr<Value> repeatElements(KilnOpBuilder &b, Value x, ArrayRef<int64_t> outSizes,
                                ArrayRef<double> scales, const ResizeMethod &method) {
  ArrayRef<int64_t> shape = KilnOpBuilder::shapeOf(x);
  SmallVector<int64_t> split, expanded;
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t in = shape[d], out = outSizes[d];
    int64_t factor = in > 0 && out > 0 && out % in == 0 ? out / in : 0;
    // Each block of `factor` outputs must read its one input (the mapping
    // is monotonic: its ends suffice).
    bool repeats = factor >= 1;
    for (int64_t j = 0; repeats && j < in; ++j)
      repeats = nearestSource(j * factor, in, out, scales[d], method.transform,
                              method.rounding, method.tfFloat32) == j &&
                nearestSource((j + 1) * factor - 1, in, out, scales[d], method.transform,
                              method.rounding, method.tfFloat32) == j;
    if (!repeats)
      return failure();
    split.append({in, 1});
    expanded.append({in, factor});
  }
  Result y = b.reshape(x, split);
  if (succeeded(y))
    y = b.broadcastTo(*y, expanded);
  if (succeeded(y))
    y = b.reshape(*y, outSizes);
  // An error here was emitted: not "not a repetition".
  if (failed(y))
    return Value();
  return *y;
}

} // namespace

FailureOr<Value> buildResize(ImportNode &node, Value x, ArrayRef<int64_t> outSizes,
                             ArrayRef<double> scales, const ResizeMethod &method) {
  KilnOpBuilder &b = node.getBuilder();
  ArrayRef<int64_t> shape = KilnOpBuilder::shapeOf(x);
  if (method.mode == "nearest") {
    FailureOr<Value> repeated = repeatElements(b, x, outSizes, scales, method);
    if (succeeded(repeated))
      return *repeated ? FailureOr<Value>(*repeated) : FailureOr<Value>(failure());
  }
  Value y = x;
  for (size_t d = 0; d < shape.size(); ++d) {
    // Each output index has its own input indices and weights, in tables
    // the artifact holds.
    if (outSizes[d] > kMaxTableEntries && outSizes[d] != shape[d])
      return node.emitError() << "resizes dimension " << d << " to " << outSizes[d]
                              << " elements; kiln's resize tables hold at most "
                              << kMaxTableEntries << " per dimension";
    Taps taps = dimensionTaps(shape[d], outSizes[d], scales[d], method);
    if (isIdentity(taps, shape[d]))
      continue;
    Result resized = resizeAlong(b, y, static_cast<int64_t>(d), taps);
    if (failed(resized))
      return failure();
    y = *resized;
  }
  return y;
}

} // namespace kiln
