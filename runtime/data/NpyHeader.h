//===- NpyHeader.h - The header of a .npy file ------------------*- C++ -*-===//

#ifndef KILN_RUNTIME_DATA_NPYHEADER_H
#define KILN_RUNTIME_DATA_NPYHEADER_H

#include "runtime/data/Npy.h"

namespace kiln::data {

/// Bytes before the header's text: magic, version and header length. Version
/// 1.0 stores the length in 2 bytes, 2.0 and 3.0 in 4.
constexpr size_t kNpyPreambleV1 = 10;
constexpr size_t kNpyPreambleV2 = 12;

/// What a header says.
struct NpyHeader {
  NpyDType dtype = NpyDType::F32;
  std::vector<int64_t> shape;
  uint64_t dataOffset = 0; ///< Preamble plus header text.
  uint64_t dataSize = 0;   ///< Element count times item size.
};

/// The total length of preamble and header text, from the first
/// `available` (at least kNpyPreambleV2, or the whole file if shorter)
/// bytes of a file of `fileSize` bytes; checks the magic, the version and
/// that the header ends inside the file. Sets `problem` on failure.
bool readNpyPreamble(const uint8_t *bytes, size_t available, uint64_t fileSize,
                     uint64_t &headerEnd, std::string &problem);

/// Parses the header ending at `headerEnd` (as readNpyPreamble found it) and
/// checks the declared data size against the `fileSize`.
bool parseNpyHeader(const uint8_t *bytes, uint64_t headerEnd, uint64_t fileSize,
                    NpyHeader &header, std::string &problem);

/// The preamble and header text for an array of `dtype` and `shape`, padded
/// to a multiple of 64 bytes as numpy writes it.
std::vector<uint8_t> encodeNpyHeader(NpyDType dtype,
                                     const std::vector<int64_t> &shape);

} // namespace kiln::data

#endif // KILN_RUNTIME_DATA_NPYHEADER_H
