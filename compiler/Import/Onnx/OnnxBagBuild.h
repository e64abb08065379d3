//===- OnnxBagBuild.h - An EmbeddingBag with offsets as kiln ops -*- C++ -*-===//

#ifndef KILN_COMPILER_IMPORT_ONNX_ONNXBAGBUILD_H
#define KILN_COMPILER_IMPORT_ONNX_ONNXBAGBUILD_H

#include "compiler/Import/Onnx/OnnxNode.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>

namespace kiln {

/// What a bag loop reads, as values of the graph around it. Bag b holds the
/// ids from offsets[shift + b] up to offsets[shift + b + 1].
struct OffsetsBag {
  /// The rows [N, D], one per id (the dynamo exporter gathers them before
  /// its loop), or null with `table` [V, D] and `ids` [N] to gather.
  mlir::Value rows, table, ids;
  /// With `rows`: the ids compared with padding_idx, when the rows' gather
  /// is not visible.
  mlir::Value paddingIds;
  std::optional<int64_t> paddingIdx;
  /// [N], or null.
  mlir::Value sampleWeights;
  mlir::Value offsets;
  int64_t shift = 0, bags = 0;
  bool mean = false;
};

/// The bags' rows [bags, D]: sums, or means over the ids counted (0 for an
/// empty bag). Where the ids and offsets are graph inputs, marks them for
/// training (dialects/Kiln/FeedAttrs.h). `refuse` reports a part that is not
/// an EmbeddingBag's.
mlir::FailureOr<mlir::Value>
buildOffsetsBag(OnnxNode &node, const OffsetsBag &parts,
                llvm::function_ref<mlir::LogicalResult(const llvm::Twine &)> refuse);

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_ONNX_ONNXBAGBUILD_H
