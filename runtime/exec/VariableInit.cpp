//===- VariableInit.cpp - Deterministic variable initializers -------------===//

#include "runtime/exec/VariableInit.h"

#include "runtime/artifact/DTypes.h"
#include "runtime/support/FloatRounding.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace kiln::exec {

using namespace artifact;

double SplitMix64::normal() {
  double u1 = uniformNonZero();
  double u2 = uniformNonZero();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

double SplitMix64::truncatedNormal() {
  double z = normal();
  while (std::fabs(z) > 2.0)
    z = normal();
  return z;
}

Fans glorotFans(const int64_t *dims, size_t rank) {
  if (rank == 0)
    return {1.0, 1.0};
  if (rank == 1)
    return {double(dims[0]), double(dims[0])};
  double receptiveField = 1.0;
  for (size_t i = 0; i + 2 < rank; ++i)
    receptiveField *= double(dims[i]);
  return {double(dims[rank - 2]) * receptiveField,
          double(dims[rank - 1]) * receptiveField};
}

namespace {

/// Stores `value`, already rounded to f32, as element `index` of a float
/// buffer of `dtype`.
void storeFloat(DType dtype, void *data, uint64_t index, float value) {
  switch (dtype) {
  case DType_F16: {
    uint16_t bits = roundToF16(value);
    std::memcpy(static_cast<uint16_t *>(data) + index, &bits, sizeof bits);
    return;
  }
  case DType_BF16: {
    uint16_t bits = roundToBF16(value);
    std::memcpy(static_cast<uint16_t *>(data) + index, &bits, sizeof bits);
    return;
  }
  default:
    static_cast<float *>(data)[index] = value;
    return;
  }
}

/// Fills the buffer with the value `draw` produces per element, in order.
template <typename Draw>
void fillFloats(DType dtype, void *data, uint64_t count, Draw draw) {
  for (uint64_t i = 0; i < count; ++i)
    storeFloat(dtype, data, i, static_cast<float>(draw()));
}

void fillOnes(DType dtype, void *data, uint64_t count) {
  switch (dtype) {
  case DType_I32:
    std::fill_n(static_cast<int32_t *>(data), count, 1);
    return;
  case DType_I64:
    std::fill_n(static_cast<int64_t *>(data), count, 1);
    return;
  case DType_I1:
    std::fill_n(static_cast<uint8_t *>(data), count, 1);
    return;
  default:
    fillFloats(dtype, data, count, [] { return 1.0; });
    return;
  }
}

} // namespace

void initializeValues(const Initializer &init, DType dtype, const int64_t *dims, size_t rank,
                      uint64_t elementCount, void *data) {
  SplitMix64 stream(init.seed);
  double a = init.a, b = init.b;
  Fans fans = glorotFans(dims, rank);
  switch (init.kind) {
  case InitKind_Zeros:
    std::memset(data, 0, elementCount * dtypeSize(dtype));
    return;
  case InitKind_Ones:
    fillOnes(dtype, data, elementCount);
    return;
  case InitKind_Constant:
    std::memcpy(data, init.constant, init.constantBytes);
    return;
  case InitKind_Uniform:
    fillFloats(dtype, data, elementCount,
               [&] { return a + (b - a) * stream.uniform(); });
    return;
  case InitKind_Normal:
    fillFloats(dtype, data, elementCount,
               [&] { return a + b * stream.normal(); });
    return;
  case InitKind_TruncatedNormal:
    fillFloats(dtype, data, elementCount,
               [&] { return a + b * stream.truncatedNormal(); });
    return;
  case InitKind_GlorotUniform: {
    double limit = std::sqrt(6.0 / (fans.in + fans.out));
    fillFloats(dtype, data, elementCount,
               [&] { return -limit + 2.0 * limit * stream.uniform(); });
    return;
  }
  case InitKind_GlorotNormal: {
    // As Keras: the truncated values, not the normal before truncation, have
    // stddev sqrt(2 / (fan_in + fan_out)); 0.8796... is the stddev of a
    // standard normal truncated at +-2.
    double stddev = std::sqrt(2.0 / (fans.in + fans.out)) / 0.87962566103423978;
    fillFloats(dtype, data, elementCount,
               [&] { return stddev * stream.truncatedNormal(); });
    return;
  }
  }
}

void initializeVariable(const Variable &variable, const Buffer &buffer,
                        uint64_t elementCount, void *data) {
  Initializer init{variable.init(), variable.a(), variable.b(), variable.seed(),
                   variable.value() ? variable.value()->data() : nullptr,
                   variable.value() ? variable.value()->size() : 0};
  initializeValues(init, buffer.dtype(), buffer.shape() ? buffer.shape()->data() : nullptr,
                   buffer.shape() ? buffer.shape()->size() : 0, elementCount, data);
}

} // namespace kiln::exec
