//===- DTypes.h - Element types of artifact buffers -------------*- C++ -*-===//

#ifndef KILN_RUNTIME_ARTIFACT_DTYPES_H
#define KILN_RUNTIME_ARTIFACT_DTYPES_H

#include "proto/kiln/artifact_generated.h"

#include <cstddef>
#include <string>

namespace kiln::artifact {

/// Whether `dtype` is one of the values the schema defines.
bool isKnownDType(DType dtype);

/// Whether `dtype` is f32, f16 or bf16.
bool isFloatDType(DType dtype);

/// Bytes per element (bools take one); 0 for an unknown value.
size_t dtypeSize(DType dtype);

/// The name of `dtype` as kiln's IR spells it: "f32", "f16", "bf16", "i32",
/// "i64", "i1"; "unknown" otherwise.
const char *dtypeName(DType dtype);

/// A shape as "[2, 3]" ("[]" for a scalar, or when `shape` is null).
std::string shapeString(const flatbuffers::Vector<int64_t> *shape);

} // namespace kiln::artifact

#endif // KILN_RUNTIME_ARTIFACT_DTYPES_H
