//===- ReferenceWindows.h - Convolution and pooling in float64 --*- C++ -*-===//
//
// The reference interpreter's convolution and pooling, written as plain
// loops over every output position and window offset (no reuse of the
// compiler's lowering). Tensors are channels-first [N, C, D...].
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TEST_UNIT_REFERENCE_REFERENCEWINDOWS_H
#define KILN_TEST_UNIT_REFERENCE_REFERENCEWINDOWS_H

#include "reference/ReferenceInterpreter.h"

namespace kiln::reference {

struct Window {
  std::vector<int64_t> kernel, strides, dilations, padLow, padHigh;
};

/// Cross-correlation of `x` [N, C, D...] with `w` [F, C / groups, K...],
/// into a result of shape `out`.
Tensor convolve(const Tensor &x, const Tensor &w, const Window &window,
                int64_t groups, const std::vector<int64_t> &out);
/// The transposed convolution (a convolution's gradient with respect to its
/// input): each element of `dy` [N, F, O...] spread over the input
/// positions its window reads, weighted by `w` [F, C / groups, K...], into a
/// result of shape `out` [N, C, D...].
Tensor convolveTransposed(const Tensor &dy, const Tensor &w, const Window &window,
                          int64_t groups, const std::vector<int64_t> &out);
/// Max over each window (padding never wins), into a result of shape `out`.
Tensor maxPool(const Tensor &x, const Window &window,
               const std::vector<int64_t> &out);
/// PyTorch's avg_pool: the window's sum divided by its extent clipped to the
/// padded input or, with `excludePad`, by its count of input elements.
Tensor avgPool(const Tensor &x, const Window &window, bool excludePad,
               const std::vector<int64_t> &out);

} // namespace kiln::reference

#endif // KILN_TEST_UNIT_REFERENCE_REFERENCEWINDOWS_H
