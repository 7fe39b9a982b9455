/*
 * blas.h — the matrix products and row helpers the dense kernels share
 * (convolution, FullyConnected, dot, batch_dot).
 *
 * Matrices are contiguous and row-major: A is (m, k), stored (k, m) when
 * trans_a; B is (k, n), stored (n, k) when trans_b; C is (m, n).
 */
#ifndef HY_CPU_BLAS_H
#define HY_CPU_BLAS_H

#include <stdbool.h>
#include <stdint.h>

/* Hot loops that gcc vectorises get AVX-512 (x86-64-v4) and AVX2 + FMA
 * (x86-64-v3) builds beside the baseline one, picked once at load time:
 * the library is built for generic x86-64 but runs on wider machines. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define HY_CPU_VECTOR_CLONES \
  __attribute__ ((target_clones ("arch=x86-64-v4", "arch=x86-64-v3", \
          "default")))
#else
#define HY_CPU_VECTOR_CLONES
#endif

/* C = A·B + beta·C.  Uses a matrix-vector product when m or n is 1 (which
 * OpenBLAS runs much faster than a degenerate GEMM) and tolerates empty
 * sizes, which cblas would reject. */
void hy_sgemm (bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
    const float *a, const float *b, float beta, float *c);

/* The same with C's rows ldc floats apart (C a block of a wider matrix). */
void hy_sgemm_ldc (bool trans_a, bool trans_b, int64_t m, int64_t n,
    int64_t k, const float *a, const float *b, float beta, float *c,
    int64_t ldc);

/* Row r of the (rows, cols) matrix c becomes values[r] everywhere:
 * a per-output-channel bias before a GEMM with beta = 1. */
void hy_fill_rows (float *c, const float *values, int64_t rows, int64_t cols);

/* Every row of the (rows, cols) matrix c becomes a copy of values[0..cols):
 * a per-column bias before a GEMM with beta = 1. */
void hy_fill_cols (float *c, const float *values, int64_t rows, int64_t cols);

/* x = max(x, 0), for activations fused into the producing kernel. */
void hy_relu_inplace (float *x, int64_t n);

#endif /* HY_CPU_BLAS_H */
