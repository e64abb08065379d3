//===- TfOps.h - TensorFlow op → kiln op conversions ------------*- C++ -*-===//
//
// One entry per supported TensorFlow op: how many data inputs it takes, the
// attributes its conversion reads or accepts (any other is refused, so an
// attribute that would change the meaning is never silently dropped;
// TensorFlow's internal ones, named `_...`, are ignored) and the conversion.
// Each family's file (TfMathOps.cpp, TfShapeOps.cpp, TfNNOps.cpp,
// TfPadOps.cpp) holds its conversions and its part of the table. Placeholder and Const are read by
// the importer itself (TfImporter.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORT_TENSORFLOW_TFOPS_H
#define KILN_COMPILER_IMPORT_TENSORFLOW_TFOPS_H

#include "compiler/Import/TensorFlow/TfNode.h"

#include <climits>

namespace kiln {

using TfConvertFn = mlir::LogicalResult (*)(TfNode &node);

struct TfOpConversion {
  static constexpr unsigned kVariadic = UINT_MAX;

  llvm::StringLiteral op;
  unsigned minInputs;
  /// kVariadic for any number from minInputs.
  unsigned maxInputs;
  /// The attributes the conversion reads or accepts, separated by spaces.
  llvm::StringLiteral attributes;
  TfConvertFn convert;
};

/// The conversion of an op, or null if unsupported.
const TfOpConversion *lookupTfOp(llvm::StringRef op);

/// Checks the node's data input count and attribute names against `op`,
/// then runs the conversion. One error on failure.
mlir::LogicalResult convertTfNode(const TfOpConversion &op, TfNode &node);

/// The conversions of each family, in their own files.
llvm::ArrayRef<TfOpConversion> getTfMathOps();  // TfMathOps.cpp
llvm::ArrayRef<TfOpConversion> getTfShapeOps(); // TfShapeOps.cpp
llvm::ArrayRef<TfOpConversion> getTfNNOps();    // TfNNOps.cpp
llvm::ArrayRef<TfOpConversion> getTfPadOps();   // TfPadOps.cpp
llvm::ArrayRef<TfOpConversion> getTfPositionOps(); // TfPositionOps.cpp
llvm::ArrayRef<TfOpConversion> getTfBlockOps();    // TfBlockOps.cpp

/// StridedSlice, in the shape family's table (TfStridedSlice.cpp).
mlir::LogicalResult convertStridedSlice(TfNode &node);

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_TENSORFLOW_TFOPS_H
