/*
 * l2-norm.cu — CUDA kernel of L2Normalization: one block per group, its
 * norm reduced in shared memory and applied by the same block
 * (l2-norm.cuh).
 */
#include "kernels/cuda/cuda-kernel.h"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/l2-norm.cuh"

extern "C" void hy_cuda_l2_normalization (hy_cuda_ctx *ctx,
    const void *params, const hy_tensor *const *in, int n_in,
    hy_tensor *const *out, int n_out);

/* At most this many blocks; each loops over the groups (a grid stride). */
#define L2_MAX_BLOCKS 65535

static __global__ void
l2_kernel (hy_cuda_l2_args a, const float *__restrict__ x,
    float *__restrict__ y)
{
  __shared__ double part[HY_CUDA_THREADS];
  __shared__ float norm;
  const int t = threadIdx.x;
  for (int64_t g = blockIdx.x; g < a.groups; g += gridDim.x) {
    part[t] = hy_cuda_l2_partial (&a, x, g, t, HY_CUDA_THREADS);
    __syncthreads ();
    /* Pairwise, the same order as the emulation's. */
    for (int half = HY_CUDA_THREADS / 2; half > 0; half /= 2) {
      if (t < half)
        part[t] += part[t + half];
      __syncthreads ();
    }
    if (t == 0)
      norm = hy_cuda_l2_norm (&a, part[0]);
    __syncthreads ();
    for (int64_t k = t; k < a.per_group; k += HY_CUDA_THREADS) {
      const int64_t at = hy_cuda_l2_at (&a, g, k);
      y[at] = x[at] / norm;
    }
    __syncthreads ();           /* part[] and norm are reused */
  }
}

extern "C" void
hy_cuda_l2_normalization (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  if (hy_shape_numel (&in[0]->shape) == 0)
    return;
  const hy_cuda_l2_args a = hy_cuda_l2_plan (
      (const hy_l2_normalization_params *) params, &in[0]->shape);
  const unsigned blocks = (unsigned) (a.groups < L2_MAX_BLOCKS ? a.groups
      : L2_MAX_BLOCKS);
  l2_kernel<<<blocks, HY_CUDA_THREADS, 0, ctx->stream>>> (a, in[0]->data,
      out[0]->data);
  HY_CUDA_CHECK_LAUNCH (ctx);
}
