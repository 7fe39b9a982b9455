/*
 * multibox-prior.cu — CUDA kernel of _contrib_MultiBoxPrior: one thread
 * per output coordinate (multibox-prior.cuh).
 */
#include "kernels/cuda/cuda-kernel.h"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/multibox-prior.cuh"

extern "C" void hy_cuda_multibox_prior (hy_cuda_ctx *ctx,
    const void *params, const hy_tensor *const *in, int n_in,
    hy_tensor *const *out, int n_out);

static __global__ void
prior_kernel (hy_cuda_prior_args a, float *__restrict__ y, int64_t n)
{
  HY_CUDA_GRID_LOOP (i, n)
    y[i] = hy_cuda_prior_one (&a, i);
}

extern "C" void
hy_cuda_multibox_prior (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const int64_t n = hy_shape_numel (&out[0]->shape);
  if (n == 0)
    return;
  const hy_cuda_prior_args a = hy_cuda_prior_plan (
      (const hy_multibox_prior_params *) params, &in[0]->shape);
  prior_kernel<<<hy_cuda_blocks (ctx, n), HY_CUDA_THREADS, 0,
      ctx->stream>>> (a, out[0]->data, n);
  HY_CUDA_CHECK_LAUNCH (ctx);
}
