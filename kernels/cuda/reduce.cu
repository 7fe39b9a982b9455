/*
 * reduce.cu — CUDA kernels of sum, mean, max, min, prod and argmax,
 * argmin: one thread per output element folding its values serially
 * (reduce.cuh).  Inference reduces little (a classifier's row, a pooled
 * map), so the CPU's order and double accumulators are kept rather than a
 * tree reduction.
 */
#include "kernels/cuda/cuda-kernel.h"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/reduce.cuh"

extern "C" {
void hy_cuda_reduce (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
void hy_cuda_arg_reduce (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
}

static __global__ void
reduce_kernel (hy_cuda_reduce_args r, const float *__restrict__ x,
    float *__restrict__ y, int64_t n)
{
  HY_CUDA_GRID_LOOP (i, n)
    y[i] = hy_cuda_reduce_one (&r, x, i);
}

extern "C" void
hy_cuda_reduce (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const int64_t n = hy_shape_numel (&out[0]->shape);
  if (n == 0)
    return;
  const hy_cuda_reduce_args r = hy_cuda_reduce_plan (
      (const hy_reduce_params *) params, &in[0]->shape);
  reduce_kernel<<<hy_cuda_blocks (ctx, n), HY_CUDA_THREADS, 0,
      ctx->stream>>> (r, in[0]->data, out[0]->data, n);
  HY_CUDA_CHECK_LAUNCH (ctx);
}

static __global__ void
arg_reduce_kernel (hy_cuda_arg_reduce_args a, const float *__restrict__ x,
    float *__restrict__ y, int64_t n)
{
  HY_CUDA_GRID_LOOP (i, n)
    y[i] = hy_cuda_arg_reduce_one (&a, x, i);
}

extern "C" void
hy_cuda_arg_reduce (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const int64_t n = hy_shape_numel (&out[0]->shape);
  if (n == 0)
    return;
  const hy_cuda_arg_reduce_args a = hy_cuda_arg_reduce_plan (
      (const hy_arg_reduce_params *) params, &in[0]->shape);
  arg_reduce_kernel<<<hy_cuda_blocks (ctx, n), HY_CUDA_THREADS, 0,
      ctx->stream>>> (a, in[0]->data, out[0]->data, n);
  HY_CUDA_CHECK_LAUNCH (ctx);
}
