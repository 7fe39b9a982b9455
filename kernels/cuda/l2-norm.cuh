/*
 * l2-norm.cuh — L2Normalization on the GPU (l2-norm.cu), shared with
 * tests/cuda/emulate-vision.cu.
 *
 * The input is viewed as (n, c, s) as on the CPU (kernels/cpu/l2-norm.c);
 * a group is one sample (instance), one sample's column across channels
 * (channel) or one channel's plane (spatial).  One block per group: each
 * thread sums the squares of the group's elements t, t + threads, … in
 * double, the block adds those partial sums pairwise, and every thread
 * then divides its elements by sqrt(sum + eps) taken in float.  The CPU
 * sums in another order, but in double: the norms agree to within a
 * rounding of the float result.  No scratch: the norm never leaves the
 * block.
 */
#ifndef HY_CUDA_L2_NORM_CUH
#define HY_CUDA_L2_NORM_CUH

#include <math.h>

#include "kernels/cuda/launch.cuh"
#include "hybrid-tensor.h"
#include "kernels/params/nn.h"

typedef struct hy_cuda_l2_args {
  int64_t c, s;
  int64_t groups, per_group;
  float eps;
  int mode;                     /* hy_l2_norm_mode */
} hy_cuda_l2_args;

static inline hy_cuda_l2_args
hy_cuda_l2_plan (const hy_l2_normalization_params *p, const hy_shape *x)
{
  hy_cuda_l2_args a = {};
  const int64_t n = x->dims[0];
  a.c = x->ndim > 1 ? x->dims[1] : 1;
  a.s = 1;
  for (int i = 2; i < x->ndim; i++)
    a.s *= x->dims[i];
  a.eps = p->eps;
  a.mode = p->mode;
  switch (p->mode) {
    case HY_L2_NORM_CHANNEL:
      a.groups = n * a.s;
      a.per_group = a.c;
      break;
    case HY_L2_NORM_SPATIAL:
      a.groups = n * a.c;
      a.per_group = a.s;
      break;
    default:
      a.groups = n;
      a.per_group = a.c * a.s;
      break;
  }
  return a;
}

/* Where element k of group g lies. */
HY_CUDA_HD int64_t
hy_cuda_l2_at (const hy_cuda_l2_args *a, int64_t g, int64_t k)
{
  if (a->mode == HY_L2_NORM_CHANNEL)
    return g / a->s * a->c * a->s + g % a->s + k * a->s;
  return g * a->per_group + k;
}

/* Thread t of `threads`' part of group g's sum of squares.  (double) v·v
 * is exact in double, so an FMA gives the same sums. */
HY_CUDA_HD double
hy_cuda_l2_partial (const hy_cuda_l2_args *a, const float *x, int64_t g,
    int t, int threads)
{
  double sum = 0.0;
  for (int64_t k = t; k < a->per_group; k += threads) {
    const double v = x[hy_cuda_l2_at (a, g, k)];
    sum += v * v;
  }
  return sum;
}

HY_CUDA_HD float
hy_cuda_l2_norm (const hy_cuda_l2_args *a, double sum)
{
  return sqrtf ((float) sum + a->eps);
}

#endif /* HY_CUDA_L2_NORM_CUH */
