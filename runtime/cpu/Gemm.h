//===- Gemm.h - f32 matrix products through oneDNN --------------*- C++ -*-===//

#ifndef KILN_RUNTIME_CPU_GEMM_H
#define KILN_RUNTIME_CPU_GEMM_H

#include <cstdint>
#include <string>

namespace kiln::cpu {

/// A batch of row-major products C = A x B (the artifact's Gemm).
struct GemmShape {
  int64_t batch = 1;
  int64_t m = 0, n = 0, k = 0;
  bool transposeA = false; ///< A is [batch, k, m] rather than [batch, m, k].
  bool transposeB = false; ///< B is [.., n, k] rather than [.., k, n].
  bool sharedB = false;    ///< One B for every batch.
};

/// Computes `c` = `a` x `b` for every batch with oneDNN's sgemm. All sizes
/// must be positive (the artifact validator guarantees it). On a library
/// failure sets `error` and returns false.
bool gemm(const GemmShape &shape, const float *a, const float *b, float *c,
          std::string &error);

} // namespace kiln::cpu

#endif // KILN_RUNTIME_CPU_GEMM_H
