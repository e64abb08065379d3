//===- VariableInit.h - Deterministic variable initializers -----*- C++ -*-===//
//
// The generator behind the random InitKinds, specified exactly in
// docs/artifact.md ("Variable initialization") so that every runtime writes
// the same bits for the same seed: a splitmix64 stream per variable seeded by
// its `seed`, uniforms from the top 24 bits, normals by Box-Muller, values
// computed in double and rounded to f32 (then to f16/bf16, ties to even), one
// draw per element in row-major order.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_EXEC_VARIABLEINIT_H
#define KILN_RUNTIME_EXEC_VARIABLEINIT_H

#include "proto/kiln/artifact_generated.h"

#include <cstddef>
#include <cstdint>

namespace kiln::exec {

/// Steele, Lea and Flood's splitmix64.
class SplitMix64 {
public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}

  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

  /// Uniform in [0, 1): the top 24 bits times 2^-24.
  double uniform() { return double(next() >> 40) * 0x1p-24; }

  /// Uniform in (0, 1]: the top 24 bits plus one, times 2^-24.
  double uniformNonZero() { return double((next() >> 40) + 1) * 0x1p-24; }

  /// Standard normal by Box-Muller from two uniformNonZero() draws u1, u2:
  /// sqrt(-2 ln u1) * cos(2 pi u2).
  double normal();

  /// normal(), drawn again while its magnitude exceeds 2.
  double truncatedNormal();

private:
  uint64_t state_;
};

/// Glorot's fan-in and fan-out of a weight of shape `dims`: rank 0 gives 1
/// and 1; rank 1 gives dims[0] twice; rank 2 [in, out] gives dims[0] and
/// dims[1]; higher ranks multiply both of the last two dimensions by the
/// product of the others (the receptive field).
struct Fans {
  double in, out;
};
Fans glorotFans(const int64_t *dims, size_t rank);

/// An initializer apart from the artifact (InitKind and its parameters).
struct Initializer {
  artifact::InitKind kind = artifact::InitKind_Zeros;
  double a = 0, b = 0;
  uint64_t seed = 0;
  const uint8_t *constant = nullptr; ///< Constant: exactly the values' bytes.
  size_t constantBytes = 0;
};

/// Writes `elementCount` values of `dtype` drawn by `init` into `data`, one
/// draw per element in order; `dims` (of `rank`) give the Glorot fans.
void initializeValues(const Initializer &init, artifact::DType dtype, const int64_t *dims,
                      size_t rank, uint64_t elementCount, void *data);

/// Writes the first value of `variable` into its buffer, `data`, which holds
/// `elementCount` elements of `buffer`'s dtype. The artifact has been
/// validated: the initializer suits the dtype and a Constant's value has
/// exactly the buffer's size.
void initializeVariable(const artifact::Variable &variable,
                        const artifact::Buffer &buffer, uint64_t elementCount,
                        void *data);

} // namespace kiln::exec

#endif // KILN_RUNTIME_EXEC_VARIABLEINIT_H
