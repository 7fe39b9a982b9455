/*
 * pool.cu — CUDA kernel of Pooling (max, avg, sum, lp; 1-D to 3-D and
 * global): one thread per output element walking its window (pool.cuh),
 * our own rather than cuDNN's so that MXNet's padding and averaging rules
 * match the CPU's exactly.
 */
#include "kernels/cuda/cuda-kernel.h"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/pool.cuh"

extern "C" void hy_cuda_pooling (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

static __global__ void
pool_kernel (hy_cuda_pool_args g, const float *__restrict__ x,
    float *__restrict__ y, int64_t n)
{
  HY_CUDA_GRID_LOOP (i, n)
    y[i] = hy_cuda_pool_one (&g, x, i);
}

extern "C" void
hy_cuda_pooling (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const int64_t n = hy_shape_numel (&out[0]->shape);
  if (n == 0)
    return;
  const hy_cuda_pool_args g = hy_cuda_pool_plan (
      (const hy_pool_params *) params, &in[0]->shape, &out[0]->shape);
  pool_kernel<<<hy_cuda_blocks (ctx, n), HY_CUDA_THREADS, 0,
      ctx->stream>>> (g, in[0]->data, out[0]->data, n);
  HY_CUDA_CHECK_LAUNCH (ctx);
}
