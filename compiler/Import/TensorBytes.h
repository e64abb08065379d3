//===- TensorBytes.h - Tensor data as model files store it ------*- C++ -*-===//
//
// What ONNX TensorProtos and TensorFlow TensorProtos store alike: raw
// little-endian bytes (ONNX raw_data and external data, TensorFlow
// tensor_content), float16 and bfloat16 bit patterns in int32 fields, and
// the element counts and byte sizes the data is checked against before
// anything is allocated.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORT_TENSORBYTES_H
#define KILN_COMPILER_IMPORT_TENSORBYTES_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"

namespace kiln {

/// How many elements a static shape declares, and the bytes they take.
struct TensorSize {
  int64_t count;
  uint64_t bytes;
};

/// The size of a tensor of `shape` and `elementType` (a bool takes a
/// byte); failure, with no error, when the shape has a negative size or
/// more elements or bytes than int64 holds.
mlir::FailureOr<TensorSize> getTensorSize(llvm::ArrayRef<int64_t> shape,
                                          mlir::Type elementType);

/// `bytes` as the little-endian elements of `type` (a bool per byte), or
/// null when they are not `type`'s size.
mlir::DenseElementsAttr fromLittleEndianBytes(mlir::RankedTensorType type,
                                              llvm::StringRef bytes);

/// A float16 or bfloat16 `type` from bit patterns in the low half of each
/// int32, as ONNX's int32_data and TensorFlow's half_val hold them.
mlir::DenseElementsAttr fromHalfFloatBits(mlir::RankedTensorType type,
                                          llvm::ArrayRef<int32_t> bits);

/// "declares 6 elements of FLOAT (shape [2, 3], 24 bytes), but raw_data
/// holds 20 bytes", `field` being "raw_data" and `given` 20.
mlir::InFlightDiagnostic
emitByteCountMismatch(mlir::Location loc, llvm::ArrayRef<int64_t> shape,
                      TensorSize size, llvm::StringRef typeName,
                      llvm::StringRef field, uint64_t given);

/// "declares 6 elements of FLOAT (shape [2, 3]), but float_data holds 5",
/// `field` being "float_data" and `given` 5.
mlir::InFlightDiagnostic
emitValueCountMismatch(mlir::Location loc, llvm::ArrayRef<int64_t> shape,
                       int64_t count, llvm::StringRef typeName,
                       llvm::StringRef field, int64_t given);

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_TENSORBYTES_H
