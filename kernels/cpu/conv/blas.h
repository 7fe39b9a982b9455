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

#include "kernels/cpu/cpu-features.h"
#include "kernels/cpu/cpu-kernel.h"
#include "kernels/cpu/conv/sgemm-packed.h"

/* The least multiply-adds worth handing to a thread of their own (a
 * spinning worker takes a loop in about a microsecond). */
#define HY_PARALLEL_MIN_MACS (64 * 1024)

/* Products from this size on are split over the threads by hy_gemm_run;
 * a GEMM block much smaller loses more to packing than it gains. */
#define HY_GEMM_SPLIT_MIN_MACS (256 * 1024)

/* One product C = A·B + beta·C, C's rows ldc floats apart (C may be a
 * block of a wider matrix). */
typedef struct hy_gemm {
  bool trans_a, trans_b;
  int64_t m, n, k;
  const float *a, *b;
  float beta;
  float *c;
  int64_t ldc;
  /* Optional: runs on each block of C right after the product wrote it,
   * on the thread that wrote it, while the block is still in cache (a
   * fused epilogue): rows [row0, row0 + rows), columns [col0, col0 +
   * cols).  Serially it runs once, on the whole of C. */
  void (*then) (void *arg, int64_t row0, int64_t rows, int64_t col0,
      int64_t cols);
  void *then_arg;
  /* Optional: A as hy_packed_a_pack (sgemm-packed.h) packed it, once, for
   * the packed kernel, which then runs the product in place of OpenBLAS
   * (untransposed A and B, beta 0 or 1 only). */
  const float *packed_a;
  int packed_layout;            /* hy_packed_layout: how it was packed */
  /* Optional, with packed_a: B given a panel at a time
   * (b unused), built on the thread that multiplies it (an implicit
   * im2col: im2col-panel.h); `thread` is the block's thread in the split,
   * 0 when it is not split. */
  hy_packed_b_panel_fn b_panel;
  void *b_panel_arg;
  /* Optional, with packed_a: `then`'s epilogue, for the packed kernel's
   * tiles to apply in registers where they can (sgemm-packed.h); `then`
   * must still be given. */
  const hy_packed_epilogue *packed_epi;
} hy_gemm;

/* Runs the product on ctx's threads when it is big enough to pay for
 * them: the larger of C's dimensions is split into one block per thread,
 * each a single-threaded OpenBLAS call, so no output's sum is ever split
 * (OpenBLAS may still round a block in the last bit unlike the whole: it
 * picks its kernels by shape).  A single row or column of C is a
 * matrix-vector product, much faster than a degenerate GEMM.  Empty sizes
 * are fine (cblas would reject them). */
void hy_gemm_run (hy_cpu_ctx *ctx, const hy_gemm *g);

/* C = A·B + beta·C on contiguous matrices. */
void hy_sgemm (hy_cpu_ctx *ctx, bool trans_a, bool trans_b, int64_t m,
    int64_t n, int64_t k, const float *a, const float *b, float beta,
    float *c);

/* Makes OpenBLAS run every call on the calling thread: the kernels split
 * products over their own threads.  Its threaded driver would also
 * allocate on each call it splits, and its heuristics slow small products
 * down.  Does nothing when the BLAS is not OpenBLAS. */
void hy_blas_use_one_thread (void);

/* Every row of the (rows, cols) matrix c becomes a copy of values[0..cols):
 * a per-column bias before a GEMM with beta = 1. */
void hy_fill_cols (float *c, const float *values, int64_t rows, int64_t cols);

/* x = max(x, 0), for activations fused into the producing kernel. */
void hy_relu_inplace (float *x, int64_t n);

#endif /* HY_CPU_BLAS_H */
