//===- TensorValues.cpp - Graph-format types and constant tensors ---------===//

#include "compiler/Import/Graph/TensorValues.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/Support/Endian.h"

using namespace mlir;

namespace kiln {
namespace {

/// Largest tensor the importer accepts, in elements (a sanity bound against
/// shapes whose product overflows or that no machine could hold).
constexpr int64_t kMaxElements = int64_t(1) << 40;

/// Largest constant tensor, in elements, whose values the graph file carries.
constexpr int64_t kMaxConstantElements = int64_t(1) << 31;

unsigned byteWidth(Type type) {
  return type.isInteger(1) ? 1 : type.getIntOrFloatBitWidth() / 8;
}

FailureOr<DenseElementsAttr> fromFloats(const graph::TensorValue &value,
                                        RankedTensorType type, Location loc,
                                        StringRef what) {
  auto floatType = llvm::dyn_cast<FloatType>(type.getElementType());
  if (!floatType)
    return emitError(loc) << what << ": float_values given for a "
                          << type.getElementType() << " tensor (use int_values)";
  SmallVector<APFloat> values;
  for (float f : value.float_values()) {
    APFloat v(f);
    bool lostInfo = false;
    v.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven,
              &lostInfo);
    values.push_back(v);
  }
  if (values.size() == 1)
    return DenseElementsAttr::get(type, values.front());
  return DenseElementsAttr::get(type, values);
}

FailureOr<DenseElementsAttr> fromInts(const graph::TensorValue &value,
                                      RankedTensorType type, Location loc,
                                      StringRef what) {
  Type elementType = type.getElementType();
  if (llvm::isa<FloatType>(elementType))
    return emitError(loc) << what << ": int_values given for a " << elementType
                          << " tensor (use float_values)";
  unsigned width = elementType.getIntOrFloatBitWidth();
  SmallVector<APInt> values;
  for (auto [index, v] : llvm::enumerate(value.int_values())) {
    bool fits = width == 64 || (width == 32 && v >= INT32_MIN && v <= INT32_MAX) ||
                (width == 1 && (v == 0 || v == 1));
    if (!fits)
      return emitError(loc) << what << ": value " << v << " at index " << index
                            << " does not fit " << elementType;
    values.push_back(APInt(width, static_cast<uint64_t>(v), /*isSigned=*/true));
  }
  if (values.size() == 1)
    return DenseElementsAttr::get(type, values.front());
  return DenseElementsAttr::get(type, values);
}

FailureOr<DenseElementsAttr> fromRaw(const graph::TensorValue &value,
                                     RankedTensorType type, int64_t count,
                                     Location loc, StringRef what) {
  const std::string &raw = value.raw_data();
  unsigned width = byteWidth(type.getElementType());
  if (raw.size() != static_cast<uint64_t>(count) * width)
    return emitError(loc) << what << ": raw_data holds " << raw.size()
                          << " bytes, expected " << count * width << " ("
                          << count << " elements of " << width << " bytes)";
  if (type.getElementType().isInteger(1)) {
    SmallVector<bool> bits;
    for (char c : raw)
      bits.push_back(c != 0);
    return DenseElementsAttr::get(type, bits);
  }
  static_assert(llvm::endianness::native == llvm::endianness::little,
                "raw_data is little-endian; big-endian hosts need a byte swap");
  return DenseElementsAttr::getFromRawBuffer(type,
                                             ArrayRef<char>(raw.data(), raw.size()));
}

} // namespace

Type elementTypeOf(graph::DataType dtype, MLIRContext &context) {
  Builder b(&context);
  switch (dtype) {
  case graph::DT_FLOAT32:
    return b.getF32Type();
  case graph::DT_FLOAT16:
    return b.getF16Type();
  case graph::DT_BFLOAT16:
    return b.getBF16Type();
  case graph::DT_INT32:
    return b.getI32Type();
  case graph::DT_INT64:
    return b.getI64Type();
  case graph::DT_BOOL:
    return b.getI1Type();
  default:
    return nullptr;
  }
}

FailureOr<RankedTensorType> tensorTypeOf(graph::DataType dtype,
                                         ArrayRef<int64_t> dims, Location loc) {
  Type elementType = elementTypeOf(dtype, *loc.getContext());
  if (!elementType) {
    if (dtype == graph::DT_INVALID)
      return emitError(loc) << "dtype is missing";
    return emitError(loc) << "unknown dtype " << static_cast<int>(dtype);
  }
  int64_t count = 1;
  for (auto [index, d] : llvm::enumerate(dims)) {
    if (d < 1)
      return emitError(loc) << "shape dimension " << index << " is " << d
                            << "; dimensions must be >= 1";
    if (d > kMaxElements || count > kMaxElements / d)
      return emitError(loc) << "shape has more than 2^40 elements";
    count *= d;
  }
  return RankedTensorType::get(dims, elementType);
}

FailureOr<DenseElementsAttr> convertTensorValue(const graph::TensorValue &value,
                                                Location loc, StringRef what) {
  SmallVector<int64_t> dims(value.shape().begin(), value.shape().end());
  FailureOr<RankedTensorType> type = tensorTypeOf(value.dtype(), dims, loc);
  if (failed(type))
    return failure();
  int64_t count = type->getNumElements();
  if (count > kMaxConstantElements)
    return emitError(loc) << what << ": constant of " << count
                          << " elements is larger than the 2^31 allowed inline";
  int sources = (value.float_values_size() > 0) + (value.int_values_size() > 0) +
                !value.raw_data().empty();
  if (sources != 1)
    return emitError(loc) << what
                          << ": expects exactly one of float_values, int_values, "
                             "raw_data; got "
                          << sources;
  if (!value.raw_data().empty())
    return fromRaw(value, *type, count, loc, what);
  int64_t given = value.float_values_size() + value.int_values_size();
  if (given != 1 && given != count)
    return emitError(loc) << what << ": holds " << given << " values for "
                          << count << " elements (give one value or all)";
  if (value.float_values_size() > 0)
    return fromFloats(value, *type, loc, what);
  return fromInts(value, *type, loc, what);
}

} // namespace kiln
