//===- Patterns.h - kiln-to-linalg patterns by op family --------*- C++ -*-===//

#ifndef KILN_PASSES_CONVERSION_KILNTOLINALG_PATTERNS_H
#define KILN_PASSES_CONVERSION_KILNTOLINALG_PATTERNS_H

#include "mlir/IR/PatternMatch.h"

namespace kiln {

/// Elementwise ops, compare, select, cast, gelu and constants.
void populateElementwiseToLinalgPatterns(mlir::RewritePatternSet &patterns);
/// reshape, broadcast, transpose, concat, slice.
void populateShapeToLinalgPatterns(mlir::RewritePatternSet &patterns);
/// reduce_sum, reduce_mean, reduce_max.
void populateReductionToLinalgPatterns(mlir::RewritePatternSet &patterns);
/// softmax, log_softmax, layer_norm.
void populateNormalizationToLinalgPatterns(mlir::RewritePatternSet &patterns);
/// gather and the three losses.
void populateGatherAndLossToLinalgPatterns(mlir::RewritePatternSet &patterns);
/// gelu_grad, one_hot, pad and the dense optimizer updates.
void populateTrainingToLinalgPatterns(mlir::RewritePatternSet &patterns);
/// conv, its two gradients, pooling and the pooling gradients.
void populateWindowToLinalgPatterns(mlir::RewritePatternSet &patterns);
/// kiln.fusion as one linalg.generic computing its whole body.
void populateFusionToLinalgPatterns(mlir::RewritePatternSet &patterns);
/// matmul as linalg named ops (used where no GEMM library call is made).
void populateMatmulToLinalgPatterns(mlir::RewritePatternSet &patterns);

} // namespace kiln

#endif // KILN_PASSES_CONVERSION_KILNTOLINALG_PATTERNS_H
