/*
 * upsampling.cuh — the index arithmetic of nearest UpSampling on the GPU
 * (upsampling.cu), shared with tests/cuda/emulate-shape.cu.
 *
 * One launch per input, in input order, as the CPU kernel
 * (kernels/cpu/upsampling.c) takes them: element i of input k's region of
 * the output (its channels when concatenating, the whole output when
 * summing) reads input k at (y / f, x / f), f being the output's height
 * over the input's; the first input's launch writes, a summing input's
 * after it adds, so each output is the same float sum in the same order.
 */
#ifndef HY_CUDA_UPSAMPLING_CUH
#define HY_CUDA_UPSAMPLING_CUH

#include "kernels/cuda/launch.cuh"
#include "hybrid-tensor.h"
#include "kernels/params/nn.h"

typedef struct hy_cuda_upsampling_args {
  int64_t channels;             /* the input's */
  int64_t first;                /* its first output channel (concat) */
  int64_t out_channels;
  int64_t oh, ow, iw, f;
  bool add;                     /* a summing input after the first */
} hy_cuda_upsampling_args;

/* Input k of n: its launch's arguments, and how many outputs it writes. */
static inline hy_cuda_upsampling_args
hy_cuda_upsampling_plan (const hy_upsampling_params *p,
    const hy_tensor *const *in, int k, const hy_tensor *out, int64_t *n)
{
  const hy_shape *x = &in[k]->shape, *y = &out->shape;
  hy_cuda_upsampling_args a = {};
  a.channels = x->dims[1];
  for (int i = 0; i < k && !p->sum; i++)
    a.first += in[i]->shape.dims[1];
  a.out_channels = y->dims[1];
  a.oh = y->dims[2];
  a.ow = y->dims[3];
  a.iw = x->dims[3];
  a.f = x->dims[2] > 0 ? y->dims[2] / x->dims[2] : 1;
  a.add = p->sum && k > 0;
  *n = y->dims[0] * a.channels * a.oh * a.ow;
  return a;
}

/* Element i of the launch: its input offset, and (*dst) its output's. */
HY_CUDA_HD int64_t
hy_cuda_upsampling_src (const hy_cuda_upsampling_args *a, int64_t i,
    int64_t *dst)
{
  const int64_t x = i % a->ow, y = i / a->ow % a->oh;
  const int64_t plane = i / (a->ow * a->oh);     /* n · channels + c */
  const int64_t c = plane % a->channels, n = plane / a->channels;
  *dst = ((n * a->out_channels + a->first + c) * a->oh + y) * a->ow + x;
  const int64_t ih = a->oh / a->f;
  return (plane * ih + y / a->f) * a->iw + x / a->f;
}

#endif /* HY_CUDA_UPSAMPLING_CUH */
