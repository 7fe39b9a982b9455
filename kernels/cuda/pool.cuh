/*
 * pool.cuh — Pooling (NCW, NCHW, NCDHW, global) on the GPU (pool.cu), one
 * thread per output element walking its window; shared with
 * tests/cuda/emulate-pool.cu.
 *
 * Our own kernel rather than cuDNN's, so that MXNet 1.9.1's rules hold
 * exactly as on the CPU (kernels/cpu/pool.c):
 *  - max starts from -FLT_MAX and takes values inside the image only, so
 *    padding never wins and NaN never does;
 *  - avg divides by the window clipped to the padded image [−pad, in+pad)
 *    (count_include_pad) or to the image itself, and a window wholly in
 *    the padding gives 0;
 *  - sum adds, lp takes (Σ xᵖ)^(1/p) for p = 1, 2, 3 without |x|;
 *  - the window is summed in (d, h, w) order, as the CPU does.
 * The output shape (valid/full/same conventions) is the core's; 1-D and
 * 2-D run as 3-D with leading axes of length 1.
 */
#ifndef HY_CUDA_POOL_CUH
#define HY_CUDA_POOL_CUH

#include <float.h>
#include <math.h>

#include "kernels/cuda/launch.cuh"
#include "hybrid-tensor.h"
#include "kernels/params/nn.h"

typedef struct hy_cuda_pool_args {
  int type;                     /* hy_pool_type */
  bool global;
  bool count_include_pad;
  int p_value;
  int64_t in[3], out[3], k[3], stride[3], pad[3];
  int64_t in_size, out_size;    /* per plane (image, channel) */
} hy_cuda_pool_args;

static inline hy_cuda_pool_args
hy_cuda_pool_plan (const hy_pool_params *p, const hy_shape *x,
    const hy_shape *y)
{
  hy_cuda_pool_args g = {};
  g.type = p->pool_type;
  g.global = p->global_pool;
  g.count_include_pad = p->count_include_pad;
  g.p_value = p->p_value;
  const int64_t planes = x->dims[0] * x->dims[1];
  if (g.global) {
    /* Whatever the kernel attribute says: the whole map, one output. */
    g.in_size = planes > 0 ? hy_shape_numel (x) / planes : 0;
    g.out_size = 1;
    return g;
  }
  const int n = x->ndim - 2, lead = 3 - n;
  g.in_size = g.out_size = 1;
  for (int i = 0; i < 3; i++) {
    const int s = i - lead;
    g.in[i] = s >= 0 ? x->dims[2 + s] : 1;
    g.out[i] = s >= 0 ? y->dims[2 + s] : 1;
    g.k[i] = s >= 0 ? p->kernel[s] : 1;
    g.stride[i] = s >= 0 ? p->stride[s] : 1;
    g.pad[i] = s >= 0 ? p->pad[s] : 0;
    g.in_size *= g.in[i];
    g.out_size *= g.out[i];
  }
  return g;
}

HY_CUDA_HD float
hy_cuda_pow_p (float x, int p)
{
  return p == 1 ? x : p == 2 ? x * x : x * x * x;
}

HY_CUDA_HD float
hy_cuda_root_p (float x, int p)
{
  return p == 1 ? x : p == 2 ? sqrtf (x) : cbrtf (x);
}

/* The window of output o along one axis: [*lo, *hi) inside the image;
 * returns its length within the padded image, for averaging. */
HY_CUDA_HD int64_t
hy_cuda_pool_window (const hy_cuda_pool_args *g, int axis, int64_t o,
    int64_t *lo, int64_t *hi)
{
  const int64_t start = o * g->stride[axis] - g->pad[axis];
  int64_t end = start + g->k[axis];
  const int64_t padded_end = g->in[axis] + g->pad[axis];
  if (end > padded_end)
    end = padded_end;
  *lo = start > 0 ? start : 0;
  *hi = end < g->in[axis] ? end : g->in[axis];
  return end - start;
}

/* Output element i (planes of out_size outputs, in_size inputs). */
HY_CUDA_HD float
hy_cuda_pool_one (const hy_cuda_pool_args *g, const float *x, int64_t i)
{
  const float *plane = x + i / g->out_size * g->in_size;
  float r = g->type == HY_POOL_MAX ? -FLT_MAX : 0.0f;
  if (g->global) {
    for (int64_t e = 0; e < g->in_size; e++) {
      const float v = plane[e];
      if (g->type == HY_POOL_MAX)
        r = v > r ? v : r;
      else if (g->type == HY_POOL_LP)
        r += hy_cuda_pow_p (v, g->p_value);
      else
        r += v;
    }
    if (g->type == HY_POOL_AVG)
      r /= (float) g->in_size;
    else if (g->type == HY_POOL_LP)
      r = hy_cuda_root_p (r, g->p_value);
    return r;
  }

  int64_t o = i % g->out_size;
  const int64_t ow = o % g->out[2];
  o /= g->out[2];
  const int64_t oh = o % g->out[1], od = o / g->out[1];
  int64_t d0, d1, h0, h1, w0, w1;
  const int64_t nd = hy_cuda_pool_window (g, 0, od, &d0, &d1);
  const int64_t nh = hy_cuda_pool_window (g, 1, oh, &h0, &h1);
  const int64_t nw = hy_cuda_pool_window (g, 2, ow, &w0, &w1);
  for (int64_t d = d0; d < d1; d++) {
    for (int64_t h = h0; h < h1; h++) {
      const float *row = plane + (d * g->in[1] + h) * g->in[2];
      for (int64_t w = w0; w < w1; w++) {
        if (g->type == HY_POOL_MAX)
          r = row[w] > r ? row[w] : r;
        else if (g->type == HY_POOL_LP)
          r += hy_cuda_pow_p (row[w], g->p_value);
        else
          r += row[w];
      }
    }
  }
  if (g->type == HY_POOL_AVG) {
    const int64_t count = g->count_include_pad ? nd * nh * nw
        : (d1 - d0) * (h1 - h0) * (w1 - w0);
    r = count > 0 ? r / (float) count : 0.0f;
  } else if (g->type == HY_POOL_LP) {
    r = hy_cuda_root_p (r, g->p_value);
  }
  return r;
}

#endif /* HY_CUDA_POOL_CUH */
