/*
 * pad.cuh — the index arithmetic of Pad on the GPU (pad.cu), shared with
 * tests/cuda/emulate-shape.cu: each output element maps its position on
 * every padded axis to the input's with hy_pad_source, the CPU kernel's
 * own rule (kernels/params/shape.h), or takes the constant.
 */
#ifndef HY_CUDA_PAD_CUH
#define HY_CUDA_PAD_CUH

#include "kernels/cuda/launch.cuh"
#include "hybrid-tensor.h"
#include "kernels/params/shape.h"

typedef struct hy_cuda_pad_args {
  int nd;
  hy_pad_mode mode;
  float value;
  int64_t out[HY_MAX_DIMS];
  int64_t in[HY_MAX_DIMS];
  int64_t before[HY_MAX_DIMS];  /* 0 on the batch and channel axes */
} hy_cuda_pad_args;

static inline hy_cuda_pad_args
hy_cuda_pad_plan (const hy_pad_params *p, const hy_shape *in,
    const hy_shape *out)
{
  hy_cuda_pad_args a = {};
  a.nd = out->ndim;
  a.mode = p->mode;
  a.value = p->value;
  for (int d = 0; d < a.nd; d++) {
    a.out[d] = out->dims[d];
    a.in[d] = in->dims[d];
    a.before[d] = d < 2 ? 0 : p->before[d];
  }
  return a;
}

HY_CUDA_HD float
hy_cuda_pad_at (const hy_cuda_pad_args *a, const float *x, int64_t i)
{
  int64_t src = 0, stride = 1;
  for (int d = a->nd - 1; d >= 0; d--) {
    const int64_t o = i % a->out[d];
    i /= a->out[d];
    const int64_t s = hy_pad_source (a->mode, o, a->before[d], a->in[d]);
    if (s < 0)
      return a->value;
    src += s * stride;
    stride *= a->in[d];
  }
  return x[src];
}

#endif /* HY_CUDA_PAD_CUH */
