/*
 * tile.cu — CUDA kernels of tile, repeat and _arange: one thread per
 * output element (tile.cuh).
 */
#include "kernels/cuda/cuda-kernel.h"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/tile.cuh"

extern "C" {
void hy_cuda_tile (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
void hy_cuda_repeat (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
void hy_cuda_arange (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
}

extern "C" void
hy_cuda_tile (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const int64_t n = hy_shape_numel (&out[0]->shape);
  if (n == 0)
    return;
  const hy_cuda_tile_args t = hy_cuda_tile_plan (
      (const hy_tile_params *) params, &in[0]->shape, &out[0]->shape);
  hy_cuda_gather<hy_cuda_tile_args, hy_cuda_tile_src> (ctx, &t, in[0]->data,
      out[0]->data, n);
}

extern "C" void
hy_cuda_repeat (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const int64_t n = hy_shape_numel (&out[0]->shape);
  if (n == 0)
    return;
  const hy_cuda_repeat_args r = hy_cuda_repeat_plan (
      (const hy_repeat_params *) params, &in[0]->shape);
  hy_cuda_gather<hy_cuda_repeat_args, hy_cuda_repeat_src> (ctx, &r,
      in[0]->data, out[0]->data, n);
}

static __global__ void
arange_kernel (hy_cuda_arange_args a, float *__restrict__ y, int64_t n)
{
  HY_CUDA_GRID_LOOP (i, n)
    y[i] = hy_cuda_arange_value (&a, i);
}

extern "C" void
hy_cuda_arange (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const int64_t n = hy_shape_numel (&out[0]->shape);
  if (n == 0)
    return;
  const hy_cuda_arange_args a = hy_cuda_arange_plan (
      (const hy_arange_params *) params);
  arange_kernel<<<hy_cuda_blocks (ctx, n), HY_CUDA_THREADS, 0,
      ctx->stream>>> (a, out[0]->data, n);
  HY_CUDA_CHECK_LAUNCH (ctx);
}
