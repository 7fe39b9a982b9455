/*
 * pad.cu — CUDA kernel of Pad: one thread per output element (pad.cuh).
 */
#include "kernels/cuda/cuda-kernel.h"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/pad.cuh"

extern "C" {
void hy_cuda_pad (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
}

static __global__ void
pad_kernel (hy_cuda_pad_args a, const float *__restrict__ x,
    float *__restrict__ y, int64_t n)
{
  HY_CUDA_GRID_LOOP (i, n)
    y[i] = hy_cuda_pad_at (&a, x, i);
}

extern "C" void
hy_cuda_pad (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const int64_t n = hy_shape_numel (&out[0]->shape);
  if (n == 0)
    return;
  const hy_cuda_pad_args a = hy_cuda_pad_plan (
      (const hy_pad_params *) params, &in[0]->shape, &out[0]->shape);
  pad_kernel<<<hy_cuda_blocks (ctx, n), HY_CUDA_THREADS, 0, ctx->stream>>> (
      a, in[0]->data, out[0]->data, n);
  HY_CUDA_CHECK_LAUNCH (ctx);
}
