//===- OnnxOps.h - ONNX op → kiln op conversions ----------------*- C++ -*-===//
//
// One entry per supported ONNX op: how many inputs and outputs it takes, the
// attributes its conversion reads (any other is refused, so an attribute that
// would change the meaning is never silently dropped) and the conversion.
// Each family's file (OnnxMathOps.cpp, OnnxShapeOps.cpp, OnnxNormOps.cpp,
// OnnxNNOps.cpp, OnnxRecurrentOps.cpp, OnnxResizeOps.cpp, OnnxActivationOps.cpp,
// OnnxPadOps.cpp, OnnxPositionOps.cpp, OnnxEinsumOps.cpp, OnnxLoopOps.cpp,
// OnnxIfOps.cpp)
// holds its conversions and its part of the table.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORT_ONNX_ONNXOPS_H
#define KILN_COMPILER_IMPORT_ONNX_ONNXOPS_H

#include "compiler/Import/Onnx/OnnxNode.h"

#include <climits>

namespace kiln {

using OnnxConvertFn = mlir::LogicalResult (*)(OnnxNode &node);

struct OnnxOpConversion {
  static constexpr unsigned kVariadic = UINT_MAX;

  llvm::StringLiteral opType;
  unsigned minInputs;
  /// kVariadic for any number from minInputs.
  unsigned maxInputs;
  unsigned maxOutputs;
  /// The attributes the conversion reads, separated by spaces.
  llvm::StringLiteral attributes;
  OnnxConvertFn convert;
  /// The opset that introduced the op.
  int64_t sinceOpset = 1;
};

/// The conversion of an op of the default domain, or null if unsupported.
const OnnxOpConversion *lookupOnnxOp(llvm::StringRef opType);

/// Checks the node's input and output counts and attribute names against
/// `op`, then runs the conversion. One error on failure.
mlir::LogicalResult convertOnnxNode(const OnnxOpConversion &op, OnnxNode &node);

/// Converts one node of `scope`'s graph (or of a branch imported into it):
/// its domain, op and sequence inputs checked, then convertOnnxNode. The
/// builder's location names the node.
mlir::LogicalResult convertOnnxNodeProto(const onnx::NodeProto &proto, int64_t opset,
                                         llvm::StringRef modelDir, KilnOpBuilder &builder,
                                         OnnxValueScope &scope);

/// The conversions of each family, in their own files.
llvm::ArrayRef<OnnxOpConversion> getOnnxMathOps();  // OnnxMathOps.cpp
llvm::ArrayRef<OnnxOpConversion> getOnnxShapeOps(); // OnnxShapeOps.cpp
llvm::ArrayRef<OnnxOpConversion> getOnnxNormOps();  // OnnxNormOps.cpp
llvm::ArrayRef<OnnxOpConversion> getOnnxNNOps();    // OnnxNNOps.cpp
llvm::ArrayRef<OnnxOpConversion> getOnnxRecurrentOps(); // OnnxRecurrentOps.cpp
llvm::ArrayRef<OnnxOpConversion> getOnnxResizeOps(); // OnnxResizeOps.cpp
llvm::ArrayRef<OnnxOpConversion> getOnnxActivationOps(); // OnnxActivationOps.cpp
llvm::ArrayRef<OnnxOpConversion> getOnnxPadOps(); // OnnxPadOps.cpp
llvm::ArrayRef<OnnxOpConversion> getOnnxPositionOps(); // OnnxPositionOps.cpp
llvm::ArrayRef<OnnxOpConversion> getOnnxEinsumOps(); // OnnxEinsumOps.cpp
llvm::ArrayRef<OnnxOpConversion> getOnnxLoopOps(); // OnnxLoopOps.cpp
llvm::ArrayRef<OnnxOpConversion> getOnnxIfOps(); // OnnxIfOps.cpp

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_ONNX_ONNXOPS_H
