/*
 * bilinear-resize.cu — CUDA kernel of _contrib_BilinearResize2D: one
 * thread per output pixel (bilinear-resize.cuh); equal sizes copy, as on
 * the CPU.
 */
#include "kernels/cuda/cuda-kernel.h"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/bilinear-resize.cuh"

extern "C" void hy_cuda_bilinear_resize (hy_cuda_ctx *ctx,
    const void *params, const hy_tensor *const *in, int n_in,
    hy_tensor *const *out, int n_out);

static __global__ void
resize_kernel (hy_cuda_resize_args a, const float *__restrict__ x,
    float *__restrict__ y, int64_t n)
{
  HY_CUDA_GRID_LOOP (i, n)
    y[i] = hy_cuda_resize_one (&a, x, i);
}

extern "C" void
hy_cuda_bilinear_resize (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const int64_t n = hy_shape_numel (&out[0]->shape);
  if (n == 0)
    return;
  const hy_cuda_resize_args a = hy_cuda_resize_plan (
      (const hy_bilinear_resize_params *) params, &in[0]->shape,
      &out[0]->shape);
  if (a.ih == a.oh && a.iw == a.ow) {
    hy_cuda_copy_floats (ctx, out[0]->data, in[0]->data, n);
    return;
  }
  if (hy_shape_numel (&in[0]->shape) == 0)
    return;
  resize_kernel<<<hy_cuda_blocks (ctx, n), HY_CUDA_THREADS, 0,
      ctx->stream>>> (a, in[0]->data, out[0]->data, n);
  HY_CUDA_CHECK_LAUNCH (ctx);
}
