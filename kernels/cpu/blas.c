/*
 * blas.c — thin wrappers over OpenBLAS for the dense kernels (see blas.h).
 */
#include <string.h>

#include <cblas.h>

#include "blas.h"

static inline blasint
at_least_1 (int64_t v)
{
  return (blasint) (v > 1 ? v : 1);
}

void
hy_sgemm (bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
    const float *a, const float *b, float beta, float *c)
{
  hy_sgemm_ldc (trans_a, trans_b, m, n, k, a, b, beta, c, n);
}

void
hy_sgemm_ldc (bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
    const float *a, const float *b, float beta, float *c, int64_t ldc)
{
  if (m <= 0 || n <= 0)
    return;
  if (k <= 0) {
    /* An empty sum: only the beta·C term is left. */
    for (int64_t i = 0; i < m; i++) {
      float *row = c + i * ldc;
      if (beta == 0.0f)
        memset (row, 0, (size_t) n * sizeof *row);
      else if (beta != 1.0f)
        cblas_sscal ((blasint) n, beta, row, 1);
    }
    return;
  }
  /* A single row or column of A (or B) is a contiguous vector whichever
   * way it is stored. */
  if (m == 1) {
    if (trans_b)                /* c = B(n, k) · a */
      cblas_sgemv (CblasRowMajor, CblasNoTrans, (blasint) n, (blasint) k,
          1.0f, b, (blasint) k, a, 1, beta, c, 1);
    else                        /* c = B(k, n)ᵀ · a */
      cblas_sgemv (CblasRowMajor, CblasTrans, (blasint) k, (blasint) n,
          1.0f, b, (blasint) n, a, 1, beta, c, 1);
    return;
  }
  if (n == 1) {
    if (trans_a)                /* c = A(k, m)ᵀ · b */
      cblas_sgemv (CblasRowMajor, CblasTrans, (blasint) k, (blasint) m,
          1.0f, a, (blasint) m, b, 1, beta, c, (blasint) ldc);
    else                        /* c = A(m, k) · b */
      cblas_sgemv (CblasRowMajor, CblasNoTrans, (blasint) m, (blasint) k,
          1.0f, a, (blasint) k, b, 1, beta, c, (blasint) ldc);
    return;
  }
  cblas_sgemm (CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
      trans_b ? CblasTrans : CblasNoTrans, (blasint) m, (blasint) n,
      (blasint) k, 1.0f, a, at_least_1 (trans_a ? m : k), b,
      at_least_1 (trans_b ? k : n), beta, c, at_least_1 (ldc));
}

void
hy_fill_rows (float *restrict c, const float *restrict values, int64_t rows,
    int64_t cols)
{
  for (int64_t r = 0; r < rows; r++) {
    const float v = values[r];
    float *restrict row = c + r * cols;
    for (int64_t j = 0; j < cols; j++)
      row[j] = v;
  }
}

void
hy_fill_cols (float *restrict c, const float *restrict values, int64_t rows,
    int64_t cols)
{
  for (int64_t r = 0; r < rows; r++)
    memcpy (c + r * cols, values, (size_t) cols * sizeof *c);
}

HY_CPU_VECTOR_CLONES void
hy_relu_inplace (float *restrict x, int64_t n)
{
  for (int64_t i = 0; i < n; i++)
    x[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
