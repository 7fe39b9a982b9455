/*
 * gemv.h — the matrix-vector product blas.c runs itself (gemv.c): small
 * ones, where it is faster than OpenBLAS's sgemv.
 */
#ifndef HY_CPU_GEMV_H
#define HY_CPU_GEMV_H

#include <stdint.h>

/* y[i·incy] = (row i of the (rows, k) matrix a, rows lda floats apart)
 * · x + beta·y[i·incy].  beta = 0 ignores what y held. */
void hy_gemv_rows (int64_t rows, int64_t k, const float *a, int64_t lda,
    const float *x, float beta, float *y, int64_t incy);

#endif /* HY_CPU_GEMV_H */
