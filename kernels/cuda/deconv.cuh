/*
 * deconv.cuh — Deconvolution on the GPU (deconv.cu), shared with
 * tests/cuda/emulate-deconv.cu: the cuDNN geometry, the direct kernel's
 * element function and the bias.
 *
 * A deconvolution is the data gradient of the convolution that maps its
 * output back onto its input, and that is how cuDNN runs it
 * (cudnnConvolutionBackwardData): that forward convolution reads our
 * output y (N, F, H', W') with our weight (C, F/g, kh, kw) as its
 * (K, C/g, r, s) filter, our pad, stride and dilation and our groups, and
 * writes our input's shape (N, C, H, W).  The core inferred y's size as
 * stride·(in − 1) + dilate·(k − 1) + 1 − 2·pad + adj with adj < stride,
 * so that convolution's output size, ⌊(y + 2·pad − dilate·(k − 1) − 1) /
 * stride⌋ + 1, is exactly `in`, and the adj extra rows are the ones only
 * the last input rows reach.  1-D runs as 2-D with a height of 1.
 *
 * With a dilation above 1, MXNet 1.9.1's CPU result (the reference) is
 * not that gradient (kernels/cpu/deconv.c: taps whose offset the dilation
 * does not divide are rounded down, others skipped), so those calls run
 * a direct kernel instead, one thread per output element, summing what
 * the CPU's col2im gathers: for each input channel of the group, the
 * input rows py from lo to hi in steps of the dilation with tap
 * (Y − py·s) / d, Y the padded output position, and likewise for
 * columns.
 */
#ifndef HY_CUDA_DECONV_CUH
#define HY_CUDA_DECONV_CUH

#include "kernels/cuda/launch.cuh"
#include "hybrid-tensor.h"
#include "kernels/params/nn.h"

/* What cuDNN is told: NCHW dims of the convolution's input (our y), its
 * filter (our weight) and its output (our x); per spatial axis (h, w) pad,
 * stride, dilation. */
typedef struct hy_cuda_deconv_geometry {
  int y[4], w[4], x[4];
  int pad[2], stride[2], dilate[2];
  int groups;
  bool dilated;                 /* some dilation > 1: the direct kernel */
} hy_cuda_deconv_geometry;

/* FALSE when a dimension does not fit cuDNN's ints. */
static inline bool
hy_cuda_deconv_geometry_of (const hy_deconv_params *p, const hy_shape *x,
    const hy_shape *y, hy_cuda_deconv_geometry *g)
{
  const int lead = 2 - p->n_spatial;    /* 1-D: a height of 1 in front */
  if (hy_shape_numel (x) > INT32_MAX || hy_shape_numel (y) > INT32_MAX)
    return false;
  *g = (hy_cuda_deconv_geometry) {};
  g->groups = (int) p->num_group;
  for (int i = 0; i < 4; i++) {
    const int s = i - 2 - lead;         /* index into the op's tuples */
    g->x[i] = i < 2 ? (int) x->dims[i] : s >= 0 ? (int) x->dims[2 + s] : 1;
    g->y[i] = i < 2 ? (int) y->dims[i] : s >= 0 ? (int) y->dims[2 + s] : 1;
  }
  g->w[0] = (int) x->dims[1];
  g->w[1] = (int) (p->num_filter / p->num_group);
  for (int i = 0; i < 2; i++) {
    const int s = i - lead;
    int64_t pad = 0, adj = 0;
    if (s >= 0)
      hy_deconv_pads (p, s, x->dims[2 + s], &pad, &adj);
    g->w[2 + i] = s >= 0 ? (int) p->kernel[s] : 1;
    g->pad[i] = (int) pad;
    g->stride[i] = s >= 0 ? (int) p->stride[s] : 1;
    g->dilate[i] = s >= 0 ? (int) p->dilate[s] : 1;
    g->dilated |= g->dilate[i] > 1;
  }
  return true;
}

/* ---- the direct kernel (dilation > 1) ----------------------------------- */

typedef struct hy_cuda_deconv_axis {
  int64_t in, out, k, s, d, pad;
} hy_cuda_deconv_axis;

typedef struct hy_cuda_deconv_args {
  hy_cuda_deconv_axis h, w;
  int64_t channels, filters, groups;
  bool bias;
} hy_cuda_deconv_args;

static inline hy_cuda_deconv_args
hy_cuda_deconv_plan (const hy_deconv_params *p, const hy_cuda_deconv_geometry
    *g)
{
  hy_cuda_deconv_args a = {};
  hy_cuda_deconv_axis *ax[2] = { &a.h, &a.w };
  for (int i = 0; i < 2; i++)
    *ax[i] = (hy_cuda_deconv_axis) { g->x[2 + i], g->y[2 + i], g->w[2 + i],
      g->stride[i], g->dilate[i], g->pad[i] };
  a.channels = g->x[1];
  a.filters = g->y[1];
  a.groups = g->groups;
  a.bias = !p->no_bias;
  return a;
}

/* The input positions [*lo, *hi) (in steps of d) reaching output o. */
HY_CUDA_HD void
hy_cuda_deconv_range (const hy_cuda_deconv_axis *a, int64_t o, int64_t *lo,
    int64_t *hi)
{
  const int64_t extent = a->d * (a->k - 1) + 1, y = o + a->pad;
  *lo = y < extent ? y % a->d : (y - extent + a->s) / a->s;
  *hi = (y + a->s) / a->s;
  if (*hi > a->in)
    *hi = a->in;
}

/* Output element i of (N, F, H', W'); bias may be NULL (no_bias). */
HY_CUDA_HD float
hy_cuda_deconv_one (const hy_cuda_deconv_args *a, const float *x,
    const float *w, const float *bias, int64_t i)
{
  const int64_t ox = i % a->w.out, oy = i / a->w.out % a->h.out;
  const int64_t f = i / (a->w.out * a->h.out) % a->filters;
  const int64_t n = i / (a->w.out * a->h.out * a->filters);
  const int64_t cg = a->channels / a->groups, fg = a->filters / a->groups;
  const int64_t gi = f / fg, fl = f % fg;
  const int64_t taps = a->h.k * a->w.k, in_plane = a->h.in * a->w.in;
  int64_t y0, y1, x0, x1;
  hy_cuda_deconv_range (&a->h, oy, &y0, &y1);
  hy_cuda_deconv_range (&a->w, ox, &x0, &x1);
  float sum = 0.0f;
  for (int64_t c = gi * cg; c < (gi + 1) * cg; c++) {
    const float *xc = x + (n * a->channels + c) * in_plane;
    const float *wc = w + (c * fg + fl) * taps;
    for (int64_t py = y0; py < y1; py += a->h.d) {
      const int64_t ky = (oy + a->h.pad - py * a->h.s) / a->h.d;
      for (int64_t px = x0; px < x1; px += a->w.d) {
        const int64_t kx = (ox + a->w.pad - px * a->w.s) / a->w.d;
        sum = hy_add_rn (sum, hy_mul_rn (wc[ky * a->w.k + kx],
                xc[py * a->w.in + px]));
      }
    }
  }
  return bias ? hy_add_rn (sum, bias[f]) : sum;
}

/* ---- the bias after cuDNN ------------------------------------------------ */

/* y[i] + bias of i's filter, y being (N, F, spatial). */
HY_CUDA_HD float
hy_cuda_deconv_biased (float y, const float *bias, int64_t filters,
    int64_t spatial, int64_t i)
{
  return hy_add_rn (y, bias[i / spatial % filters]);
}

#endif /* HY_CUDA_DECONV_CUH */
