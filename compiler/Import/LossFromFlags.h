//===- LossFromFlags.h - The losses kilnc --loss adds -----------*- C++ -*-===//
//
// `kilnc --train --loss=KIND` adds a loss that reads one output of a model.
// By kind, that output holds
//   - logits: softmax_cross_entropy (class ids, or with
//     --class-probabilities float targets shaped like the logits, as
//     F.cross_entropy's probability targets), sigmoid_cross_entropy (float
//     targets);
//   - log-probabilities: nll (PyTorch's F.nll_loss, after F.log_softmax);
//   - probabilities: sparse_categorical_crossentropy (class ids),
//     categorical_crossentropy (class probabilities, a one-hot row) and
//     binary_crossentropy (float targets), Keras' losses with
//     from_logits=False, for a model ending in a softmax or a sigmoid;
//   - values: mse.
// An output made by the activation itself (a softmax, log_softmax or
// sigmoid over the classes) is read through to its logits, as Keras does:
// the same loss without the activation's rounding and clipping (against
// class ids, in the one fused loss kernel). Other probabilities are clipped
// to [1e-7, 1 - 1e-7] before their log, as Keras does
// (categorical_crossentropy divides each row by its sum first).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORT_LOSSFROMFLAGS_H
#define KILN_COMPILER_IMPORT_LOSSFROMFLAGS_H

#include "compiler/Import/Graph/TrainFlags.h"
#include "compiler/Import/KilnOpBuilder.h"

namespace kiln {

/// Whether --loss may name `kind` (besides `model`, a model's own loss).
bool isAddedLossKind(llvm::StringRef kind);

/// Whether the loss is over an axis of classes (--class-axis applies).
bool lossOverClasses(llvm::StringRef kind);

/// Whether the loss compares against class ids: int32 labels shaped like
/// the output less its axis of classes. (The other losses' labels are
/// float, shaped like the output.)
bool lossTakesClassIds(const TrainFlags &flags);

/// The loss `flags.loss` names (the mean over the batch) of `output`
/// against `labels`, its classes on `classAxis` (non-negative) where the
/// loss is over classes. Warns, naming `outputName`, when a loss over
/// logits reads an output that is already a softmax's or a sigmoid's.
mlir::FailureOr<mlir::Value> buildAddedLoss(KilnOpBuilder &kiln, const TrainFlags &flags,
                                            mlir::Value output, llvm::StringRef outputName,
                                            mlir::Value labels, int64_t classAxis);

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_LOSSFROMFLAGS_H
