/*
 * adaptive-pool.cuh — _contrib_AdaptiveAvgPooling2D on the GPU
 * (adaptive-pool.cu), one thread per output cell; shared with
 * tests/cuda/emulate-vision.cu.
 *
 * Cell (i, j) of an (oh, ow) map averages input rows
 * [floor(i·H / oh), ceil((i + 1)·H / oh)) by the matching columns, the
 * bounds computed in float, the sum in float in row order, divided by the
 * width and then the height: the CPU kernel's steps
 * (kernels/cpu/adaptive-pool.c).
 */
#ifndef HY_CUDA_ADAPTIVE_POOL_CUH
#define HY_CUDA_ADAPTIVE_POOL_CUH

#include <math.h>

#include "kernels/cuda/launch.cuh"
#include "hybrid-tensor.h"

typedef struct hy_cuda_apool_args {
  int64_t ih, iw, oh, ow;
} hy_cuda_apool_args;

static inline hy_cuda_apool_args
hy_cuda_apool_plan (const hy_shape *x, const hy_shape *y)
{
  hy_cuda_apool_args a = { x->dims[2], x->dims[3], y->dims[2], y->dims[3] };
  return a;
}

HY_CUDA_HD int64_t
hy_cuda_apool_start (int64_t i, int64_t out, int64_t in)
{
  return (int64_t) floorf ((float) (i * in) / (float) out);
}

HY_CUDA_HD int64_t
hy_cuda_apool_end (int64_t i, int64_t out, int64_t in)
{
  return (int64_t) ceilf ((float) ((i + 1) * in) / (float) out);
}

HY_CUDA_HD float
hy_cuda_apool_one (const hy_cuda_apool_args *a, const float *x, int64_t i)
{
  const int64_t ow = i % a->ow, oh = i / a->ow % a->oh;
  const int64_t plane = i / (a->ow * a->oh);
  const int64_t h0 = hy_cuda_apool_start (oh, a->oh, a->ih);
  const int64_t kh = hy_cuda_apool_end (oh, a->oh, a->ih) - h0;
  const int64_t w0 = hy_cuda_apool_start (ow, a->ow, a->iw);
  const int64_t kw = hy_cuda_apool_end (ow, a->ow, a->iw) - w0;
  const float *xp = x + plane * a->ih * a->iw;
  float sum = 0.0f;
  for (int64_t h = 0; h < kh; h++)
    for (int64_t w = 0; w < kw; w++)
      sum += xp[(h0 + h) * a->iw + w0 + w];
  return sum / (float) kw / (float) kh;
}

#endif /* HY_CUDA_ADAPTIVE_POOL_CUH */
