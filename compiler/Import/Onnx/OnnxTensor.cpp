//===- OnnxTensor.cpp - ONNX element types and tensor values --------------===//

#include "compiler/Import/Onnx/OnnxTensor.h"

#include "compiler/Import/DiagnosticText.h"
#include "compiler/Import/Onnx/OnnxModelFile.h"
#include "compiler/Import/TensorBytes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;

namespace kiln {
namespace {

using DataType = onnx::TensorProto::DataType;

/// A value from little-endian bytes (ONNX's byte order for raw data).
FailureOr<DenseElementsAttr> fromRawBytes(RankedTensorType type,
                                          StringRef bytes, Location loc) {
  if (DenseElementsAttr value = fromLittleEndianBytes(type, bytes))
    return value;
  return emitError(loc) << "holds " << bytes.size()
                        << " bytes of data, which do not fit type " << type;
}

/// Which typed field holds a data type's values, and how many it holds.
std::pair<StringRef, int64_t> getTypedField(const onnx::TensorProto &tensor) {
  switch (tensor.data_type()) {
  case onnx::TensorProto::FLOAT:
    return {"float_data", tensor.float_data_size()};
  case onnx::TensorProto::INT64:
    return {"int64_data", tensor.int64_data_size()};
  case onnx::TensorProto::DOUBLE:
    return {"double_data", tensor.double_data_size()};
  default: // INT32, FLOAT16, BFLOAT16 and BOOL all use int32_data.
    return {"int32_data", tensor.int32_data_size()};
  }
}

bool hasTypedData(const onnx::TensorProto &tensor) {
  return tensor.float_data_size() || tensor.int32_data_size() ||
         tensor.int64_data_size() || tensor.double_data_size() ||
         tensor.uint64_data_size() || tensor.string_data_size();
}

DenseElementsAttr fromTypedField(RankedTensorType type,
                                 const onnx::TensorProto &tensor) {
  switch (tensor.data_type()) {
  case onnx::TensorProto::FLOAT:
    return DenseElementsAttr::get(
        type,
        llvm::ArrayRef(tensor.float_data().data(), tensor.float_data_size()));
  case onnx::TensorProto::INT64:
    return DenseElementsAttr::get(
        type, llvm::ArrayRef<int64_t>(tensor.int64_data().data(),
                                      tensor.int64_data_size()));
  case onnx::TensorProto::INT32:
    return DenseElementsAttr::get(
        type, llvm::ArrayRef<int32_t>(tensor.int32_data().data(),
                                      tensor.int32_data_size()));
  case onnx::TensorProto::DOUBLE:
    return DenseElementsAttr::get(
        type, llvm::ArrayRef<double>(tensor.double_data().data(),
                                     tensor.double_data_size()));
  case onnx::TensorProto::BOOL: {
    SmallVector<bool> values;
    for (int32_t v : tensor.int32_data())
      values.push_back(v != 0);
    return DenseElementsAttr::get(type, ArrayRef<bool>(values));
  }
  default: // FLOAT16 and BFLOAT16
    return fromHalfFloatBits(type,
                             llvm::ArrayRef<int32_t>(tensor.int32_data().data(),
                                                     tensor.int32_data_size()));
  }
}

/// The tensor's values, of `elementType` (its data type's).
FailureOr<DenseElementsAttr> decodeAs(const onnx::TensorProto &tensor, Type elementType,
                                      StringRef modelDir, Location loc) {
  if (tensor.has_segment())
    return emitError(loc) << "is a segment of a larger tensor, which kiln "
                             "does not support";
  SmallVector<int64_t> shape(tensor.dims().begin(), tensor.dims().end());
  if (llvm::any_of(shape, [](int64_t d) { return d < 0; }))
    return emitError(loc) << "has a negative dimension in its shape "
                          << formatIntList(shape);
  FailureOr<TensorSize> size = getTensorSize(shape, elementType);
  if (failed(size))
    return emitError(loc) << "has too many elements for any file: shape "
                          << formatIntList(shape);
  auto type = RankedTensorType::get(shape, elementType);
  std::string typeName = getOnnxDataTypeName(tensor.data_type());

  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    if (tensor.has_raw_data() || hasTypedData(tensor))
      return emitError(loc) << "stores its data externally and also in the "
                               "model file";
    FailureOr<OnnxExternalData> external = parseOnnxExternalData(tensor, loc);
    if (failed(external))
      return failure();
    FailureOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
        readOnnxExternalData(modelDir, *external, size->bytes, loc);
    if (failed(buffer))
      return failure();
    return fromRawBytes(type, (*buffer)->getBuffer(), loc);
  }
  if (tensor.has_raw_data()) {
    if (hasTypedData(tensor))
      return emitError(loc) << "has both raw_data and typed data fields";
    const std::string &raw = tensor.raw_data();
    if (raw.size() != size->bytes)
      return emitByteCountMismatch(loc, shape, *size, typeName, "raw_data",
                                   raw.size());
    return fromRawBytes(type, raw, loc);
  }
  auto [field, given] = getTypedField(tensor);
  if (given != size->count)
    return emitValueCountMismatch(loc, shape, size->count, typeName, field,
                                  given);
  return fromTypedField(type, tensor);
}

/// A DOUBLE tensor's values rounded to f32: kiln has no f64 tensors, and
/// the TorchScript exporter without constant folding writes DOUBLE
/// Constant nodes that a Cast to FLOAT reads (transformers' attention
/// scale, sqrt(head size)).
DenseElementsAttr narrowToFloat(DenseElementsAttr wide) {
  SmallVector<float> values;
  for (double v : wide.getValues<double>())
    values.push_back(static_cast<float>(v));
  auto type = RankedTensorType::get(wide.getType().getShape(),
                                    Float32Type::get(wide.getContext()));
  return DenseElementsAttr::get(type, ArrayRef<float>(values));
}

} // namespace

