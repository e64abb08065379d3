//===- Positions.h - Ops over element positions, shared -----------*- C++ -*-===//
//
// The constructions ONNX and TensorFlow share for ops over element
// positions: ArgMax/ArgMin (a reduction of scored positions), TopK (K rounds
// of taking the first extreme not yet taken), OneHot (kiln.one_hot choosing
// between an off and an on value) and CumSum (a scan of shifted adds). The
// callers read and check their ops' attributes and inputs; these build.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORT_POSITIONS_H
#define KILN_COMPILER_IMPORT_POSITIONS_H

#include "compiler/Import/KilnOpBuilder.h"

#include <utility>

namespace kiln {

/// The largest K buildTopK takes (K rounds of reductions).
constexpr int64_t kMaxTopK = 256;

/// The position of the extreme of numeric `x` (static shape) along `axis`
/// (non-negative, a dimension of size >= 1), as int64: the first (or with
/// `lastIndex` the last) where x is its maximum (or, `minimum`, its
/// minimum). NaNs count as the lowest value (a row of NaNs gives 0).
/// `keepDims` keeps the axis, of size 1.
KilnOpBuilder::Result buildArgExtreme(KilnOpBuilder &b, mlir::Value x, int64_t axis,
                                      bool minimum, bool lastIndex, bool keepDims);

/// The `k` (1 to min(kMaxTopK, size)) largest (or smallest) elements of
/// float `x` along `axis` in order, NaNs before every number (after them for
/// the smallest), ties by position, as PyTorch's topk orders them; and their
/// int64 positions. The values are gathered at the positions, so they train.
mlir::FailureOr<std::pair<mlir::Value, mlir::Value>>
buildTopK(KilnOpBuilder &b, mlir::Value x, int64_t axis, int64_t k, bool largest);

/// `onValue` where an int32/int64 index names the position along a new
/// dimension `axis` (of `depth` in [1, 2^24]; axis in [0, rank]) and
/// `offValue` elsewhere, in their type. An index outside [0, depth) gives
/// `offValue` throughout, except that with `wrapNegative` (ONNX) one in
/// [-depth, 0) counts from the end. One error for a result of more than
/// 2^31 elements.
KilnOpBuilder::Result buildOneHot(KilnOpBuilder &b, mlir::Value indices, int64_t depth,
                                  int64_t axis, mlir::Attribute onValue,
                                  mlir::Attribute offValue, bool wrapNegative);

/// The running sum of `x` along `axis` (toward the end, or the start with
/// `reverse`); `exclusive` leaves each position's own element out. A scan
/// in log2(N) steps of shifted adds, so it trains; an inf or NaN reaches
/// only the positions after it.
KilnOpBuilder::Result buildCumSum(KilnOpBuilder &b, mlir::Value x, int64_t axis,
                                  bool exclusive, bool reverse);

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_POSITIONS_H
