//===- Gemm.cpp - f32 matrix products through oneDNN ----------------------===//

#include "runtime/cpu/Gemm.h"

#include "runtime/cpu/Threads.h"

#include <oneapi/dnnl/dnnl.h>
#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

namespace kiln::cpu {
bool fixedGemmThreshold() {
  static const bool fixed = std::getenv("KILN_GEMM_PARALLEL_MACS") != nullptr;
  return fixed;
}

int threadsForMacs(int64_t macs) {
  static const int64_t threshold = [] {
    const char *text = std::getenv("KILN_GEMM_PARALLEL_MACS");
    return text ? std::atoll(text) : int64_t(1) << 24;
  }();
  return macs < threshold ? 1 : availableThreads();
}

namespace {

/// A product as dnnl_sgemm takes it: `batch` products of m rows (the
/// batches of a shared B with A untransposed folded into the rows).
struct Plain {
  char transA, transB;
  int64_t batch, m, n, k, lda, ldb, strideA, strideB, strideC;
  bool transposed; ///< Computed as C^T = B A^T (computesTransposedProduct).
};

/// Products of kGemmRowsPerThread to this many rows may be computed as their
/// transpose. Timed with oneDNN on an EPYC Zen 4, 1 and 2 threads, n x k
/// from 1000 x 128 to 3136 x 128: 16 to 64 rows win 30-50% on one thread
/// where B has 2^18 elements or more (0.99 for 64 x 256 x 1024, which wins
/// 1.5x on two), 96 rows 5-30% on two, 128 rows tie. Below 16 rows oneDNN's
/// matrix-vector path is faster as written (8 x 128 x 3136: 74 against
/// 182 us).
constexpr int64_t kTransposedMaxRows = 96;
/// ... where B has at least this many elements (2^17, 1000 x 128, ties or
/// loses) ...
constexpr int64_t kTransposedMinB = int64_t(1) << 18;
/// ... and C at most this many: each thread's scratch C^T, kept between
/// calls outside the planned arena, is at most 4 MiB.
constexpr int64_t kTransposedMaxC = int64_t(1) << 20;

Plain plainOf(const GemmShape &shape) {
  Plain p{shape.transposeA ? 'T' : 'N', shape.transposeB ? 'T' : 'N', shape.batch, shape.m,
          shape.n, shape.k, shape.transposeA ? shape.m : shape.k,
          shape.transposeB ? shape.k : shape.n, 0, 0, 0, false};
  if (shape.sharedB && !shape.transposeA) { // The batches are rows of one product.
    p.m *= p.batch;
    p.batch = 1;
  }
  p.strideA = p.m * shape.k;
  p.strideB = shape.sharedB ? 0 : shape.k * shape.n;
  p.strideC = p.m * shape.n;
  p.transposed = shape.transposeB && !shape.transposeA && p.batch == 1 &&
                 p.m >= kGemmRowsPerThread && p.m <= kTransposedMaxRows &&
                 p.n * p.k >= kTransposedMinB &&
                 p.m * p.n <= kTransposedMaxC;
  return p;
}

/// `c`'s rows [0, rows) = the columns of `ct` ([columns, rows], row-major),
/// by 16 x 16 tiles that stay in the first-level cache.
void transposeInto(const float *ct, int64_t rows, int64_t columns, float *c) {
  constexpr int64_t kTile = 16;
  for (int64_t j0 = 0; j0 < columns; j0 += kTile)
    for (int64_t i0 = 0; i0 < rows; i0 += kTile) {
      int64_t j1 = std::min(columns, j0 + kTile), i1 = std::min(rows, i0 + kTile);
      for (int64_t i = i0; i < i1; ++i)
        for (int64_t j = j0; j < j1; ++j)
          c[i * columns + j] = ct[j * rows + i];
    }
}

/// Rows [begin, end) of a product computed as its transpose: columns
/// [begin, end) of C^T = B A^T into this thread's scratch, then transposed
/// into `rows`. Every element sums over k as in the whole C^T.
dnnl_status_t multiplyTransposedRowsInto(const Plain &p, const float *a, const float *b,
                                         float *rows, int64_t begin, int64_t end) {
  thread_local std::vector<float> scratch;
  int64_t count = end - begin;
  if (scratch.size() < static_cast<size_t>(p.n * count))
    scratch.resize(static_cast<size_t>(p.n * count));
  dnnl_status_t status = dnnl_sgemm('N', 'T', p.n, count, p.k, 1.0f, b, p.k, a + begin * p.k,
                                    p.k, 0.0f, scratch.data(), count);
  if (status == dnnl_success)
    transposeInto(scratch.data(), count, p.n, rows);
  return status;
}

/// Rows [begin, end) of product `i` into `rows` (row `begin` first).
dnnl_status_t multiplyRowsInto(const Plain &p, const float *a, const float *b, float *rows,
                               int64_t i, int64_t begin, int64_t end) {
  if (p.transposed)
    return multiplyTransposedRowsInto(p, a, b, rows, begin, end);
  const float *rowsOfA = a + i * p.strideA + (p.transA == 'T' ? begin : begin * p.k);
  return dnnl_sgemm(p.transA, p.transB, end - begin, p.n, p.k, 1.0f, rowsOfA, p.lda,
                    b + i * p.strideB, p.ldb, 0.0f, rows, p.n);
}

/// Rows [begin, end) of product `i`, at their place in `c`.
dnnl_status_t multiplyRows(const Plain &p, const float *a, const float *b, float *c, int64_t i,
                           int64_t begin, int64_t end) {
  return multiplyRowsInto(p, a, b, c + i * p.strideC + begin * p.n, i, begin, end);
}

std::string failure(dnnl_status_t status) {
  return "oneDNN sgemm failed with status " + std::to_string(static_cast<int>(status));
}

} // namespace

bool gemmRows(const GemmShape &shape, const float *a, const float *b, float *rows,
              int64_t begin, int64_t end, std::string &error) {
  if (dnnl_status_t status = multiplyRowsInto(plainOf(shape), a, b, rows, 0, begin, end);
      status != dnnl_success) {
    error = failure(status);
    return false;
  }
  return true;
}

bool computesTransposedProduct(const GemmShape &shape) { return plainOf(shape).transposed; }

bool canSplitGemm(const GemmShape &shape, int threads) {
  Plain p = plainOf(shape);
  return threads > 1 && (p.batch >= threads || p.m >= kGemmRowsPerThread * threads);
}

bool gemm(const GemmShape &shape, const float *a, const float *b, float *c,
          std::string &error, int threads) {
  Plain p = plainOf(shape);
  if (threads > 1 && canSplitGemm(shape, threads)) {
    // Each thread multiplies whole products, or a block of rows, on its own:
    // every element summed as on one thread.
    omp_set_num_threads(1);
    dnnl_status_t status = dnnl_success;
    bool byBatch = p.batch >= threads;
#pragma omp parallel num_threads(threads)
    {
      int t = omp_get_thread_num();
      dnnl_status_t mine = dnnl_success;
      if (byBatch) {
        for (int64_t i = t; i < p.batch && mine == dnnl_success; i += threads)
          mine = multiplyRows(p, a, b, c, i, 0, p.m);
      } else {
        mine = multiplyRows(p, a, b, c, 0, p.m * t / threads, p.m * (t + 1) / threads);
      }
      if (mine != dnnl_success) {
#pragma omp critical
        status = mine;
      }
    }
    if (status != dnnl_success) {
      error = failure(status);
      return false;
    }
    return true;
  }
  omp_set_num_threads(threads > 0 ? 1 : threadsForMacs(p.m * p.n * p.k));
  for (int64_t i = 0; i < p.batch; ++i)
    if (dnnl_status_t status = multiplyRows(p, a, b, c, i, 0, p.m); status != dnnl_success) {
      error = failure(status);
      return false;
    }
  return true;
}

} // namespace kiln::cpu
