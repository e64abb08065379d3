//===- TfTensor.cpp - TensorFlow element types and tensor values ----------===//

#include "compiler/Import/TensorFlow/TfTensor.h"

#include "compiler/Import/DiagnosticText.h"
#include "compiler/Import/TensorBytes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;

namespace kiln {
namespace {

/// Elements a typed field holding fewer values than its shape is stretched
/// to (a splat, one value or none, is never stretched).
constexpr int64_t kMaxStretchedElements = int64_t(1) << 24;

/// `values` stretched to `count` by repeating the last, as TensorFlow reads
/// a typed field shorter than the shape; one value (zero when there is
/// none) for a splat, which DenseElementsAttr stores once.
template <typename T>
SmallVector<T> stretch(llvm::ArrayRef<T> values, int64_t count) {
  SmallVector<T> result(values.begin(), values.end());
  if (result.empty())
    result.push_back(T());
  if (result.size() > 1)
    result.resize(count, result.back());
  return result;
}

/// Which typed field holds a data type's values, and how many it holds.
std::pair<StringRef, int64_t> getTypedField(const tensorflow::TensorProto &t) {
  switch (t.dtype()) {
  case tensorflow::DT_FLOAT:
    return {"float_val", t.float_val_size()};
  case tensorflow::DT_INT64:
    return {"int64_val", t.int64_val_size()};
  case tensorflow::DT_BOOL:
    return {"bool_val", t.bool_val_size()};
  case tensorflow::DT_HALF:
  case tensorflow::DT_BFLOAT16:
    return {"half_val", t.half_val_size()};
  default:
    return {"int_val", t.int_val_size()};
  }
}

DenseElementsAttr fromTypedField(RankedTensorType type,
                                 const tensorflow::TensorProto &t,
                                 int64_t count) {
  switch (t.dtype()) {
  case tensorflow::DT_FLOAT: {
    SmallVector<float> values = stretch<float>(
        ArrayRef<float>(t.float_val().data(), t.float_val_size()), count);
    return DenseElementsAttr::get(type, ArrayRef<float>(values));
  }
  case tensorflow::DT_INT64: {
    SmallVector<int64_t> values = stretch<int64_t>(
        ArrayRef<int64_t>(t.int64_val().data(), t.int64_val_size()), count);
    return DenseElementsAttr::get(type, ArrayRef<int64_t>(values));
  }
  case tensorflow::DT_INT32: {
    SmallVector<int32_t> values = stretch<int32_t>(
        ArrayRef<int32_t>(t.int_val().data(), t.int_val_size()), count);
    return DenseElementsAttr::get(type, ArrayRef<int32_t>(values));
  }
  case tensorflow::DT_BOOL: {
    SmallVector<bool> bits(t.bool_val().begin(), t.bool_val().end());
    SmallVector<bool> values = stretch<bool>(bits, count);
    return DenseElementsAttr::get(type, ArrayRef<bool>(values));
  }
  default: // DT_HALF and DT_BFLOAT16
    return fromHalfFloatBits(
        type, stretch<int32_t>(
                  ArrayRef<int32_t>(t.half_val().data(), t.half_val_size()),
                  count));
  }
}

} // namespace

Type getTfElementType(MLIRContext &context, int dataType) {
  Builder b(&context);
  switch (dataType) {
  case tensorflow::DT_FLOAT:
    return b.getF32Type();
  case tensorflow::DT_HALF:
    return b.getF16Type();
  case tensorflow::DT_BFLOAT16:
    return b.getBF16Type();
  case tensorflow::DT_INT32:
    return b.getI32Type();
  case tensorflow::DT_INT64:
    return b.getI64Type();
  case tensorflow::DT_BOOL:
    return b.getI1Type();
  default:
    return nullptr;
  }
}

std::string getTfDataTypeName(int dataType) {
  if (tensorflow::DataType_IsValid(dataType))
    return tensorflow::DataType_Name(
        static_cast<tensorflow::DataType>(dataType));
  return "data type " + std::to_string(dataType);
}

FailureOr<Type> getSupportedTfElementType(MLIRContext &context, int dataType,
                                          Location loc) {
  if (Type type = getTfElementType(context, dataType))
    return type;
  return emitError(loc) << "unsupported element type "
                        << getTfDataTypeName(dataType)
                        << " (kiln takes DT_FLOAT, DT_HALF, DT_BFLOAT16, "
                           "DT_INT32, DT_INT64 and DT_BOOL)";
}

FailureOr<SmallVector<int64_t>>
getTfShape(const tensorflow::TensorShapeProto &shape) {
  if (shape.unknown_rank())
    return failure();
  SmallVector<int64_t> sizes;
  for (const tensorflow::TensorShapeProto::Dim &dim : shape.dim())
    sizes.push_back(dim.size());
  return sizes;
}

FailureOr<DenseElementsAttr> decodeTfTensor(const tensorflow::TensorProto &t,
                                            Location loc) {
  FailureOr<Type> elementType =
      getSupportedTfElementType(*loc.getContext(), t.dtype(), loc);
  if (failed(elementType))
    return failure();
  FailureOr<SmallVector<int64_t>> shape = getTfShape(t.tensor_shape());
  if (failed(shape))
    return emitError(loc) << "holds a tensor of unknown rank";
  if (llvm::any_of(*shape, [](int64_t d) { return d < 0; }))
    return emitError(loc) << "holds a tensor with a negative dimension: shape "
                          << formatIntList(*shape);
  FailureOr<TensorSize> size = getTensorSize(*shape, *elementType);
  if (failed(size))
    return emitError(loc) << "holds a tensor with too many elements for any "
                             "file: shape "
                          << formatIntList(*shape);
  int64_t count = size->count;
  auto type = RankedTensorType::get(*shape, *elementType);
  std::string typeName = getTfDataTypeName(t.dtype());

  auto [field, given] = getTypedField(t);
  if (!t.tensor_content().empty()) {
    if (given > 0)
      return emitError(loc) << "holds both tensor_content and " << field;
    if (t.tensor_content().size() != size->bytes)
      return emitByteCountMismatch(loc, *shape, *size, typeName,
                                   "tensor_content",
                                   t.tensor_content().size());
    // The size is checked above, so the bytes fit the type.
    return fromLittleEndianBytes(type, t.tensor_content());
  }
  if (given > count)
    return emitValueCountMismatch(loc, *shape, count, typeName, field, given);
  if (given > 1 && given < count && count > kMaxStretchedElements)
    return emitError(loc) << "declares " << count << " elements of "
                          << typeName << " (shape " << formatIntList(*shape)
                          << ") from " << given << " values in " << field
                          << "; kiln repeats the last value to at most "
                          << kMaxStretchedElements << " elements";
  return fromTypedField(type, t, count);
}

} // namespace kiln