Type getOnnxElementType(MLIRContext &context, int64_t dataType) {
  Builder b(&context);
  switch (dataType) {
  case onnx::TensorProto::FLOAT:
    return b.getF32Type();
  case onnx::TensorProto::FLOAT16:
    return b.getF16Type();
  case onnx::TensorProto::BFLOAT16:
    return b.getBF16Type();
  case onnx::TensorProto::INT32:
    return b.getI32Type();
  case onnx::TensorProto::INT64:
    return b.getI64Type();
  case onnx::TensorProto::BOOL:
    return b.getI1Type();
  default:
    return nullptr;
  }
}

std::string getOnnxDataTypeName(int64_t dataType) {
  if (dataType >= INT32_MIN && dataType <= INT32_MAX &&
      onnx::TensorProto::DataType_IsValid(static_cast<int>(dataType)))
    return onnx::TensorProto::DataType_Name(static_cast<DataType>(dataType));
  return "data type " + std::to_string(dataType);
}

FailureOr<Type> getSupportedElementType(MLIRContext &context, int64_t dataType,
                                        Location loc) {
  if (Type type = getOnnxElementType(context, dataType))
    return type;
  return emitError(loc) << "unsupported element type "
                        << getOnnxDataTypeName(dataType)
                        << " (kiln takes FLOAT, FLOAT16, BFLOAT16, INT32, "
                           "INT64 and BOOL)";
}

FailureOr<DenseElementsAttr> decodeOnnxTensor(const onnx::TensorProto &tensor,
                                              StringRef modelDir, Location loc,
                                              bool narrowDouble) {
  if (narrowDouble && tensor.data_type() == onnx::TensorProto::DOUBLE) {
    FailureOr<DenseElementsAttr> wide =
        decodeAs(tensor, Float64Type::get(loc.getContext()), modelDir, loc);
    return succeeded(wide) ? FailureOr<DenseElementsAttr>(narrowToFloat(*wide)) : wide;
  }
  FailureOr<Type> elementType =
      getSupportedElementType(*loc.getContext(), tensor.data_type(), loc);
  if (failed(elementType))
    return failure();
  return decodeAs(tensor, *elementType, modelDir, loc);
}

} // namespace kiln
