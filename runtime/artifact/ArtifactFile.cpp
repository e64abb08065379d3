//===- ArtifactFile.cpp - The artifact file layout ------------------------===//

#include "runtime/artifact/ArtifactFile.h"

#include "runtime/support/StagedFile.h"

namespace kiln::artifact {

namespace {

void storeLittleEndian64(uint64_t value, uint8_t *out) {
  for (int i = 0; i < 8; ++i)
    out[i] = static_cast<uint8_t>(value >> (8 * i));
}

uint64_t loadLittleEndian64(const uint8_t *in) {
  uint64_t value = 0;
  for (int i = 0; i < 8; ++i)
    value |= uint64_t(in[i]) << (8 * i);
  return value;
}

} // namespace

ArtifactFooter decodeArtifactFooter(const uint8_t *footer) {
  return {loadLittleEndian64(footer), loadLittleEndian64(footer + 8)};
}

void encodeArtifactFooter(const uint8_t *flatbuffer, size_t size,
                          uint8_t *footer) {
  storeLittleEndian64(size, footer);
  storeLittleEndian64(fnv1a64(flatbuffer, size), footer + 8);
}

bool writeArtifactFile(const std::string &path, const uint8_t *flatbuffer,
                       size_t size, std::string &error) {
  uint8_t footer[kFooterSize];
  encodeArtifactFooter(flatbuffer, size, footer);
  return writeFileAtomically(path, {{flatbuffer, size}, {footer, kFooterSize}},
                             error);
}

} // namespace kiln::artifact
