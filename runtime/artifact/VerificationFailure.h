//===- VerificationFailure.h - Where a FlatBuffer fails to verify -*- C++ -*-===//
//
// The FlatBuffers verifier answers yes or no. For an artifact it refuses,
// this walks the root table as the generated verifier does, one field at a
// time and one element of each vector of tables at a time, to name the
// first part that fails and the offset it starts at.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_ARTIFACT_VERIFICATIONFAILURE_H
#define KILN_RUNTIME_ARTIFACT_VERIFICATIONFAILURE_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace kiln::artifact {

/// Where the artifact FlatBuffer `flatbuffer` (`size` bytes, 8-byte aligned,
/// the one the verifier refused) first goes wrong, as a clause: "the root
/// table offset 268435440 (at offset 0) points outside the FlatBuffer's
/// 1234 bytes or is misaligned", "programs[1] (a table at offset 5012) does
/// not verify", "field 'producer' (at offset 96) does not verify"; "" when
/// no one field of the root is to blame (the verifier's limits on depth and
/// tables).
std::string locateVerificationFailure(const uint8_t *flatbuffer, size_t size);

} // namespace kiln::artifact

#endif // KILN_RUNTIME_ARTIFACT_VERIFICATIONFAILURE_H
