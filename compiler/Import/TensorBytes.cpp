//===- TensorBytes.cpp - Tensor data as model files store it --------------===//

#include "compiler/Import/TensorBytes.h"

#include "compiler/Import/DiagnosticText.h"
#include "dialects/Kiln/KilnShapes.h"

#include "llvm/Support/SwapByteOrder.h"

using namespace mlir;

namespace kiln {
namespace {

/// Bytes per element in raw data.
unsigned getByteWidth(Type elementType) {
  if (elementType.isInteger(1))
    return 1;
  return elementType.getIntOrFloatBitWidth() / 8;
}

} // namespace

FailureOr<TensorSize> getTensorSize(ArrayRef<int64_t> shape, Type elementType) {
  FailureOr<int64_t> count = staticElementCount(shape);
  unsigned width = getByteWidth(elementType);
  if (failed(count) || *count > INT64_MAX / width)
    return failure();
  return TensorSize{*count, static_cast<uint64_t>(*count) * width};
}

DenseElementsAttr fromLittleEndianBytes(RankedTensorType type,
                                        StringRef bytes) {
  if (type.getElementType().isInteger(1)) {
    SmallVector<bool> values;
    values.reserve(bytes.size());
    for (char byte : bytes)
      values.push_back(byte != 0);
    return DenseElementsAttr::get(type, ArrayRef<bool>(values));
  }
  ArrayRef<char> raw(bytes.data(), bytes.size());
  SmallVector<char> swapped;
  if (llvm::sys::IsBigEndianHost) {
    unsigned width = getByteWidth(type.getElementType());
    swapped.assign(bytes.begin(), bytes.end());
    for (size_t i = 0; i + width <= swapped.size(); i += width)
      std::reverse(swapped.begin() + i, swapped.begin() + i + width);
    raw = swapped;
  }
  bool splat = false;
  if (!DenseElementsAttr::isValidRawBuffer(type, raw, splat))
    return nullptr;
  return DenseElementsAttr::getFromRawBuffer(type, raw);
}

DenseElementsAttr fromHalfFloatBits(RankedTensorType type,
                                    ArrayRef<int32_t> bits) {
  const llvm::fltSemantics &semantics =
      llvm::cast<FloatType>(type.getElementType()).getFloatSemantics();
  SmallVector<APFloat> values;
  values.reserve(bits.size());
  for (int32_t v : bits)
    values.emplace_back(semantics, APInt(16, static_cast<uint16_t>(v)));
  return DenseElementsAttr::get(type, values);
}

InFlightDiagnostic emitByteCountMismatch(Location loc, ArrayRef<int64_t> shape,
                                         TensorSize size, StringRef typeName,
                                         StringRef field, uint64_t given) {
  InFlightDiagnostic error = emitError(loc);
  error << "declares " << size.count << " elements of " << typeName
        << " (shape " << formatIntList(shape) << ", " << size.bytes
        << " bytes), but " << field << " holds " << given << " bytes";
  return error;
}

InFlightDiagnostic emitValueCountMismatch(Location loc, ArrayRef<int64_t> shape,
                                          int64_t count, StringRef typeName,
                                          StringRef field, int64_t given) {
  InFlightDiagnostic error = emitError(loc);
  error << "declares " << count << " elements of " << typeName << " (shape "
        << formatIntList(shape) << "), but " << field << " holds " << given;
  return error;
}

} // namespace kiln
