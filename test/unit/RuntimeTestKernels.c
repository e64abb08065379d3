/*===- RuntimeTestKernels.c - Kernels for the runtime's tests -----*- C -*-===*/
/*
 * Built as a shared object whose bytes the tests embed in artifacts. Kernels
 * follow the artifact ABI, void f(void **args), with the element count as
 * their first argument: an i64 scalar buffer (in the constants region).
 */

#include <stdint.h>

/* out = a + b */
void kiln_test_add_f32(void **args) {
  int64_t n = *(const int64_t *)args[0];
  const float *a = (const float *)args[1];
  const float *b = (const float *)args[2];
  float *out = (float *)args[3];
  for (int64_t i = 0; i < n; ++i)
    out[i] = a[i] + b[i];
}

/* out = max(x, 0) */
void kiln_test_relu_f32(void **args) {
  int64_t n = *(const int64_t *)args[0];
  const float *x = (const float *)args[1];
  float *out = (float *)args[2];
  for (int64_t i = 0; i < n; ++i)
    out[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

/* out[i] = 1: used to check that the constants region is read-only. */
void kiln_test_fill_ones_f32(void **args) {
  int64_t n = *(const int64_t *)args[0];
  float *out = (float *)args[1];
  for (int64_t i = 0; i < n; ++i)
    out[i] = 1.0f;
}
