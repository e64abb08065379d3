//===- ShapeConversions.h - Shared shape op conversions ---------*- C++ -*-===//
//
// Shape op conversions that ONNX and TensorFlow define alike, templates over
// the node type (OnnxNode, TfNode) as in ElementwiseConversions.h.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORT_SHAPECONVERSIONS_H
#define KILN_COMPILER_IMPORT_SHAPECONVERSIONS_H

#include "compiler/Import/DiagnosticText.h"
#include "compiler/Import/ImportNode.h"

#include "dialects/Kiln/KilnShapes.h"

namespace kiln {

/// Tile (ONNX's repeats, TensorFlow's multiples, known at import): each
/// dimension d repeated r times is x reshaped to [.., 1, d, ..], broadcast
/// to [.., r, d, ..] and merged back to [.., r * d, ..].
template <typename NodeT> mlir::LogicalResult convertTile(NodeT &node) {
  mlir::Value x = node.getInput(0);
  mlir::FailureOr<llvm::ArrayRef<int64_t>> shape = node.getStaticShape(x, "an input");
  mlir::FailureOr<llvm::SmallVector<int64_t>> repeats = node.getConstantInts(1, "repeats");
  if (mlir::failed(shape) || mlir::failed(repeats))
    return mlir::failure();
  // Kiln's tensors are never empty: a repeat of 0 is refused too.
  if (repeats->size() != shape->size() ||
      llvm::any_of(*repeats, [](int64_t r) { return r < 1; }))
    return node.emitError() << "expects " << shape->size() << " repeats of at least 1, got "
                            << formatIntList(*repeats);
  llvm::SmallVector<int64_t> split, expanded, merged;
  for (auto [d, r] : llvm::zip(*shape, *repeats)) {
    split.append({1, d});
    expanded.append({r, d});
    merged.push_back(r * d);
  }
  if (mlir::failed(staticElementCount(expanded)))
    return node.emitError() << "would make too many elements";
  KilnOpBuilder &b = node.getBuilder();
  KilnOpBuilder::Result y = b.reshape(x, split);
  if (mlir::succeeded(y))
    y = b.broadcastTo(*y, expanded);
  if (mlir::succeeded(y))
    y = b.reshape(*y, merged);
  return node.setResult(0, y);
}

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_SHAPECONVERSIONS_H
