//===- TensorFiles.cpp - Feeds from and fetches to .npy files -------------===//

#include "tools/kiln/TensorFiles.h"

#include "runtime/support/FloatRounding.h"

#include <cstring>

namespace kiln::tool {

namespace {

const char *dtypeName(kiln_dtype dtype) {
  switch (dtype) {
  case KILN_DTYPE_F32:
    return "f32";
  case KILN_DTYPE_F16:
    return "f16";
  case KILN_DTYPE_BF16:
    return "bf16";
  case KILN_DTYPE_I32:
    return "i32";
  case KILN_DTYPE_I64:
    return "i64";
  case KILN_DTYPE_I1:
    return "i1";
  }
  return "unknown";
}

std::string npyShape(const std::vector<int64_t> &shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + (shape.size() == 1 ? ",)" : ")");
}

} // namespace

data::NpyDType npyDTypeFor(kiln_dtype dtype) {
  switch (dtype) {
  case KILN_DTYPE_F16:
    return data::NpyDType::F16;
  case KILN_DTYPE_I32:
    return data::NpyDType::I32;
  case KILN_DTYPE_I64:
    return data::NpyDType::I64;
  case KILN_DTYPE_I1:
    return data::NpyDType::Bool;
  case KILN_DTYPE_F32:
  case KILN_DTYPE_BF16:
    break;
  }
  return data::NpyDType::F32;
}

std::string describeTensor(const kiln_tensor_info &info) {
  std::string text = std::string(dtypeName(info.dtype)) + " [";
  for (size_t i = 0; i < info.rank; ++i)
    text += (i ? ", " : "") + std::to_string(info.shape[i]);
  return text + "]";
}

bool feedBytesFromNpy(const data::NpyArray &array, const std::string &path,
                      const kiln_tensor_info &info, std::vector<uint8_t> &bytes,
                      std::string &error) {
  data::NpyDType expected = npyDTypeFor(info.dtype);
  std::vector<int64_t> shape(info.shape, info.shape + info.rank);
  if (array.dtype != expected || array.shape != shape) {
    error = path + ": error: feed '" + info.name + "' is " +
            describeTensor(info) + " (.npy " + data::npyDescr(expected) + " " +
            npyShape(shape) + "); the file holds " +
            data::npyDescr(array.dtype) + " " + npyShape(array.shape);
    return false;
  }
  if (info.dtype != KILN_DTYPE_BF16) {
    bytes = array.data;
    return true;
  }
  size_t count = array.data.size() / sizeof(float);
  bytes.resize(count * sizeof(uint16_t));
  for (size_t i = 0; i < count; ++i) {
    float value;
    std::memcpy(&value, array.data.data() + i * sizeof value, sizeof value);
    uint16_t bits = roundToBF16(value);
    std::memcpy(bytes.data() + i * sizeof bits, &bits, sizeof bits);
  }
  return true;
}

data::NpyArray npyFromFetch(const kiln_tensor_info &info,
                            const std::vector<uint8_t> &bytes) {
  data::NpyArray array;
  array.dtype = npyDTypeFor(info.dtype);
  array.shape.assign(info.shape, info.shape + info.rank);
  if (info.dtype != KILN_DTYPE_BF16) {
    array.data = bytes;
    return array;
  }
  size_t count = bytes.size() / sizeof(uint16_t);
  array.data.resize(count * sizeof(float));
  for (size_t i = 0; i < count; ++i) {
    uint16_t bits;
    std::memcpy(&bits, bytes.data() + i * sizeof bits, sizeof bits);
    float value = bf16ToFloat(bits);
    std::memcpy(array.data.data() + i * sizeof value, &value, sizeof value);
  }
  return array;
}

} // namespace kiln::tool
