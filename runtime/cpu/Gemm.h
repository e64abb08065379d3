//===- Gemm.h - Matrix products through oneDNN ------------------*- C++ -*-===//

#ifndef KILN_RUNTIME_CPU_GEMM_H
#define KILN_RUNTIME_CPU_GEMM_H

#include <cstdint>
#include <string>

namespace kiln::cpu {

/// The precision a product's inputs are computed in. Inputs and output are
/// f32 buffers either way; with BF16 or F16 the inputs are rounded to that
/// type (ties to even) and the products summed in f32, as PyTorch's autocast
/// and Keras' mixed_bfloat16 policy compute a matrix product.
enum class GemmPrecision { F32, BF16, F16 };

/// A batch of row-major products C = A x B (the artifact's Gemm).
struct GemmShape {
  int64_t batch = 1;
  int64_t m = 0, n = 0, k = 0;
  bool transposeA = false; ///< A is [batch, k, m] rather than [batch, m, k].
  bool transposeB = false; ///< B is [.., n, k] rather than [.., k, n].
  bool sharedB = false;    ///< One B for every batch.
  GemmPrecision precision = GemmPrecision::F32;

  /// The elements of A (batch products of m x k) and of B (k x n, once
  /// when shared).
  int64_t elementsA() const { return batch * m * k; }
  int64_t elementsB() const { return (sharedB ? 1 : batch) * k * n; }
};

/// Computes `c` = `a` x `b` for every batch with oneDNN's sgemm, in f32
/// whatever `shape.precision` says (LowPrecisionGemm computes the others).
/// All sizes must be positive (the artifact validator guarantees it). On a
/// library failure sets `error` and returns false.
/// With `threads` 0, threadsForMacs chooses how many threads oneDNN uses
/// (its own split, which may sum in another order). With `threads` 1 the
/// product runs on the calling thread; with more, where canSplitGemm, the
/// threads take whole products of the batch or blocks of rows, each on its
/// own: the same bits as on one thread.
bool gemm(const GemmShape &shape, const float *a, const float *b, float *c,
          std::string &error, int threads = 0);

/// Computes rows [begin, end) of one product (batch 1) into `rows`, row
/// `begin` first, on the calling thread: the same bits as those rows of the
/// whole product when end - begin >= kGemmRowsPerThread.
bool gemmRows(const GemmShape &shape, const float *a, const float *b, float *rows,
              int64_t begin, int64_t end, std::string &error);

/// The rows of one product each thread takes at least when a product is
/// split by rows: fewer would reach oneDNN's matrix-vector path, whose sums
/// run in another order.
constexpr int64_t kGemmRowsPerThread = 16;

/// Whether `threads` threads can share the product without changing its
/// bits: batches to spread, or at least 16 rows for each.
bool canSplitGemm(const GemmShape &shape, int threads);

/// Whether `gemm` computes the product of `shape` as its transpose: a
/// single product (or a shared B's batches folded into rows) of 16 to 96
/// rows times a large B^T (a PyTorch Linear layer's [out, in] weight at a
/// small batch, or a Keras Dense layer's input gradient) is C^T = B A^T,
/// then transposed into C. As written, oneDNN repacks all of B for the few
/// rows each call (and each thread); the other way round it packs the small
/// A: 32 x 128 x 3136 on two threads 0.35 -> 0.19 ms (kiln-bench,
/// docs/performance.md). f32 products, and bf16 or f16 ones where they are
/// emulated (gemm on rounded inputs); not native bf16 ones. The same bits
/// on one thread and split by rows, as every product here.
bool computesTransposedProduct(const GemmShape &shape);

/// The OpenMP threads a product (or convolution) of `macs` multiply-adds
/// may use: one below KILN_GEMM_PARALLEL_MACS (default 2^24), where waking
/// oneDNN's sleeping workers (kiln runs them passive, see tools/kiln/kiln.cpp)
/// costs more than they save; else the session's threads.
int threadsForMacs(int64_t macs);

/// Whether the environment sets KILN_GEMM_PARALLEL_MACS: then threadsForMacs
/// alone chooses a product's threads (the runtime measures otherwise).
bool fixedGemmThreshold();

} // namespace kiln::cpu

#endif // KILN_RUNTIME_CPU_GEMM_H
