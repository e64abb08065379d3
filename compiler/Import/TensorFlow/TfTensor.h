//===- TfTensor.h - TensorFlow element types and tensor values --*- C++ -*-===//
//
// Maps TensorFlow DataTypes to kiln element types, reads TensorShapeProtos
// and decodes TensorProtos (a Const's value) into dense attributes, from
// tensor_content or the typed value fields. tensor_content must hold exactly
// the elements the shape declares; a typed field may hold fewer (TensorFlow
// repeats the last value, or fills zeros when there is none) but not more.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORT_TENSORFLOW_TFTENSOR_H
#define KILN_COMPILER_IMPORT_TENSORFLOW_TFTENSOR_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"

#include "proto/tensorflow/tensor.pb.h"

#include <string>

namespace kiln {

/// The kiln element type of a TensorFlow DataType (DT_FLOAT, DT_HALF,
/// DT_BFLOAT16, DT_INT32, DT_INT64, DT_BOOL), or null for any other.
mlir::Type getTfElementType(mlir::MLIRContext &context, int dataType);

/// "DT_FLOAT", "DT_DOUBLE", ..., or "data type <n>" for numbers TensorFlow
/// does not name.
std::string getTfDataTypeName(int dataType);

/// The kiln element type of `dataType`, or one error at `loc` naming it
/// ("unsupported element type DT_DOUBLE").
mlir::FailureOr<mlir::Type>
getSupportedTfElementType(mlir::MLIRContext &context, int dataType,
                          mlir::Location loc);

/// The sizes of a shape, -1 where unknown; failure (no error) when the rank
/// itself is unknown.
mlir::FailureOr<llvm::SmallVector<int64_t>>
getTfShape(const tensorflow::TensorShapeProto &shape);

/// Decodes a tensor's value. Errors (one, at `loc`) give the declared
/// element count and what the data holds.
mlir::FailureOr<mlir::DenseElementsAttr>
decodeTfTensor(const tensorflow::TensorProto &tensor, mlir::Location loc);

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_TENSORFLOW_TFTENSOR_H
