//===- TensorFiles.h - Feeds from and fetches to .npy files -----*- C++ -*-===//
//
// Each dtype is read from and written as the .npy dtype of the same type,
// except bf16, which .npy does not have: a bf16 feed is read from <f4 data
// rounded to nearest even, and a bf16 fetch is written as <f4 (exactly).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_KILN_TENSORFILES_H
#define KILN_TOOLS_KILN_TENSORFILES_H

#include "runtime/api/kiln.h"
#include "runtime/data/Npy.h"

#include <string>
#include <vector>

namespace kiln::tool {

/// The .npy dtype that holds tensors of `dtype`.
data::NpyDType npyDTypeFor(kiln_dtype dtype);

/// "f32 [2, 3]".
std::string describeTensor(const kiln_tensor_info &info);

/// The bytes to bind to feed `info` from `array`, read from `path`. On a
/// dtype or shape mismatch sets `error` to "PATH: error: ..." naming the
/// feed, and returns false.
bool feedBytesFromNpy(const data::NpyArray &array, const std::string &path,
                      const kiln_tensor_info &info, std::vector<uint8_t> &bytes,
                      std::string &error);

/// The .npy array for fetch `info` read as `bytes`.
data::NpyArray npyFromFetch(const kiln_tensor_info &info,
                            const std::vector<uint8_t> &bytes);

} // namespace kiln::tool

#endif // KILN_TOOLS_KILN_TENSORFILES_H
