//===- BinaryLossWeights.h - Weighted binary cross-entropy ------*- C++ -*-===//
//
// A click or multi-label model's loss with its positives weighted, as the
// frameworks write it for imbalanced labels, of generic ops (not the fused
// sigmoid cross-entropy):
//   - PyTorch's BCEWithLogitsLoss(pos_weight=p) (kilnc --pos-weight,
//     sigmoid_cross_entropy): each element's
//     -(p y log(sigmoid(x)) + (1 - y) log(1 - sigmoid(x))), p per label
//     column (the last axis), the mean over every element;
//   - Keras' model.fit(class_weight={0: w0, 1: w1}) (kilnc --class-weights,
//     binary_crossentropy): each example's loss (its elements' mean over
//     the last axis) times the weight of its label, the sum divided by the
//     examples.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORT_BINARYLOSSWEIGHTS_H
#define KILN_COMPILER_IMPORT_BINARYLOSSWEIGHTS_H

#include "compiler/Import/KilnOpBuilder.h"

namespace kiln {

/// Each element's sigmoid cross-entropy of `logits` against `targets`,
/// with the positive term weighted by `positiveWeights` ([K], the last
/// axis; null: 1): (1 - y) x + (1 + (p - 1) y) softplus(-x), softplus as
/// buildSoftplus computes it (no overflow, sigmoid's gradient at 0).
mlir::FailureOr<mlir::Value> sigmoidCrossEntropyElements(KilnOpBuilder &kiln,
                                                         mlir::Value logits,
                                                         mlir::Value targets,
                                                         mlir::Value positiveWeights);

/// Each element's binary cross-entropy of probabilities `clipped` away
/// from 0 and 1 (Keras' from_logits=False clips them to [eps, 1 - eps]):
/// -(y log c + (1 - y) log(1 - c)).
mlir::FailureOr<mlir::Value> binaryCrossEntropyElements(KilnOpBuilder &kiln,
                                                        mlir::Value clipped,
                                                        mlir::Value targets);

/// Keras' class-weighted mean of `elements` [N, 1] against 0/1 `targets`
/// [N, 1] (one label an example): sum_i w[y_i] l_i / N, w[y] = w0 + (w1 -
/// w0) y (which interpolates soft labels, where Keras truncates them to a
/// class).
mlir::FailureOr<mlir::Value> classWeightedBinaryMean(KilnOpBuilder &kiln, mlir::Value elements,
                                                     mlir::Value targets, double w0,
                                                     double w1);

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_BINARYLOSSWEIGHTS_H
