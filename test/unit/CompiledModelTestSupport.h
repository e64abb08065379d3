//===- CompiledModelTestSupport.h - Tensors to and from a session -*- C++ -*-===//
//
// Helpers of the tests that compile a module in-process and run it through
// the runtime's C API: status checks, and tensors converted between the
// doubles the reference interpreter holds and a dtype's bytes.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TEST_UNIT_COMPILEDMODELTESTSUPPORT_H
#define KILN_TEST_UNIT_COMPILEDMODELTESTSUPPORT_H

#include "runtime/api/kiln.h"

#include "llvm/ADT/APFloat.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace kiln {

/// Frees a kiln_status and fails the test with its message.
inline void check(kiln_status *status, const char *what) {
  if (!status)
    return;
  ADD_FAILURE() << what << ": " << kiln_status_message(status);
  kiln_status_free(status);
}

inline size_t elementBytes(kiln_dtype dtype) {
  switch (dtype) {
  case KILN_DTYPE_F32:
  case KILN_DTYPE_I32:
    return 4;
  case KILN_DTYPE_F16:
  case KILN_DTYPE_BF16:
    return 2;
  case KILN_DTYPE_I64:
    return 8;
  case KILN_DTYPE_I1:
    return 1;
  }
  return 1;
}

/// The float semantics of a float dtype; null for integers and bools.
inline const llvm::fltSemantics *semanticsOf(kiln_dtype dtype) {
  switch (dtype) {
  case KILN_DTYPE_F32:
    return &llvm::APFloat::IEEEsingle();
  case KILN_DTYPE_F16:
    return &llvm::APFloat::IEEEhalf();
  case KILN_DTYPE_BF16:
    return &llvm::APFloat::BFloat();
  default:
    return nullptr;
  }
}

/// Encodes doubles as the dtype's bytes (floats rounded to nearest even);
/// returns the values the bytes hold, for the reference.
inline std::vector<uint8_t> encode(kiln_dtype dtype,
                                   std::vector<double> &values) {
  size_t width = elementBytes(dtype);
  std::vector<uint8_t> bytes(values.size() * width);
  for (size_t i = 0; i < values.size(); ++i) {
    uint64_t raw = 0;
    if (const llvm::fltSemantics *semantics = semanticsOf(dtype)) {
      llvm::APFloat f(values[i]);
      bool lost = false;
      f.convert(*semantics, llvm::APFloat::rmNearestTiesToEven, &lost);
      values[i] = f.convertToDouble();
      raw = f.bitcastToAPInt().getZExtValue();
    } else {
      raw = static_cast<uint64_t>(static_cast<int64_t>(values[i]));
    }
    std::memcpy(&bytes[i * width], &raw, width);
  }
  return bytes;
}

inline std::vector<double> decode(kiln_dtype dtype,
                                  const std::vector<uint8_t> &bytes) {
  size_t width = elementBytes(dtype);
  std::vector<double> values(bytes.size() / width);
  for (size_t i = 0; i < values.size(); ++i) {
    uint64_t raw = 0;
    std::memcpy(&raw, &bytes[i * width], width);
    if (const llvm::fltSemantics *semantics = semanticsOf(dtype)) {
      values[i] = llvm::APFloat(*semantics, llvm::APInt(width * 8, raw))
                      .convertToDouble();
    } else if (dtype == KILN_DTYPE_I32) {
      values[i] = static_cast<int32_t>(raw);
    } else if (dtype == KILN_DTYPE_I64) {
      values[i] = static_cast<double>(static_cast<int64_t>(raw));
    } else {
      values[i] = raw;
    }
  }
  return values;
}

} // namespace kiln

#endif // KILN_TEST_UNIT_COMPILEDMODELTESTSUPPORT_H
