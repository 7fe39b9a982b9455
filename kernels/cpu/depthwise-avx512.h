/*
 * depthwise-avx512.h — conv.c's depthwise 3×3 convolution (no dilation,
 * stride 1 or 2, any padding) on one NCHW plane, with AVX-512:
 * MobileNet's depthwise layers, a third of its time on conv.c's portable
 * row loop (a zero-bordered copy of each plane, then nine multiply-adds
 * per output that gcc vectorises but cannot keep in registers across
 * rows).
 *
 * Here the plane is read where it lies: 16 output columns per vector, each
 * tap's inputs by a masked unaligned load (stride 2: two loads whose even
 * or odd lanes a permute gathers), lanes in the padding masked off and so
 * read as 0.  Several output rows are summed per pass, so that each input
 * row loaded serves every output row that reads it; on maps narrower than
 * a vector (7×7) the vectors run along the flattened plane instead of
 * along rows.  The fused epilogue (BatchNorm, residual, ReLU or clip) is
 * applied in registers before the one store.
 *
 * Each output is its bias plus the nine taps in row-major order, each
 * tap one fused multiply-add; the sum of one output never depends on the
 * others or on how planes are shared between threads.
 *
 * Built for any x86-64 (the AVX-512 code has its own target attribute);
 * hy_depthwise_3x3_supported says whether this CPU runs it.
 */
#ifndef HY_CPU_DEPTHWISE_AVX512_H
#define HY_CPU_DEPTHWISE_AVX512_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/params/nn.h"

/* Flattened-plane vectors for planes of at most this many outputs. */
#define HY_DEPTHWISE_FLAT_MAX_CHUNKS 16

/* One depthwise 3×3 convolution's plane geometry, and what
 * hy_depthwise_3x3_prepare derives from it once per call. */
typedef struct hy_depthwise_3x3 {
  int64_t in_h, in_w, out_h, out_w;
  int64_t stride_h, stride_w, pad_h, pad_w;
  /* Set by hy_depthwise_3x3_prepare: */
  bool flat;                    /* vectors along the flattened plane */
  /* flat: per 16 outputs and tap (kh·3 + kw), the lanes whose input lies
   * inside the plane. */
  uint16_t flat_masks[HY_DEPTHWISE_FLAT_MAX_CHUNKS][9];
} hy_depthwise_3x3;

/* The fused epilogue of one output channel (see epilogue.h):
 * y = act (bn (sum) + res). */
typedef struct hy_depthwise_epilogue {
  hy_fused_act act;             /* NONE, RELU or CLIP */
  float alpha, beta;            /* CLIP's bounds */
  bool batch_norm;
  float mean, scale, shift;
  const float *res;             /* the output plane's residual, or NULL */
} hy_depthwise_epilogue;

/* Whether this CPU (AVX-512F) runs the kernel, for this geometry (set its
 * first eight fields), and this process wants it (HYBRIDINFER_DEPTHWISE=0
 * turns it off, for comparisons).  Returns false where conv.c's own loop
 * must run. */
bool hy_depthwise_3x3_supported (const hy_depthwise_3x3 *g);

/* Whether the kernel applies this epilogue itself (activations NONE,
 * RELU and CLIP); for others the caller runs the epilogue after it. */
bool hy_depthwise_3x3_fuses (const hy_fused_epilogue *e);

/* Derives the rest of g from its geometry; once per call, before the
 * planes. */
void hy_depthwise_3x3_prepare (hy_depthwise_3x3 *g);

/* One output plane y (out_h × out_w) from the input plane x
 * (in_h × in_w): y = epilogue (bias + Σ w[kh·3 + kw] · x[…]).  epi may be
 * NULL (just the bias). */
void hy_depthwise_3x3_plane (const hy_depthwise_3x3 *g, float *y,
    const float *x, const float *w, float bias,
    const hy_depthwise_epilogue *epi);

#endif /* HY_CPU_DEPTHWISE_AVX512_H */
