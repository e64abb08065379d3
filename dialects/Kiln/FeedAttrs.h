//===- FeedAttrs.h - Attributes on @forward's arguments ---------*- C++ -*-===//
//
// What an importer knows about an input that training data must fill in a
// particular way. kilnc's execution plan writes them into the artifact's
// feed bindings (artifact.fbs: Binding.ids_per_example, offsets_stride).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_KILN_FEEDATTRS_H
#define KILN_DIALECTS_KILN_FEEDATTRS_H

#include "llvm/ADT/StringRef.h"

namespace kiln {

/// i64 on an input [N] holding a batch's id lists back to back, this many
/// per example (padded with -1): the ids of a PyTorch EmbeddingBag called
/// with offsets, N = batch x this; also on its per_sample_weights (the
/// padding's weights never read).
constexpr llvm::StringLiteral kIdsPerExampleAttr = "kiln.ids_per_example";

/// i64 on that EmbeddingBag's offsets input: training data does not hold
/// it; element i is i x this (where example i's list starts).
constexpr llvm::StringLiteral kOffsetsStrideAttr = "kiln.offsets_stride";

/// i64 on an input of class ids that a loss reads only through generic ops
/// (a class-weighted cross-entropy's one_hot): the number of classes, so
/// that training data outside [0, this) is refused as a fused loss's is.
constexpr llvm::StringLiteral kClassCountAttr = "kiln.class_count";

/// i64 on such an input: the label the loss leaves out (its
/// ignore_index), which training data may hold besides the classes.
constexpr llvm::StringLiteral kIgnoredLabelAttr = "kiln.ignored_label";

} // namespace kiln

#endif // KILN_DIALECTS_KILN_FEEDATTRS_H
