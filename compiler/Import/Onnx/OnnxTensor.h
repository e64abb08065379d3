//===- OnnxTensor.h - ONNX element types and tensor values ------*- C++ -*-===//
//
// Maps ONNX data types to kiln element types and decodes TensorProtos
// (initializers, Constant values) into dense attributes: raw_data, the typed
// fields, or external data. The data must hold exactly the elements the dims
// declare.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORT_ONNX_ONNXTENSOR_H
#define KILN_COMPILER_IMPORT_ONNX_ONNXTENSOR_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"

#include "onnx/onnx_pb.h"

#include <string>

namespace kiln {

/// The kiln element type of an ONNX data type (FLOAT, FLOAT16, BFLOAT16,
/// INT32, INT64, BOOL), or null for any other.
mlir::Type getOnnxElementType(mlir::MLIRContext &context, int64_t dataType);

/// "FLOAT", "DOUBLE", ..., or "data type <n>" for numbers ONNX 1.12 does not
/// name.
std::string getOnnxDataTypeName(int64_t dataType);

/// The kiln element type of an ONNX data type, or one error at `loc` naming
/// it ("unsupported element type DOUBLE").
mlir::FailureOr<mlir::Type> getSupportedElementType(mlir::MLIRContext &context,
                                                    int64_t dataType,
                                                    mlir::Location loc);

/// Decodes a tensor's value. External data paths are relative to `modelDir`.
/// Errors (one, at `loc`) give the declared element count and what the data
/// holds. With `narrowDouble` (a Constant node's value), DOUBLE data is
/// rounded to f32; otherwise it is an unsupported element type.
mlir::FailureOr<mlir::DenseElementsAttr>
decodeOnnxTensor(const onnx::TensorProto &tensor, llvm::StringRef modelDir,
                 mlir::Location loc, bool narrowDouble = false);

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_ONNX_ONNXTENSOR_H
