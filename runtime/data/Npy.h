//===- Npy.h - numpy .npy files ---------------------------------*- C++ -*-===//
//
// Reads and writes numpy's .npy format (versions 1.0, 2.0 and 3.0) for the
// dtypes kiln's feeds and fetches use: <f4, <f2, <i4, <i8 and |b1. Data is C
// order and little-endian; a Fortran-order or big-endian file is refused with
// a message saying so, never silently reordered. .npy has no bfloat16: the
// kiln tool reads bf16 feeds from <f4 files and writes bf16 fetches as <f4
// (docs/runtime.md).
//
// Sizes in the header are checked against the file's length before anything
// is allocated. Every failure is one line, "PATH: error: PROBLEM".
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_DATA_NPY_H
#define KILN_RUNTIME_DATA_NPY_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kiln::data {

/// The element types read and written.
enum class NpyDType { F32, F16, I32, I64, Bool };

/// numpy's descr: "<f4", "<f2", "<i4", "<i8", "|b1".
const char *npyDescr(NpyDType dtype);

/// Bytes per element.
size_t npyItemSize(NpyDType dtype);

/// A C-order array.
struct NpyArray {
  NpyDType dtype = NpyDType::F32;
  std::vector<int64_t> shape; ///< Empty for a scalar.
  std::vector<uint8_t> data;  ///< Element count times item size bytes.
};

/// Reads the .npy file at `path`.
bool readNpyFile(const std::string &path, NpyArray &array, std::string &error);

/// Reads the `size` bytes of a .npy file at `bytes`; `path` names it in
/// messages.
bool parseNpy(const uint8_t *bytes, size_t size, const std::string &path,
              NpyArray &array, std::string &error);

/// The bytes of `array` as a .npy file (version 1.0, or 2.0 for a header
/// beyond 64 KiB).
std::vector<uint8_t> encodeNpy(const NpyArray &array);

/// Writes `array` to `path` whole or not at all (temporary file, fsync,
/// rename).
bool writeNpyFile(const std::string &path, const NpyArray &array,
                  std::string &error);

} // namespace kiln::data

#endif // KILN_RUNTIME_DATA_NPY_H
