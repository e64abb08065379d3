//===- ReferenceWindows.cpp - Convolution and pooling in float64 ----------===//

#include "reference/ReferenceWindows.h"

#include <algorithm>
#include <cmath>
#include <functional>

namespace kiln::reference {
namespace {

using Shape = std::vector<int64_t>;

int64_t product(const Shape &shape, size_t from = 0) {
  int64_t n = 1;
  for (size_t d = from; d < shape.size(); ++d)
    n *= shape[d];
  return n;
}

/// Calls `body` with every index of `shape` (row-major).
void forEachIndex(const Shape &shape, const std::function<void(const Shape &)> &body) {
  Shape index(shape.size(), 0);
  for (int64_t i = 0, e = product(shape); i < e; ++i) {
    body(index);
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
}

int64_t flat(const Shape &index, const Shape &shape) {
  int64_t i = 0;
  for (size_t d = 0; d < shape.size(); ++d)
    i = i * shape[d] + index[d];
  return i;
}

/// The input position a window reads at output `o`, offset `k`; false when
/// it lies in the padding.
bool inputPosition(const Window &w, const Shape &spatial, const Shape &o,
                   const Shape &k, Shape &position) {
  position.resize(spatial.size());
  for (size_t d = 0; d < spatial.size(); ++d) {
    position[d] = o[d] * w.strides[d] - w.padLow[d] + k[d] * w.dilations[d];
    if (position[d] < 0 || position[d] >= spatial[d])
      return false;
  }
  return true;
}

/// Calls `body(n, c, o, outIndex)` for every output element.
void forEachOutput(const Shape &out,
                   const std::function<void(int64_t, int64_t, const Shape &, int64_t)> &body) {
  forEachIndex(out, [&](const Shape &index) {
    Shape o(index.begin() + 2, index.end());
    body(index[0], index[1], o, flat(index, out));
  });
}

/// Calls `tap(outAt, inAt, weight)` for every term of a convolution of an
/// input of shape `in` [N, C, D...] with `w` [F, C / groups, K...] into
/// `out` [N, F, O...]: output element `outAt` adds input element `inAt`
/// times `weight`. A convolution gathers these terms; its transpose
/// scatters them back.
void forEachConvTerm(const Shape &in, const Tensor &w, const Window &window, int64_t groups,
                     const Shape &out,
                     const std::function<void(int64_t, int64_t, double)> &tap) {
  Shape spatial(in.begin() + 2, in.end());
  Shape kernel(w.shape.begin() + 2, w.shape.end());
  int64_t perGroupIn = w.shape[1], perGroupOut = w.shape[0] / groups;
  forEachOutput(out, [&](int64_t n, int64_t f, const Shape &o, int64_t at) {
    int64_t group = f / perGroupOut;
    for (int64_t c = 0; c < perGroupIn; ++c) {
      int64_t channel = group * perGroupIn + c;
      forEachIndex(kernel, [&](const Shape &k) {
        Shape p;
        if (!inputPosition(window, spatial, o, k, p))
          return;
        Shape xi = {n, channel}, wi = {f, c};
        xi.insert(xi.end(), p.begin(), p.end());
        wi.insert(wi.end(), k.begin(), k.end());
        tap(at, flat(xi, in), w.data[flat(wi, w.shape)]);
      });
    }
  });
}

} // namespace

Tensor convolve(const Tensor &x, const Tensor &w, const Window &window,
                int64_t groups, const Shape &out) {
  Tensor result{out, std::vector<double>(product(out), 0.0)};
  forEachConvTerm(x.shape, w, window, groups, out, [&](int64_t at, int64_t from, double weight) {
    result.data[at] += x.data[from] * weight;
  });
  return result;
}

Tensor convolveTransposed(const Tensor &dy, const Tensor &w, const Window &window,
                          int64_t groups, const Shape &out) {
  Tensor result{out, std::vector<double>(product(out), 0.0)};
  forEachConvTerm(out, w, window, groups, dy.shape,
                  [&](int64_t at, int64_t to, double weight) {
                    result.data[to] += dy.data[at] * weight;
                  });
  return result;
}

Tensor maxPool(const Tensor &x, const Window &window, const Shape &out) {
  Tensor result{out, std::vector<double>(product(out), -INFINITY)};
  Shape spatial(x.shape.begin() + 2, x.shape.end());
  forEachOutput(out, [&](int64_t n, int64_t c, const Shape &o, int64_t at) {
    forEachIndex(window.kernel, [&](const Shape &k) {
      Shape p;
      if (!inputPosition(window, spatial, o, k, p))
        return;
      Shape xi = {n, c};
      xi.insert(xi.end(), p.begin(), p.end());
      result.data[at] = std::max(result.data[at], x.data[flat(xi, x.shape)]);
    });
  });
  return result;
}

Tensor avgPool(const Tensor &x, const Window &window, bool excludePad, const Shape &out) {
  Tensor result{out, std::vector<double>(product(out), 0.0)};
  Shape spatial(x.shape.begin() + 2, x.shape.end());
  forEachOutput(out, [&](int64_t n, int64_t c, const Shape &o, int64_t at) {
    double sum = 0;
    int64_t inside = 0;
    forEachIndex(window.kernel, [&](const Shape &k) {
      Shape p;
      if (!inputPosition(window, spatial, o, k, p))
        return;
      Shape xi = {n, c};
      xi.insert(xi.end(), p.begin(), p.end());
      sum += x.data[flat(xi, x.shape)];
      ++inside;
    });
    // PyTorch's divisor: the window clipped to the padded input.
    int64_t padded = 1;
    for (size_t d = 0; d < spatial.size(); ++d) {
      int64_t start = o[d] * window.strides[d] - window.padLow[d];
      int64_t end = std::min(start + window.kernel[d], spatial[d] + window.padHigh[d]);
      padded *= end - start;
    }
    result.data[at] = sum / static_cast<double>(excludePad ? inside : padded);
  });
  return result;
}

} // namespace kiln::reference
