/*
 * depthwise-avx512.h — conv.c's depthwise K×K convolution (K 3, 5 or 7,
 * no dilation, stride 1 or 2, any padding) on one NCHW plane, with
 * AVX-512: MobileNet's depthwise layers (3×3, and MobileNetV3's 5×5), a
 * third to a half of its time on conv.c's portable row loop (a
 * zero-bordered copy of each plane, then K² multiply-adds per output that
 * gcc vectorises but cannot keep in registers across rows).  One code
 * path, its kernel size a compile-time constant of each variant.
 *
 * Here the plane is read where it lies: 16 output columns per vector, the
 * column taps' inputs shifted out of one unaligned load and the floats
 * after it (stride 2: two loads whose even or odd lanes a permute
 * gathers), lanes in the padding masked off and so read as 0.  Several
 * output rows are summed per pass, so that each input row loaded serves
 * every output row that reads it.  (Vectors along the flattened plane on
 * 7×7 maps, 49 outputs in 4 vectors instead of 7 rows of 7 lanes, were
 * no faster.)  The fused epilogue (BatchNorm, residual, ReLU, clip, or
 * MobileNetV3's hard sigmoid and hard swish) is applied in registers
 * before the one store.
 *
 * Each output is K sums, one per kernel row, of its K column taps by
 * fused multiply-adds (the bias starts the first), then ((row 0 + row 1)
 * + row 2) + …: not conv.c's own order (a multiply and an add per tap), so
 * the last bits differ from its loop's, as the packed GEMM's from
 * OpenBLAS's; but the sum of one output never depends on the others or
 * on how planes are shared between threads.
 *
 * Built for any x86-64 (the AVX-512 code has its own target attribute);
 * hy_depthwise_supported says whether this CPU runs it.
 */
#ifndef HY_CPU_DEPTHWISE_AVX512_H
#define HY_CPU_DEPTHWISE_AVX512_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/params/nn.h"

/* One depthwise K×K convolution's plane geometry. */
typedef struct hy_depthwise {
  int64_t kernel;               /* K: 3, 5 or 7 (square) */
  int64_t in_h, in_w, out_h, out_w;
  int64_t stride_h, stride_w, pad_h, pad_w;
} hy_depthwise;

/* The fused epilogue of one output channel (see epilogue.h):
 * y = act (bn (sum) + res). */
typedef struct hy_depthwise_epilogue {
  hy_fused_act act;             /* NONE, RELU, CLIP, HARD_SIGMOID or
                                 * HARD_SWISH */
  float alpha, beta;            /* CLIP's bounds */
  bool batch_norm;
  float mean, scale, shift;
  const float *res;             /* the output plane's residual, or NULL */
} hy_depthwise_epilogue;

/* Whether this CPU (AVX-512F) runs the kernel, for this geometry, and
 * this process wants it (HYBRIDINFER_DEPTHWISE=0
 * turns it off, for comparisons).  Returns false where conv.c's own loop
 * must run. */
bool hy_depthwise_supported (const hy_depthwise *g);

/* Whether the kernel applies this epilogue itself (activations NONE,
 * RELU, CLIP, HARD_SIGMOID and HARD_SWISH); for others the caller runs
 * the epilogue after it. */
bool hy_depthwise_fuses (const hy_fused_epilogue *e);

/* One output plane y (out_h × out_w) from the input plane x
 * (in_h × in_w): y = epilogue (bias + Σ w[kh·K + kw] · x[…]).  epi may be
 * NULL (just the bias). */
void hy_depthwise_plane (const hy_depthwise *g, float *y,
    const float *x, const float *w, float bias,
    const hy_depthwise_epilogue *epi);

#endif /* HY_CPU_DEPTHWISE_AVX512_H */
