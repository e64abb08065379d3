//===- SyntheticFeeds.cpp - Made-up feeds and fetch summaries -------------===//

#include "tools/kiln/SyntheticFeeds.h"

#include "runtime/support/FloatRounding.h"
#include "tools/kiln/TensorFiles.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>

namespace kiln::tool {
namespace {

uint64_t splitmix64(uint64_t &state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

size_t elementSize(kiln_dtype dtype) {
  switch (dtype) {
  case KILN_DTYPE_F16:
  case KILN_DTYPE_BF16:
    return 2;
  case KILN_DTYPE_I64:
    return 8;
  case KILN_DTYPE_I1:
    return 1;
  default:
    return 4;
  }
}

/// Element `i` of `bytes` as a double.
double elementAt(kiln_dtype dtype, const std::vector<uint8_t> &bytes, size_t i) {
  const uint8_t *p = bytes.data() + i * elementSize(dtype);
  switch (dtype) {
  case KILN_DTYPE_F32: {
    float v;
    std::memcpy(&v, p, 4);
    return v;
  }
  case KILN_DTYPE_F16:
  case KILN_DTYPE_BF16: {
    uint16_t bits;
    std::memcpy(&bits, p, 2);
    return dtype == KILN_DTYPE_F16 ? f16ToFloat(bits) : bf16ToFloat(bits);
  }
  case KILN_DTYPE_I32: {
    int32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
  case KILN_DTYPE_I64: {
    int64_t v;
    std::memcpy(&v, p, 8);
    return static_cast<double>(v);
  }
  case KILN_DTYPE_I1:
    return *p;
  }
  return 0;
}

} // namespace

std::vector<uint8_t> syntheticFeed(const kiln_tensor_info &info, int64_t idBound) {
  uint64_t range = idBound > 0 && idBound < 10 ? static_cast<uint64_t>(idBound) : 10;
  uint64_t state = 0xcbf29ce484222325ull; // FNV-1a of the name seeds it
  for (const char *c = info.name; *c; ++c)
    state = (state ^ static_cast<uint8_t>(*c)) * 0x100000001b3ull;
  size_t width = elementSize(info.dtype), count = info.byte_size / width;
  std::vector<uint8_t> bytes(info.byte_size);
  for (size_t i = 0; i < count; ++i) {
    uint64_t r = splitmix64(state);
    float unit = static_cast<float>(r >> 40) * 0x1p-24f * 2.0f - 1.0f;
    uint8_t *p = bytes.data() + i * width;
    switch (info.dtype) {
    case KILN_DTYPE_F32:
      std::memcpy(p, &unit, 4);
      break;
    case KILN_DTYPE_F16:
    case KILN_DTYPE_BF16: {
      uint16_t bits = info.dtype == KILN_DTYPE_F16 ? roundToF16(unit) : roundToBF16(unit);
      std::memcpy(p, &bits, 2);
      break;
    }
    case KILN_DTYPE_I32: {
      int32_t v = static_cast<int32_t>(r % range);
      std::memcpy(p, &v, 4);
      break;
    }
    case KILN_DTYPE_I64: {
      int64_t v = static_cast<int64_t>(r % range);
      std::memcpy(p, &v, 8);
      break;
    }
    case KILN_DTYPE_I1:
      *p = r & 1;
      break;
    }
  }
  return bytes;
}

std::string summarizeTensor(const kiln_tensor_info &info,
                            const std::vector<uint8_t> &bytes) {
  size_t count = bytes.size() / elementSize(info.dtype);
  double low = std::numeric_limits<double>::infinity(), high = -low, sum = 0;
  for (size_t i = 0; i < count; ++i) {
    double v = elementAt(info.dtype, bytes, i);
    low = std::min(low, v);
    high = std::max(high, v);
    sum += v;
  }
  char numbers[128];
  std::snprintf(numbers, sizeof numbers, "min %.6g, mean %.6g, max %.6g", low,
                count ? sum / count : 0.0, high);
  return std::string(info.name) + " " + describeTensor(info) + ": " + numbers;
}

} // namespace kiln::tool
