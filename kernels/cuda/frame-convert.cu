/*
 * frame-convert.cu — a frame in device memory to the model's input tensor
 * in one launch (frame-convert.h), one thread per output pixel.
 *
 * The placement, the YUV coefficients and the normalisation are the
 * plan's (kernels/frame/frame-desc.c), the very numbers the CPU uses; the
 * per-pixel work is hy_cuda_frame_pixel.
 */
#include "hybrid.h"
#include "kernels/cuda/frame-convert.h"

__global__ static void
frame_convert_kernel (hy_frame_desc d, hy_cuda_frame f, float *out,
    int64_t n)
{
  HY_CUDA_GRID_LOOP (i, n)
    hy_cuda_frame_pixel (&d, &f, i, out);
}

void
hy_cuda_frame_convert (hy_cuda_ctx *ctx, const hy_frame_desc *d,
    const uint8_t *const planes[3], const int strides[3], float *out)
{
  hy_cuda_frame f;
  for (int i = 0; i < 3; i++) {
    f.plane[i] = planes[i];
    f.stride[i] = strides[i];
  }
  const int64_t n = (int64_t) d->config.dst_width * d->config.dst_height;
  frame_convert_kernel<<<hy_cuda_blocks (ctx, n), HY_CUDA_THREADS, 0,
      ctx->stream>>> (*d, f, out, n);
  HY_CUDA_CHECK_LAUNCH (ctx);
}
