//===- ArtifactValidator.h - Cross-reference checks -------------*- C++ -*-===//
//
// What the FlatBuffers verifier cannot know: that every index names an
// existing buffer, kernel or variable; that every buffer has a known dtype and
// region, a non-negative shape whose byte size does not overflow, and a
// 64-byte aligned offset with all its bytes inside its region; that copies
// move equal sizes and GEMMs match their buffers; that nothing writes to the
// constants region through a Copy or a Gemm; that Constant initializers hold
// exactly their variable's bytes; that names are present and unique where
// they are looked up by name. docs/artifact.md lists every rule.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_ARTIFACT_ARTIFACTVALIDATOR_H
#define KILN_RUNTIME_ARTIFACT_ARTIFACTVALIDATOR_H

#include "runtime/artifact/VerifiedArtifact.h"

#include <string>
#include <vector>

namespace kiln::artifact {

/// Checks the artifact in `flatbuffer`, which has passed the FlatBuffers
/// verifier and starts at an 8-byte aligned address. On success fills
/// `buffers` (one layout per entry of `buffers()`) and returns true;
/// otherwise sets `error` to "FIELD: PROBLEM", the field spelled like
/// `programs[1] ('forward').instructions[3] (Gemm).a`, and returns false.
bool validateArtifact(const uint8_t *flatbuffer,
                      std::vector<BufferLayout> &buffers, std::string &error);

} // namespace kiln::artifact

#endif // KILN_RUNTIME_ARTIFACT_ARTIFACTVALIDATOR_H
