//===- OpCost.h - Floating-point work of kiln ops ---------------*- C++ -*-===//
//
// The cost model the report and recomputation share: floating-point
// operations of one kiln op, before lowering.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_KILN_OPCOST_H
#define KILN_DIALECTS_KILN_OPCOST_H

#include "mlir/IR/Operation.h"

#include <cstdint>

namespace kiln {

/// Floating-point operations of one run of `op`: 2·m·n·k for a matrix
/// product, 2 per multiply-add of a convolution, one per result element of
/// every other op with a float result that computes (not reads, constants,
/// casts, or ops that only move data: reshape, broadcast, transpose, concat,
/// slice, gathers, pad, one_hot), and for a kiln.fusion the sum over the ops
/// of its body. 0 for an op with other than one result outside a fusion.
int64_t estimateFlops(mlir::Operation *op);

/// The sum of estimateFlops over the ops `root` holds (fusions counted once,
/// through their bodies), `root` included.
int64_t estimateFlopsWithin(mlir::Operation *root);

/// The part of estimateFlopsWithin(root) that recomputes values: the ops
/// kiln-remat cloned (marked kiln.recomputed); `ops`, when given, counts them.
int64_t estimateRecomputedFlops(mlir::Operation *root, int64_t *ops = nullptr);

} // namespace kiln

#endif // KILN_DIALECTS_KILN_OPCOST_H
