//===- Gemm.cpp - f32 matrix products through oneDNN ----------------------===//

#include "runtime/cpu/Gemm.h"

#include "runtime/cpu/Threads.h"

#include <oneapi/dnnl/dnnl.h>
#include <omp.h>

#include <cstdlib>

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

bool gemm(const GemmShape &shape, const float *a, const float *b, float *c,
          std::string &error, int threads) {
  char transA = shape.transposeA ? 'T' : 'N';
  char transB = shape.transposeB ? 'T' : 'N';
  int64_t lda = shape.transposeA ? shape.m : shape.k;
  int64_t ldb = shape.transposeB ? shape.k : shape.n;
  int64_t batch = shape.batch, m = shape.m;
  // With one B and untransposed A, the batches are rows of one product.
  if (shape.sharedB && !shape.transposeA) {
    m *= batch;
    batch = 1;
  }
  int64_t strideA = m * shape.k;
  int64_t strideB = shape.sharedB ? 0 : shape.k * shape.n;
  int64_t strideC = m * shape.n;
  omp_set_num_threads(threads > 0 ? threads : threadsForMacs(m * shape.n * shape.k));
  for (int64_t i = 0; i < batch; ++i) {
    dnnl_status_t status =
        dnnl_sgemm(transA, transB, m, shape.n, shape.k, 1.0f, a + i * strideA,
                   lda, b + i * strideB, ldb, 0.0f, c + i * strideC, shape.n);
    if (status != dnnl_success) {
      error = "oneDNN sgemm failed with status " +
              std::to_string(static_cast<int>(status));
      return false;
    }
  }
  return true;
}

} // namespace kiln::cpu
