//===- OnnxTensor.cpp - ONNX element types and tensor values --------------===//

#include "compiler/Import/Onnx/OnnxTensor.h"

#include "compiler/Import/Onnx/OnnxModelFile.h"
#include "dialects/Kiln/KilnShapes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/SwapByteOrder.h"

using namespace mlir;

namespace kiln {
namespace {

using DataType = onnx::TensorProto::DataType;

/// Bytes per element in raw_data and external data (BOOL is one byte).
unsigned getByteWidth(int64_t dataType) {
  switch (dataType) {
  case onnx::TensorProto::BOOL:
    return 1;
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16:
    return 2;
  case onnx::TensorProto::INT64:
    return 8;
  default:
    return 4;
  }
}

/// A value from little-endian bytes (ONNX's byte order for raw data).
FailureOr<DenseElementsAttr> fromRawBytes(RankedTensorType type,
                                          int64_t dataType, StringRef bytes,
                                          Location loc) {
  if (dataType == onnx::TensorProto::BOOL) {
    SmallVector<bool> values;
    values.reserve(bytes.size());
    for (char byte : bytes)
      values.push_back(byte != 0);
    return DenseElementsAttr::get(type, ArrayRef<bool>(values));
  }
  ArrayRef<char> raw(bytes.data(), bytes.size());
  SmallVector<char> swapped;
  if (llvm::sys::IsBigEndianHost) {
    unsigned width = getByteWidth(dataType);
    swapped.assign(bytes.begin(), bytes.end());
    for (size_t i = 0; i + width <= swapped.size(); i += width)
      std::reverse(swapped.begin() + i, swapped.begin() + i + width);
    raw = swapped;
  }
  bool splat = false;
  if (!DenseElementsAttr::isValidRawBuffer(type, raw, splat))
    return emitError(loc) << "holds " << bytes.size()
                          << " bytes of data, which do not fit type " << type;
  return DenseElementsAttr::getFromRawBuffer(type, raw);
}

/// Which typed field holds a data type's values, and how many it holds.
std::pair<StringRef, int64_t> getTypedField(const onnx::TensorProto &tensor) {
  switch (tensor.data_type()) {
  case onnx::TensorProto::FLOAT:
    return {"float_data", tensor.float_data_size()};
  case onnx::TensorProto::INT64:
    return {"int64_data", tensor.int64_data_size()};
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
  case onnx::TensorProto::BOOL: {
    SmallVector<bool> values;
    for (int32_t v : tensor.int32_data())
      values.push_back(v != 0);
    return DenseElementsAttr::get(type, ArrayRef<bool>(values));
  }
  default: {
    // FLOAT16 and BFLOAT16: the bits sit in the low half of each int32.
    SmallVector<APFloat> values;
    const llvm::fltSemantics &semantics =
        llvm::cast<FloatType>(type.getElementType()).getFloatSemantics();
    for (int32_t v : tensor.int32_data())
      values.emplace_back(semantics, APInt(16, static_cast<uint16_t>(v)));
    return DenseElementsAttr::get(type, values);
  }
  }
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

std::string formatOnnxShape(ArrayRef<int64_t> shape) {
  std::string text = "[";
  llvm::raw_string_ostream os(text);
  llvm::interleaveComma(shape, os);
  os << "]";
  return text;
}

FailureOr<DenseElementsAttr> decodeOnnxTensor(const onnx::TensorProto &tensor,
                                              StringRef modelDir,
                                              Location loc) {
  FailureOr<Type> elementType =
      getSupportedElementType(*loc.getContext(), tensor.data_type(), loc);
  if (failed(elementType))
    return failure();
  if (tensor.has_segment())
    return emitError(loc) << "is a segment of a larger tensor, which kiln "
                             "does not support";
  SmallVector<int64_t> shape(tensor.dims().begin(), tensor.dims().end());
  if (llvm::any_of(shape, [](int64_t d) { return d < 0; }))
    return emitError(loc) << "has a negative dimension in its shape "
                          << formatOnnxShape(shape);
  FailureOr<int64_t> count = staticElementCount(shape);
  int64_t dataType = tensor.data_type();
  unsigned width = getByteWidth(dataType);
  if (failed(count) || *count > INT64_MAX / width)
    return emitError(loc) << "has too many elements for any file: shape "
                          << formatOnnxShape(shape);
  uint64_t bytes = static_cast<uint64_t>(*count) * width;
  auto type = RankedTensorType::get(shape, *elementType);
  std::string typeName = getOnnxDataTypeName(dataType);

  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    if (tensor.has_raw_data() || hasTypedData(tensor))
      return emitError(loc) << "stores its data externally and also in the "
                               "model file";
    FailureOr<OnnxExternalData> external = parseOnnxExternalData(tensor, loc);
    if (failed(external))
      return failure();
    FailureOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
        readOnnxExternalData(modelDir, *external, bytes, loc);
    if (failed(buffer))
      return failure();
    return fromRawBytes(type, dataType, (*buffer)->getBuffer(), loc);
  }
  if (tensor.has_raw_data()) {
    if (hasTypedData(tensor))
      return emitError(loc) << "has both raw_data and typed data fields";
    const std::string &raw = tensor.raw_data();
    if (raw.size() != bytes)
      return emitError(loc)
             << "declares " << *count << " elements of " << typeName
             << " (shape " << formatOnnxShape(shape) << ", " << bytes
             << " bytes), but raw_data holds " << raw.size() << " bytes";
    return fromRawBytes(type, dataType, raw, loc);
  }
  auto [field, size] = getTypedField(tensor);
  if (size != *count)
    return emitError(loc) << "declares " << *count << " elements of "
                          << typeName << " (shape " << formatOnnxShape(shape)
                          << "), but " << field << " holds " << size;
  return fromTypedField(type, tensor);
}

} // namespace kiln
