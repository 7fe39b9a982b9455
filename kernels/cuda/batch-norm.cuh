/*
 * batch-norm.cuh — the element functions of the CUDA BatchNorm kernel
 * (batch-norm.cu), apart so that tests/cuda/emulate-activation.cu can run
 * them on the host.
 *
 * Inference with the moving statistics, kernels/cpu/batch-norm.c's
 * arithmetic: scale = gamma / sqrt(var + eps) (gamma read as 1 under
 * fix_gamma), y = (x − mean) · scale + beta along the channel axis.  The
 * data is read as (outer, channels, inner); each element works out its
 * channel's scale itself, which is cheap next to the memory traffic and
 * needs no scratch between launches.
 *
 * _contrib_SyncBatchNorm keeps its own order, as on the CPU:
 * y = gamma / sqrt(var + eps) · x + (beta − gamma · mean / sqrt(var + eps)).
 */
#ifndef HY_CUDA_BATCH_NORM_CUH
#define HY_CUDA_BATCH_NORM_CUH

#include <math.h>
#include <stdint.h>

#include "kernels/cuda/launch.cuh"
#include "kernels/params/nn.h"
#include "hybrid-tensor.h"

/* in: data, gamma, beta, moving_mean, moving_var. */
typedef struct hy_cuda_batch_norm_args {
  const float *x, *gamma, *beta, *mean, *var;
  float *o;
  int64_t channels, inner;
  float eps;
  bool fix_gamma;
  bool sync;                    /* _contrib_SyncBatchNorm's arithmetic */
} hy_cuda_batch_norm_args;

static inline hy_cuda_batch_norm_args
hy_cuda_batch_norm_plan (const hy_batch_norm_params *p,
    const hy_tensor *const *in, hy_tensor *o)
{
  const hy_shape *xs = &in[0]->shape;
  const int axis = p->axis < 0 ? p->axis + xs->ndim : p->axis;
  hy_cuda_batch_norm_args a = {
    in[0]->data, in[1]->data, in[2]->data, in[3]->data, in[4]->data,
    o->data, xs->dims[axis], 1, p->eps, p->fix_gamma,
    p->op == HY_OP_SYNC_BATCH_NORM,
  };
  for (int i = axis + 1; i < xs->ndim; i++)
    a.inner *= xs->dims[i];
  return a;
}

/* 1 / sqrt(var + eps): the scale without gamma, and MXNet's inference
 * "var" output. */
HY_CUDA_HD float
hy_cuda_batch_norm_inv_std (const hy_cuda_batch_norm_args *a, int64_t c)
{
  return 1.0f / sqrtf (a->var[c] + a->eps);
}

HY_CUDA_HD float
hy_cuda_batch_norm_at (const hy_cuda_batch_norm_args *a, int64_t i)
{
  const int64_t c = (i / a->inner) % a->channels;
  if (a->sync) {
    const float slope = a->fix_gamma ? 1.0f : a->gamma[c];
    const float std = sqrtf (a->var[c] + a->eps);
    return slope / std * a->x[i] + (a->beta[c] - slope * a->mean[c] / std);
  }
  const float inv_std = hy_cuda_batch_norm_inv_std (a, c);
  const float scale = a->fix_gamma ? inv_std : a->gamma[c] * inv_std;
  return (a->x[i] - a->mean[c]) * scale + a->beta[c];
}

#endif /* HY_CUDA_BATCH_NORM_CUH */
