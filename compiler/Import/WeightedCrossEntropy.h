//===- WeightedCrossEntropy.h - Cross-entropy with class weights -*- C++ -*-===//
//
// A cross-entropy whose classes weigh differently, as the frameworks write
// it for imbalanced classes, built of generic ops (one_hot of the labels,
// products, sums) rather than the fused loss kernel. Two semantics:
//   - PyTorch's `weight=` (F.cross_entropy, F.nll_loss; ONNX's
//     SoftmaxCrossEntropyLoss and NegativeLogLikelihoodLoss with class
//     weights): against class ids, sum_i sum_c -w_c t_ic logp_ic over the
//     positions, divided by sum_i w[y_i], with t = (1 - e) one_hot(y) + e/C
//     (label smoothing e) and positions whose label is ignored left out of
//     both sums (NaN when every one is, as PyTorch); against class
//     probabilities t, the same sum divided by the number of positions.
//   - Keras' model.fit(class_weight=): each position's loss times its
//     label's weight (a one-hot label's class: w . t), the sum divided by
//     the number of positions not ignored (Keras' ignore_class).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORT_WEIGHTEDCROSSENTROPY_H
#define KILN_COMPILER_IMPORT_WEIGHTEDCROSSENTROPY_H

#include "compiler/Import/KilnOpBuilder.h"

#include <optional>

namespace kiln {

enum class ClassWeighting { PyTorch, Keras };

/// The loss of log-probabilities `logProbabilities` [P..., C] (the classes
/// last) against class ids `labels` [P...], `weights` [C] (a float tensor
/// of their type) as `weighting` weighs them; `smoothing` is PyTorch's
/// label_smoothing (0 for Keras, whose sparse loss has none).
mlir::FailureOr<mlir::Value> classWeightedCrossEntropy(KilnOpBuilder &kiln,
                                                       ClassWeighting weighting,
                                                       mlir::Value logProbabilities,
                                                       mlir::Value labels, mlir::Value weights,
                                                       std::optional<int64_t> ignoreIndex,
                                                       double smoothing);

/// The loss of `logProbabilities` [P..., C] against class probabilities
/// `targets` (smoothed already, as the loss smooths them), weighted by
/// `weights` [C] as `weighting` does: PyTorch weighs each class's term,
/// Keras each position by `unsmoothed` . weights (its one-hot label's
/// class). The mean over the positions.
mlir::FailureOr<mlir::Value>
classWeightedCrossEntropyOfTargets(KilnOpBuilder &kiln, ClassWeighting weighting,
                                   mlir::Value logProbabilities, mlir::Value targets,
                                   mlir::Value unsmoothed, mlir::Value weights);

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_WEIGHTEDCROSSENTROPY_H
