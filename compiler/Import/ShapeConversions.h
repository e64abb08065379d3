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

#include <cmath>

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

/// Range (ONNX and TensorFlow) of constant scalars: an import-time constant.
template <typename NodeT> mlir::LogicalResult convertRange(NodeT &node) {
  mlir::DenseElementsAttr bounds[3];
  for (unsigned i = 0; i < 3; ++i) {
    bounds[i] = node.getConstantInput(i);
    if (!bounds[i] || bounds[i].getNumElements() != 1)
      return node.emitError() << "expects input #" << i
                              << " (a scalar) known at import time";
  }
  mlir::Type type = bounds[0].getElementType();
  if (llvm::any_of(bounds, [&](mlir::DenseElementsAttr a) { return a.getElementType() != type; }))
    return node.emitError() << "expects start, limit and delta of one type";
  auto asDouble = [](mlir::DenseElementsAttr a) {
    mlir::Attribute v = *a.getValues<mlir::Attribute>().begin();
    if (auto f = llvm::dyn_cast<mlir::FloatAttr>(v))
      return f.getValueAsDouble();
    return static_cast<double>(llvm::cast<mlir::IntegerAttr>(v).getInt());
  };
  double start = asDouble(bounds[0]), limit = asDouble(bounds[1]),
         delta = asDouble(bounds[2]);
  if (delta == 0)
    return node.emitError() << "expects a nonzero delta";
  if (!std::isfinite(start) || !std::isfinite(limit) || !std::isfinite(delta))
    return node.emitError() << "expects finite start, limit and delta, got " << start
                            << ", " << limit << " and " << delta;
  double count = std::max(std::ceil((limit - start) / delta), 0.0);
  if (count > (1 << 24))
    return node.emitError() << "would make " << count << " elements";
  llvm::SmallVector<mlir::Attribute> values;
  auto resultType = mlir::RankedTensorType::get({static_cast<int64_t>(count)}, type);
  for (int64_t i = 0; i < static_cast<int64_t>(count); ++i) {
    if (llvm::isa<mlir::FloatType>(type))
      values.push_back(mlir::FloatAttr::get(type, start + i * delta));
    else
      values.push_back(mlir::IntegerAttr::get(
          type, static_cast<int64_t>(start) + i * static_cast<int64_t>(delta)));
  }
  node.setConstantResult(0, mlir::DenseElementsAttr::get(resultType, values));
  return mlir::success();
}

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_SHAPECONVERSIONS_H
