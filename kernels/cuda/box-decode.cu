/*
 * box-decode.cu — CUDA kernel of _contrib_box_decode: one thread per box
 * (box-decode.cuh).
 */
#include "kernels/cuda/cuda-kernel.h"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/box-decode.cuh"

extern "C" void hy_cuda_box_decode (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

static __global__ void
decode_kernel (hy_cuda_decode_args a, const float *__restrict__ x,
    const float *__restrict__ anchors, float *__restrict__ y, int64_t n)
{
  HY_CUDA_GRID_LOOP (i, n)
    hy_cuda_decode_box (&a, x, anchors, i, y + i * 4);
}

extern "C" void
hy_cuda_box_decode (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_shape *s = &in[0]->shape;
  const int64_t boxes = s->dims[0] * s->dims[1];
  if (boxes == 0)
    return;
  const hy_cuda_decode_args a = hy_cuda_decode_plan (
      (const hy_box_decode_params *) params, s);
  decode_kernel<<<hy_cuda_blocks (ctx, boxes), HY_CUDA_THREADS, 0,
      ctx->stream>>> (a, in[0]->data, in[1]->data, out[0]->data, boxes);
  HY_CUDA_CHECK_LAUNCH (ctx);
}
