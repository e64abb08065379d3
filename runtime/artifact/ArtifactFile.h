//===- ArtifactFile.h - The artifact file layout ----------------*- C++ -*-===//
//
// An artifact file is the FlatBuffer (proto/kiln/artifact.fbs) followed by a
// 16-byte footer: the FlatBuffer's length and its FNV-1a 64 checksum, both
// little-endian uint64. This library knows that layout and nothing else; it
// uses only the standard library so that both the compiler (which writes
// artifacts) and the runtime (which reads them) link it.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_ARTIFACT_ARTIFACTFILE_H
#define KILN_RUNTIME_ARTIFACT_ARTIFACTFILE_H

#include "runtime/support/Fnv1a.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace kiln::artifact {

/// Size of the footer after the FlatBuffer.
constexpr size_t kFooterSize = 16;

/// The footer's checksum (runtime/support/Fnv1a.h).
using kiln::fnv1a64;

/// Writes `flatbuffer` and its footer to `path` through a temporary file in
/// the same directory, fsynced and renamed over `path`: afterwards `path`
/// holds the whole artifact, or (on failure) whatever it held before. On
/// failure sets `error` to one line, "PATH: error: cannot write: REASON", and
/// returns false.
bool writeArtifactFile(const std::string &path, const uint8_t *flatbuffer,
                       size_t size, std::string &error);

/// The two fields of a footer.
struct ArtifactFooter {
  uint64_t flatbufferSize; ///< Length field.
  uint64_t checksum;       ///< FNV-1a 64 field.
};

/// Reads the footer from the kFooterSize bytes at `footer`.
ArtifactFooter decodeArtifactFooter(const uint8_t *footer);

/// Writes the footer of the `size`-byte FlatBuffer at `flatbuffer` into the
/// kFooterSize bytes at `footer`.
void encodeArtifactFooter(const uint8_t *flatbuffer, size_t size,
                          uint8_t *footer);

} // namespace kiln::artifact

#endif // KILN_RUNTIME_ARTIFACT_ARTIFACTFILE_H
